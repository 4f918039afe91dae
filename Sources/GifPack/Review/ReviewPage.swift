import Foundation
import GifPackSystem

/// A release review: a static page, readable from `file://` and from any static host, that shows
/// a person what a new version of the packs changes before it ships.
///
/// `index.html` holds the summary (versions, sequence, signer, expiry, counts, bytes per pack
/// before and after, what an app's upgrade downloads) and the first tiles of each section: added,
/// changed (before and after side by side), removed, missing (no GIF: the app shows a
/// placeholder) and "look again" (``ReviewChecks``). Every section continues on its own pages
/// (`added-1.html`, …) and the gallery of the new version has pages per pack
/// (`gallery-<n>-<page>.html`, filtered by body part in the page). Images are `img/<sha256>.gif`
/// (``ReviewImages``); one stylesheet `review.css`; one inline script (``ReviewMarkup``).
///
/// Memory holds the two sides' exercise records (ids, names, GIF metadata) and one page's tiles;
/// pages are written as they are made, through a 64 KiB buffer. `index.html` is written last,
/// atomically: a page that fails half way leaves the last complete one.
///
/// ```swift
/// let summary = try ReviewPage.write(old: oldRelease, new: newRelease, to: "review")
/// print(summary.added, summary.changed, summary.removed)
/// ```
public enum ReviewPage {
    public struct Options: Sendable {
        /// Tiles per page of a section or of the gallery; a page of changed tiles (two pictures
        /// each) holds half as many, so every page shows about as many images.
        public var pageSize = 120
        /// Tiles of each section shown on `index.html` itself.
        public var inlineTiles = 24

        public init(pageSize: Int = 120, inlineTiles: Int = 24) {
            self.pageSize = max(1, pageSize)
            self.inlineTiles = max(0, inlineTiles)
        }
    }

    /// What the page shows, in numbers.
    public struct Summary: Sendable, Equatable {
        public var added = 0
        public var changed = 0
        public var removed = 0
        public var missing = 0
        public var flagged = 0
        /// Exercises in the new version.
        public var exercises = 0
        /// HTML files written (index.html included).
        public var pages = 0
        /// What could not be read (pack catalogs, images); also listed on the page.
        public var problems: [String] = []
    }

    /// Writes the page for `new` against `old` (nil: a first release) into `directory`, made if
    /// needed. Throws only when a file cannot be written; what cannot be read is listed on the page.
    public static func write(old: ReviewRelease?, new: ReviewRelease, to directory: String,
                             options: Options = Options()) throws -> Summary {
        try claim(directory)
        let writer = try ReviewWriter(old: old, new: new, directory: directory, options: options)
        return try writer.write()
    }
}

extension ReviewPage {
    /// Why a folder was refused for a page.
    public struct FolderRefused: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "\(TerminalText.escaped(path, maxScalars: 200)) is neither empty nor an earlier review page (no \(ReviewMarkup.stylesheetName)): "
                + "name a new folder for the page"
        }
    }

    /// A page is written only into a folder that is absent (it is made), empty, or an earlier
    /// review (it holds the stylesheet): never over an output folder, a home or a project.
    static func claim(_ directory: String) throws {
        if FileSystem.isDirectory(directory) {
            let names = try FileSystem.list(directory)
            guard names.isEmpty || names.contains(ReviewMarkup.stylesheetName) else { throw FolderRefused(path: directory) }
        }
        try FileSystem.createDirectory(directory)
    }
}

/// The sections of a review, as lists of exercise ids.
struct ReviewSections {
    var added: [String]
    var changed: [String]
    var removed: [String]
    var missing: [String]
    /// Exercise id → why it deserves a second look, in id order.
    var flagged: [(id: String, reasons: [String])]
}

/// Writes one review (``ReviewPage/write(old:new:to:options:)``).
final class ReviewWriter {
    let old: ReviewRelease?
    let new: ReviewRelease
    let directory: String
    let options: ReviewPage.Options
    let images: ReviewImages
    let before: ReviewExercises
    let after: ReviewExercises
    let diff: IndexDiff
    private(set) var sections = ReviewSections(added: [], changed: [], removed: [], missing: [], flagged: [])
    private(set) var pages = 0

    init(old: ReviewRelease?, new: ReviewRelease, directory: String, options: ReviewPage.Options) throws {
        self.old = old
        self.new = new
        self.directory = directory
        self.options = options
        images = try ReviewImages(directory: directory)
        before = old.map(ReviewExercises.init) ?? ReviewExercises()
        after = ReviewExercises(new)
        let empty = PackIndex(generator: "", source: new.index.source, packs: [])
        diff = IndexDiff(old: old?.index ?? empty, new: new.index)
    }

    func write() throws -> ReviewPage.Summary {
        sections = ReviewSections(added: diff.added, changed: diff.changed, removed: diff.removed,
                                  missing: after.byID.values.filter { $0.gifSHA256 == nil }.map(\.id).sorted(),
                                  flagged: checkNewGIFs())
        try FileSystem.writeAtomically(Array(ReviewMarkup.stylesheet.utf8), to: "\(directory)/\(ReviewMarkup.stylesheetName)")
        for section in ReviewSection.allCases { try writeList(section) }
        for (number, pack) in new.index.packs.enumerated() { try writeGallery(pack, number: number + 1) }
        try writeIndex()
        var summary = ReviewPage.Summary()
        summary.added = sections.added.count
        summary.changed = sections.changed.count
        summary.removed = sections.removed.count
        summary.missing = sections.missing.count
        summary.flagged = sections.flagged.count
        summary.exercises = after.byID.count
        summary.pages = pages
        summary.problems = problems
        return summary
    }

    var problems: [String] { before.problems + after.problems + images.unreadable }

    /// Runs ``ReviewChecks`` over every GIF of the new version, once per distinct GIF.
    private func checkNewGIFs() -> [(id: String, reasons: [String])] {
        let checks = ReviewChecks(index: new.index)
        var byGIF: [String: [String]] = [:]
        var flagged: [(id: String, reasons: [String])] = []
        for id in after.byID.keys.sorted() {
            guard let exercise = after.byID[id], let hash = exercise.gifSHA256, let pack = new.index.pack(named: exercise.pack) else { continue }
            if byGIF[hash] == nil {
                let gif = try? new.content.gif(sha256: hash, in: pack)
                let size = pack.posters?.sizes.min()
                let poster = size.flatMap { try? new.content.poster(size: $0, gifSHA256: hash, in: pack) }
                byGIF[hash] = checks.reasons(for: exercise, gifBytes: gif, posterBytes: poster)
            }
            if let reasons = byGIF[hash], !reasons.isEmpty { flagged.append((id, reasons)) }
        }
        return flagged
    }

    /// One side of a tile.
    func side(_ label: String, _ exercise: ReviewExercise?, of release: ReviewRelease?, animate: Bool = true) -> ReviewMarkup.Side {
        guard let exercise, let release else { return ReviewMarkup.Side(label: label, note: "not in this version") }
        guard exercise.gifSHA256 != nil else {
            let reason = release.missingReasons[exercise.id].map { " (\($0))" } ?? ""
            return ReviewMarkup.Side(label: label, note: "no GIF: the app shows a placeholder\(reason)")
        }
        let poster = images.poster(exercise, of: release)
        let gif = animate || poster == nil ? images.gif(exercise, of: release) : nil
        return ReviewMarkup.Side(label: label, gif: gif, poster: poster, blurHash: images.blurHash(exercise.gif),
                                 metadata: exercise.gif, note: gif == nil && poster == nil ? "picture not at hand" : nil)
    }

    /// The tile of an exercise in a section.
    func tile(_ section: ReviewSection, id: String, reasons: [String] = []) -> String {
        let oldExercise = before.byID[id]
        let newExercise = after.byID[id]
        guard let shown = newExercise ?? oldExercise else { return "" }
        let sides: [ReviewMarkup.Side] = switch section {
        case .changed: [side("before", oldExercise, of: old), side("after", newExercise, of: new)]
        case .removed: [side("before", oldExercise, of: old)]
        case .added, .missing, .flagged: [side("after", newExercise, of: new)]
        }
        return ReviewMarkup.tile(kind: section.rawValue, exercise: shown, sides: sides, reasons: reasons)
    }

    func ids(_ section: ReviewSection) -> [String] {
        switch section {
        case .added: sections.added
        case .changed: sections.changed
        case .removed: sections.removed
        case .missing: sections.missing
        case .flagged: sections.flagged.map(\.id)
        }
    }

    func tiles(_ section: ReviewSection, _ range: Range<Int>) -> [(html: String, bodyPart: String?)] {
        let list = ids(section)
        return range.map { position in
            let id = list[position]
            let reasons = section == .flagged ? sections.flagged[position].reasons : []
            return (tile(section, id: id, reasons: reasons), (after.byID[id] ?? before.byID[id])?.bodyPart)
        }
    }

    /// A section's own pages, `<section>-<n>.html`.
    private func writeList(_ section: ReviewSection) throws {
        let total = ids(section).count
        let pageSize = section == .changed ? max(1, options.pageSize / 2) : options.pageSize
        let pageCount = (total + pageSize - 1) / pageSize
        for page in stride(from: 1, through: pageCount, by: 1) {
            let range = ((page - 1) * pageSize)..<min(total, page * pageSize)
            let tiles = tiles(section, range)
            try writePage(section.pageName(page), title: "\(section.title) — page \(page)") { sink throws(FileSystemError) in
                try sink.append("<h1>\(section.title) <span class=\"count\">\(total)</span></h1>\n")
                let pager = ReviewMarkup.pager(page: page, pages: pageCount, total: total, pageSize: pageSize, name: section.pageName)
                try sink.append(pager + ReviewMarkup.bodyFilter(Self.bodyParts(tiles.map(\.bodyPart))) + "<div class=\"grid\">\n")
                for tile in tiles { try sink.append(tile.html) }
                try sink.append("</div>\n" + pager)
            }
        }
    }

    /// The gallery of one pack of the new version, `gallery-<number>-<n>.html`.
    private func writeGallery(_ pack: PackDescription, number: Int) throws {
        let references = Array(pack.exercises)
        let pageCount = (references.count + options.pageSize - 1) / options.pageSize
        let name = { (page: Int) in "gallery-\(number)-\(page).html" }
        for page in stride(from: 1, through: pageCount, by: 1) {
            let range = ((page - 1) * options.pageSize)..<min(references.count, page * options.pageSize)
            let exercises: [ReviewExercise] = references[range].map { reference in
                var exercise = after.byID[reference.id] ?? ReviewExercise(id: reference.id, pack: pack.name)
                exercise.pack = pack.name
                exercise.gifSHA256 = reference.gif
                return exercise
            }
            try writePage(name(page), title: "Gallery of \(pack.name) — page \(page)") { sink throws(FileSystemError) in
                try sink.append("<h1>Gallery of pack <span class=\"pack\">\(HTMLText.escaped(pack.name))</span></h1>\n")
                let pager = ReviewMarkup.pager(page: page, pages: pageCount, total: references.count, pageSize: options.pageSize, name: name)
                try sink.append(pager + ReviewMarkup.bodyFilter(Self.bodyParts(exercises.map(\.bodyPart))) + "<div class=\"grid\">\n")
                for exercise in exercises {
                    try sink.append(ReviewMarkup.tile(kind: "gallery", exercise: exercise,
                                                      sides: [side("after", exercise, of: new, animate: false)]))
                }
                try sink.append("</div>\n" + pager)
            }
        }
    }

    static func bodyParts(_ parts: [String?]) -> [String] {
        Array(Set(parts.compactMap { $0 })).sorted()
    }

    /// Writes one page atomically: the head, what `body` appends, the script.
    func writePage(_ name: String, title: String, _ body: (PageSink) throws(FileSystemError) -> Void) throws(FileSystemError) {
        try FileSystem.writeAtomically(to: "\(directory)/\(name)") { file throws(FileSystemError) in
            let sink = PageSink(file)
            try sink.append(ReviewMarkup.head(title: title))
            try body(sink)
            try sink.append(ReviewMarkup.foot)
            try sink.flush()
        }
        pages += 1
    }
}

/// The sections of a review, in page order.
enum ReviewSection: String, CaseIterable {
    case added, changed, removed, missing, flagged

    var title: String {
        switch self {
        case .added: "Added"
        case .changed: "Changed"
        case .removed: "Removed"
        case .missing: "Missing GIFs"
        case .flagged: "Look again"
        }
    }

    func pageName(_ page: Int) -> String { "\(rawValue)-\(page).html" }
}

/// A page's bytes on their way to its file, 64 KiB at a time.
final class PageSink {
    private let file: NewFile
    private var buffer: [UInt8] = []

    init(_ file: NewFile) {
        self.file = file
        buffer.reserveCapacity(Self.chunk)
    }

    static let chunk = 64 * 1024

    func append(_ text: String) throws(FileSystemError) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.chunk { try flush() }
    }

    func flush() throws(FileSystemError) {
        guard !buffer.isEmpty else { return }
        try file.append(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

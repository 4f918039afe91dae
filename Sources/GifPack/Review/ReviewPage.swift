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
/// Memory does not grow with the catalogs: each pack's catalog is read one exercise at a time,
/// pages are written as they are made (through a 64 KiB buffer) and the sections' tiles wait in
/// files of their own until their pages are written (``ReviewWriter``). `index.html` is written
/// last, atomically: a page that fails half way leaves the last complete one.
///
/// ```swift
/// let summary = try ReviewPage.write(old: oldRelease, new: newRelease, to: "review")
/// print(summary.added, summary.changed, summary.removed)
/// ```
package enum ReviewPage {
    package struct Options: Sendable {
        /// Tiles per page of a section or of the gallery; a page of changed tiles (two pictures
        /// each) holds half as many, so every page shows about as many images.
        package var pageSize = 120
        /// Tiles of each section shown on `index.html` itself.
        package var inlineTiles = 24

        package init(pageSize: Int = 120, inlineTiles: Int = 24) {
            self.pageSize = max(1, pageSize)
            self.inlineTiles = max(0, inlineTiles)
        }
    }

    /// What the page shows, in numbers.
    package struct Summary: Sendable, Equatable {
        package var added = 0
        package var changed = 0
        package var removed = 0
        package var missing = 0
        package var flagged = 0
        /// Exercises in the new version.
        package var exercises = 0
        /// HTML files written (index.html included).
        package var pages = 0
        /// What could not be read (pack catalogs, images); also listed on the page.
        package var problems: [String] = []
    }

    /// Writes the page for `new` against `old` (nil: a first release) into `directory`, made if
    /// needed. Throws only when a file cannot be written; what cannot be read is listed on the page.
    package static func write(
        old: ReviewRelease?, new: ReviewRelease, to directory: String,
        options: Options = Options()
    ) throws -> Summary {
        try claim(directory)
        let writer = try ReviewWriter(old: old, new: new, directory: directory, options: options)
        return try writer.write()
    }
}

extension ReviewPage {
    /// Why a folder was refused for a page.
    package struct FolderRefused: Error, CustomStringConvertible {
        package var path: String
        package var description: String {
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

/// Writes one review (``ReviewPage/write(old:new:to:options:)``), reading each side pack by pack,
/// each pack's catalog one exercise at a time (``ReviewPackWalk``):
///
/// 1. the old version's packs that hold a removed or changed exercise: removed tiles, and what the
///    changed ones were (their pack and GIF), kept by id until the new version is read;
/// 2. the new version's packs: each pack's gallery pages, written as its catalog is read, and the
///    tiles of the exercises it is the first (by name, as ``IndexDiff`` counts them) to list —
///    added, changed, missing, look again — spooled (``TileSpool``);
/// 3. every section's pages from its spool, then `index.html`.
///
/// Memory: the two indexes (their exercise lists compact, ``ExerciseRefList``) and their
/// ``IndexDiff``, one byte per exercise of what to do with it (``ReviewRoles``, from a merge of
/// the sorted lists, in place of sets of ids), the changed exercises' old records, the checks'
/// verdicts and the images' names per GIF, and one page of tiles — never a catalog.
final class ReviewWriter {
    let old: ReviewRelease?
    let new: ReviewRelease
    let directory: String
    let options: ReviewPage.Options
    let images: ReviewImages
    let diff: IndexDiff
    private var roles: ReviewRoles
    private let checks: ReviewChecks
    private(set) var pages = 0
    private(set) var readProblems: [String] = []
    private(set) var spools: [ReviewSection: TileSpool] = [:]
    /// The changed exercises as the old version has them, by id.
    private var before: [String: ReviewExercise] = [:]
    /// The old version's GIF metadata by hash, so changed exercises that share a GIF share it.
    private var beforeGIFs: [String: GIFMetadata] = [:]
    /// The look-again verdict per pack and GIF hash (each GIF is checked once per pack).
    private var verdicts: [String: [String]] = [:]

    init(old: ReviewRelease?, new: ReviewRelease, directory: String, options: ReviewPage.Options) throws {
        self.old = old
        self.new = new
        self.directory = directory
        self.options = options
        images = try ReviewImages(directory: directory)
        let empty = PackIndex(generator: "", source: new.index.source, packs: [])
        diff = IndexDiff(old: old?.index ?? empty, new: new.index)
        roles = ReviewRoles(old: old?.index ?? empty, new: new.index)
        checks = ReviewChecks(index: new.index)
    }

    func write() throws -> ReviewPage.Summary {
        try FileSystem.writeAtomically(Array(ReviewMarkup.stylesheet.utf8), to: "\(directory)/\(ReviewMarkup.stylesheetName)")
        defer { for spool in spools.values { spool.remove() } }
        for section in ReviewSection.allCases {
            spools[section] = try TileSpool(path: FileSystem.temporaryPath(beside: "\(directory)/\(section.rawValue).tiles"))
        }
        if let old { try readOld(old) }
        try readNew()
        for section in ReviewSection.allCases { try writeList(section) }
        try writeIndex()
        var summary = ReviewPage.Summary()
        summary.added = count(.added)
        summary.changed = count(.changed)
        summary.removed = count(.removed)
        summary.missing = count(.missing)
        summary.flagged = count(.flagged)
        summary.exercises = diff.exercisesAfter
        summary.pages = pages
        summary.problems = problems
        return summary
    }

    var problems: [String] { readProblems + images.unreadable }

    func count(_ section: ReviewSection) -> Int { spools[section]?.count ?? 0 }

    /// The old version's packs holding a removed or changed exercise: removed tiles, changed records.
    private func readOld(_ old: ReviewRelease) throws {
        for (number, pack) in IndexExercises(old.index).packs.enumerated() where roles.old[number].contains(where: { $0 != .other }) {
            var position = 0
            try ReviewPackWalk.exercises(of: pack, in: old, problems: &readProblems) { exercise in
                defer { position += 1 }
                let role = roles.old[number][position]
                guard role == .removed || role == .changedBefore else { return }
                if role == .removed {
                    try spool(.removed, tile(.removed, before: exercise, after: nil), exercise)
                } else {
                    var kept = ReviewExercise(id: exercise.id, pack: pack.name, gifSHA256: exercise.gifSHA256, gif: exercise.gif)
                    if let gif = exercise.gif { kept.gif = beforeGIFs[gif.sha256, default: gif] }
                    if let gif = kept.gif, beforeGIFs[gif.sha256] == nil { beforeGIFs[gif.sha256] = gif }
                    before[exercise.id] = kept
                }
            }
        }
    }

    /// The new version's packs: galleries as they are read, and the tiles of the other sections.
    private func readNew() throws {
        let numbers = Dictionary(new.index.packs.enumerated().map { ($1.name, $0 + 1) }, uniquingKeysWith: { first, _ in first })
        for (order, pack) in IndexExercises(new.index).packs.enumerated() {
            let number = numbers[pack.name] ?? 0
            let gallery = PagedTiles(
                writer: self, total: pack.exercises.count, pageSize: options.pageSize,
                title: "Gallery of \(pack.name)",
                heading: "<h1>Gallery of pack <span class=\"pack\">\(HTMLText.escaped(pack.name))</span></h1>\n",
                name: { "gallery-\(number)-\($0).html" })
            var position = 0
            try ReviewPackWalk.exercises(of: pack, in: new, problems: &readProblems) { exercise in
                try gallery.append(
                    ReviewMarkup.tile(kind: "gallery", exercise: exercise, sides: [side("after", exercise, of: new, animate: false)]),
                    bodyPart: exercise.bodyPart)
                let role = roles.new[order][position]
                position += 1
                guard role != .other else { return }
                if role == .added { try spool(.added, tile(.added, before: nil, after: exercise), exercise) }
                if role == .changed { try spool(.changed, tile(.changed, before: before[exercise.id], after: exercise), exercise) }
                if exercise.gifSHA256 == nil { try spool(.missing, tile(.missing, before: nil, after: exercise), exercise) }
                let reasons = verdict(exercise, in: pack)
                if !reasons.isEmpty { try spool(.flagged, tile(.flagged, before: nil, after: exercise, reasons: reasons), exercise) }
            }
            try gallery.finish()
            roles.new[order] = []
        }
        before = [:]
    }

    private func spool(_ section: ReviewSection, _ html: String, _ exercise: ReviewExercise) throws(FileSystemError) {
        try spools[section]?.append(html, bodyPart: exercise.bodyPart)
    }

    /// ``ReviewChecks`` over the exercise's GIF, once per pack and GIF.
    private func verdict(_ exercise: ReviewExercise, in pack: PackDescription) -> [String] {
        guard let hash = exercise.gifSHA256 else { return [] }
        let key = "\(pack.name)\u{0}\(hash)"
        if let known = verdicts[key] { return known }
        let gif = try? new.content.gif(sha256: hash, in: pack)
        let poster = pack.posters?.sizes.min().flatMap { try? new.content.poster(size: $0, gifSHA256: hash, in: pack) }
        let reasons = checks.reasons(for: exercise, gifBytes: gif, posterBytes: poster)
        verdicts[key] = reasons
        return reasons
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
        return ReviewMarkup.Side(
            label: label, gif: gif, poster: poster, blurHash: images.blurHash(exercise.gif),
            metadata: exercise.gif, webp: images.webp(exercise, of: release),
            note: gif == nil && poster == nil ? "picture not at hand" : nil)
    }

    /// The tile of an exercise in a section: its old and new records, as the section shows them.
    func tile(_ section: ReviewSection, before: ReviewExercise?, after: ReviewExercise?, reasons: [String] = []) -> String {
        guard let shown = after ?? before else { return "" }
        let sides: [ReviewMarkup.Side] =
            switch section {
            case .changed: [side("before", before, of: old), side("after", after, of: new)]
            case .removed: [side("before", before, of: old)]
            case .added, .missing, .flagged: [side("after", after, of: new)]
            }
        return ReviewMarkup.tile(kind: section.rawValue, exercise: shown, sides: sides, reasons: reasons)
    }

    /// A section's own pages, `<section>-<n>.html`, from its spool.
    private func writeList(_ section: ReviewSection) throws(FileSystemError) {
        guard let spool = spools[section] else { return }
        try spool.close()
        let total = spool.count
        let pages = PagedTiles(
            writer: self, total: total, pageSize: section == .changed ? max(1, options.pageSize / 2) : options.pageSize,
            title: section.title, heading: "<h1>\(section.title) <span class=\"count\">\(total)</span></h1>\n",
            name: section.pageName)
        try spool.read { html, bodyPart throws(FileSystemError) in try pages.append(html, bodyPart: bodyPart) }
        try pages.finish()
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

/// What a review does with each entry of each pack's list (packs in name order, as
/// ``IndexExercises`` has them): nothing (``Role/other``: an earlier pack lists it too, or in the
/// old version, it is neither removed nor changed), or which tile it is. One byte an exercise, from
/// one merge of the two indexes' sorted lists (``IndexExercisePairs``).
struct ReviewRoles {
    enum Role: UInt8 { case other, unchanged, added, changed, removed, changedBefore }

    var old: [[Role]]
    var new: [[Role]]

    init(old: PackIndex, new: PackIndex) {
        self.old = IndexExercises(old).packs.map { Array(repeating: .other, count: $0.exercises.count) }
        self.new = IndexExercises(new).packs.map { Array(repeating: .other, count: $0.exercises.count) }
        for (before, after) in IndexExercisePairs(old: old, new: new) {
            let changed = before.flatMap { before in after.map { before.gifsDiffer(from: $0) } } ?? false
            if let after { self.new[after.pack][after.position] = before == nil ? .added : changed ? .changed : .unchanged }
            if let before, after == nil || changed { self.old[before.pack][before.position] = changed ? .changedBefore : .removed }
        }
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

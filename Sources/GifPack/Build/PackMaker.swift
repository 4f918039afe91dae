import Crypto
import Foundation

/// Turns one planned pack into a pack file in the output directory, or finds that the one written
/// before is current.
///
/// The pack's `catalog.json` is built first; its SHA-256 is the content digest. When it equals the
/// digest of a pack in a previous index (the output directory's, or `--previous-index`) whose file is
/// here at its recorded size, nothing is written and that description is kept, so an unchanged build
/// writes nothing. Otherwise the pack is assembled from the precompressed frames under a
/// temporary name and fsynced; its file name carries its version and the first 8 hex digits of its
/// SHA-256 (`packs/<name>-v<N>-<sha8>.tar.zst`). Names are immutable:
///
/// - bytes equal to a version written before (in either index or the state's history) keep that
///   version and name;
/// - anything else gets version `highest + 1`, the highest of the state's history, both indexes and
///   the pack files in `packs/`, so a lost index or cache never numbers a pack from 1 again;
/// - a file already present under the chosen name is never replaced: equal bytes are kept, different
///   bytes are a hard error naming the file (``PackMakerError/nameTaken(_:)``).
///
/// The index that points at the pack is written later, last.
///
/// ```swift
/// let maker = PackMaker(outputDirectory: "dist", frames: frames, source: source)
/// if case .assemble(let content) = try maker.decide(entry, results: results, history: history) {
///     // … the verify stage checks the frames of content.gifSizes …
///     let (description, outcome) = try maker.assemble(content, results: results)
/// }
/// ```
struct PackMaker: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let source: SourceDescription
    /// Each GIF's BlurHash and average colour (format 1.2), found in (or derived into) the cache.
    var placeholders: PlaceholderCache? = nil

    /// `written`: a new version (`published` in `report.json`, its historical word), or `unchanged`.
    enum Outcome: String { case written = "published", unchanged }

    /// What earlier builds wrote of one pack.
    struct History: Sendable {
        /// The pack in the output directory's index and in `--previous-index`, when present.
        var references: [PackDescription] = []
        /// Versions the state recorded (pack files this cache's builds wrote).
        var recorded: [WrittenPack] = []
    }

    /// What one pack holds this run, before anything is written: its exercises' GIF references,
    /// the distinct GIFs with their sizes, and each GIF's placeholder.
    struct Content: Sendable {
        var entry: PackPlan.Entry
        var history: History
        var refs: ExerciseRefList
        /// Distinct GIF hashes and their sizes: the frames the pack is assembled from.
        var gifSizes: [String: Int64]
        var previews: [String: GIFPlaceholder]
    }

    /// What the pack stage does with one pack: keep the one written before whose content it equals, or
    /// assemble a new one (after the verify stage checked the frames of its GIFs).
    enum Decision: Sendable {
        case current(PackDescription)
        case assemble(Content)

        /// The GIFs whose frames an assembly copies, with their sizes (none for a current pack).
        var gifSizes: [String: Int64] {
            if case .assemble(let content) = self { return content.gifSizes }
            return [:]
        }
    }

    /// Whether `entry` equals a pack written before (then nothing is written) or must be assembled.
    /// With such a version to compare with, catalog.json is hashed without being written: an
    /// unchanged pack (every no-change rebuild) writes nothing, and its GIFs are not looked at.
    func decide(_ entry: PackPlan.Entry, results: FetchResults, history: History) throws -> Decision {
        let content = try content(of: entry, results: results, history: history)
        if !history.references.isEmpty,
            let current = current(
                try PackCatalogWriter.digest(
                    pack: entry.spec.name, source: catalogSource,
                    sortedRows: rows(content, results: results)
                ).sha256,
                content: content)
        {
            return .current(current)
        }
        return .assemble(content)
    }

    /// Assembles and places the pack `content` describes, from the frames of its GIFs (which the
    /// verify stage checked); or finds, once catalog.json is written, that a pack written before has it.
    func assemble(_ content: Content, results: FetchResults) throws -> (PackDescription, Outcome) {
        let name = content.entry.spec.name
        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let catalogPath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).catalog.json")
        defer { FileSystem.remove(catalogPath) }
        let digest = try PackCatalogWriter.write(
            pack: name, source: catalogSource, sortedRows: rows(content, results: results),
            to: catalogPath
        ).sha256
        if let current = current(digest, content: content) { return (current, .unchanged) }

        // catalog.json is compressed into a frame file of its own before the pack is opened, and
        // copied in like the GIFs' frames: the compressor of a big catalog.json (3.4 MB of tables
        // at 100,000 exercises) is freed before the pack's hash-behind buffer is taken.
        let catalogFramePath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).catalog.zst")
        defer { FileSystem.remove(catalogFramePath) }
        let encoder = TarEntryFrameEncoder(level: frames.level, mtime: frames.mtime)
        let catalogSize = try FrameCache.writeFrameFile(at: catalogFramePath) { sink in
            try encoder.encodeFileReportingSize(name: PackCatalog.path, sourcePath: catalogPath, to: sink).size
        }
        FileSystem.remove(catalogPath)
        let (summary, version, file, outcome) = try write(content, catalogFrame: catalogFramePath, catalogSize: catalogSize)
        return (try describe(content, summary: summary, version: version, file: file, digest: digest), outcome)
    }

    /// The source as catalog.json names it (no base URL).
    private var catalogSource: SourceDescription {
        SourceDescription(kind: source.kind, baseURL: nil, resolution: source.resolution)
    }

    private func content(of entry: PackPlan.Entry, results: FetchResults, history: History) throws -> Content {
        var refs = ExerciseRefList()
        refs.reserveCapacity(entry.exercises.count)
        var distinct: [String: Int64] = [:]
        var previews: [String: GIFPlaceholder] = [:]
        try entry.exercises.forEach { exercise in
            var hash: String?
            if case .stored(let gif)? = results[exercise.id] {
                hash = gif.sha256
                distinct[gif.sha256] = gif.bytes
                if let placeholders, previews[gif.sha256] == nil {
                    let record = try placeholders.ensure(sha256: gif.sha256, blobPath: frames.layout.blobPath(sha256: gif.sha256))
                    previews[gif.sha256] = GIFPlaceholder(
                        blurHash: record.blurHash, averageColor: record.averageColor, width: gif.info.width,
                        height: gif.info.height, frames: gif.info.frameCount,
                        durationMilliseconds: gif.info.durationMilliseconds, loopCount: gif.info.loopCount)
                }
            }
            refs.append(ExerciseRef(id: exercise.id, gif: hash))
        }
        return Content(entry: entry, history: history, refs: refs, gifSizes: distinct, previews: previews)
    }

    /// The plan's exercises are in id order: catalog.json is written from them one at a time,
    /// each GIF with its BlurHash and average colour (format 1.2).
    private func rows(_ content: Content, results: FetchResults) -> PackCatalogWriter.Rows {
        let placeholderRecords = content.previews
        return { each in
            try content.entry.exercises.readingRecords.forEach { exercise in
                var metadata: GIFMetadata?
                if case .stored(let gif)? = results[exercise.id] {
                    metadata = gif.metadata
                    if let preview = placeholderRecords[gif.sha256] {
                        metadata?.blurHash = preview.blurHash
                        metadata?.averageColor = preview.averageColor
                    }
                }
                try each(PackCatalogWriter.Row(exercise: exercise, gif: metadata))
            }
        }
    }

    /// The pack written before whose catalog.json had `digest`, if its file is here at its recorded size.
    private func current(_ digest: String, content: Content) -> PackDescription? {
        guard
            var found = content.history.references
                .filter({ $0.contentDigest == digest && FileSystem.fileSize("\(outputDirectory)/\($0.file)") == $0.bytes })
                .max(by: { $0.version < $1.version })
        else { return nil }
        // Equal content digests mean equal catalog.json, which names every exercise's GIF: the
        // exercise list is this run's (the builder reads its own index without those lists).
        found.exercises = content.refs
        return found
    }

    /// Writes the pack file under a temporary name (catalog.json's frame, then every GIF's frame
    /// in hash order) and places it.
    private func write(
        _ content: Content, catalogFrame: String,
        catalogSize: Int64
    ) throws -> (PackFileSummary, version: Int, file: String, Outcome) {
        let name = content.entry.spec.name
        let temporary = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).tar.zst")
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendFrame(
                copyingFrom: catalogFrame, uncompressedLength: TarHeader.entryLength(dataSize: catalogSize),
                trustedEntry: (name: PackCatalog.path, size: catalogSize))
            let hashes = content.gifSizes.keys.sorted()
            for (position, hash) in hashes.enumerated() {
                if position == hashes.count / 2 { CrashPoint.reach(.midPack) }
                let size = content.gifSizes[hash] ?? 0
                // Every frame that enters the pack holds bytes checked against the hash naming them:
                // the verify stage made it from the blob, hashing it, or decoded and hashed a cached
                // one. A frame it did not vouch for is decoded and hashed as it is copied.
                let trusted = frames.isVerified(sha256: hash) ? (name: GIFEntry.path(forSHA256: hash), size: size) : nil
                try assembler.appendFrame(
                    copyingFrom: frames.path(sha256: hash), uncompressedLength: TarHeader.entryLength(dataSize: size),
                    trustedEntry: trusted, expectedSHA256: hash)
            }
            let summary = try assembler.finish()
            let (version, file, outcome) = try Self.place(
                temporary, summary: summary, pack: name, outputDirectory: outputDirectory,
                referenced: content.history.references.map(\.written),
                recorded: content.history.recorded)
            return (summary, version, file, outcome)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }

    /// The index's description of a pack file just written.
    private func describe(
        _ content: Content, summary: PackFileSummary, version: Int, file: String,
        digest: String
    ) throws -> PackDescription {
        guard let catalogEntry = summary.entries.first, catalogEntry.name == PackCatalog.path else {
            throw PackMakerError.unexpectedLayout(file)
        }
        let gifs = summary.entries.dropFirst().map { packed in
            let hash = String(packed.name.dropFirst("gifs/".count).dropLast(".gif".count))
            return GIFEntry(
                sha256: hash,
                location: EntryLocation(
                    path: packed.name, size: packed.size,
                    frameOffset: packed.frameOffset, frameLength: packed.frameLength),
                placeholder: content.previews[hash])
        }
        return PackDescription(
            name: content.entry.spec.name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
            entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
            catalog: EntryLocation(
                path: catalogEntry.name, size: catalogEntry.size,
                frameOffset: catalogEntry.frameOffset, frameLength: catalogEntry.frameLength),
            gifs: gifs, exerciseList: content.refs)
    }
}

/// A pack version an earlier build wrote: its version, file (relative to the output
/// directory) and the file's SHA-256.
package struct WrittenPack: Sendable, Equatable {
    package var version: Int
    package var file: String
    package var sha256: String

    package init(version: Int, file: String, sha256: String) {
        self.version = version
        self.file = file
        self.sha256 = sha256
    }
}

extension PackDescription {
    /// The version, file and SHA-256 this description names.
    var written: WrittenPack { WrittenPack(version: version, file: file, sha256: sha256) }
}

extension PosterPackDescription {
    /// The version, file and SHA-256 this description names.
    var written: WrittenPack { WrittenPack(version: version, file: file, sha256: sha256) }
}

extension PackMaker {
    /// Names an assembled pack file (pack or posters pack) and moves it into place, by the rules of
    /// the type's comment: bytes equal to a version written before (`referenced`: the indexes';
    /// `recorded`: the state's; or a file of this pack already in `packs/`) keep that version and
    /// name, anything else gets `highest + 1`; a file already under the chosen name is never
    /// replaced. Removes `temporary` in every case but a rename.
    static func place(
        _ temporary: String, summary: PackFileSummary, pack name: String, outputDirectory: String,
        referenced: [WrittenPack], recorded: [WrittenPack]
    ) throws -> (version: Int, file: String, outcome: Outcome) {
        let version: Int
        let file: String
        let outcome: Outcome
        let packFiles = try PackFileName.Listing(of: name, in: "\(outputDirectory)/packs")
        let known = referenced + recorded + (try packFiles.present(sha256: summary.sha256))
        if let same = known.first(where: { $0.sha256 == summary.sha256 && PackFileName.isPlain($0.file) }) {
            // The same bytes were written before (or renamed into place by a run killed before
            // its index): same version, same name.
            version = same.version
            file = same.file
            outcome = referenced.contains { $0.version == same.version && $0.file == same.file } ? .unchanged : .written
        } else {
            version = max(known.map(\.version).max() ?? 0, packFiles.highestVersion) + 1
            file = PackFileName.file(pack: name, version: version, sha256: summary.sha256)
            outcome = .written
        }
        let finalPath = "\(outputDirectory)/\(file)"
        CrashPoint.reach(.beforePackRename)
        if FileSystem.exists(finalPath) {
            // Never replaced: equal bytes are the same pack, different bytes a hard error.
            guard FileSystem.fileSize(finalPath) == summary.bytes, (try? StreamingSHA256.file(at: finalPath))?.sha256 == summary.sha256 else {
                throw PackMakerError.nameTaken(file)
            }
            FileSystem.remove(temporary)
        } else {
            try FileSystem.moveIntoPlace(temporary, as: finalPath)
        }
        return (version, file, outcome)
    }
}

enum PackMakerError: Error, CustomStringConvertible {
    case unexpectedLayout(String)
    case nameTaken(String)

    var description: String {
        switch self {
        case .unexpectedLayout(let file): "the assembled pack \(file) does not start with catalog.json"
        case .nameTaken(let file):
            "\(file) already exists with different bytes; a pack file's name never changes content, so index.json was not "
                + "written (if no index ever listed that file, move it away and run again)"
        }
    }
}

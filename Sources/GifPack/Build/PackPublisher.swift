import Crypto
import Foundation

/// Turns one planned pack into a published pack file, or finds that the published one is current.
///
/// The pack's `catalog.json` is built first; its SHA-256 is the content digest. When it equals the
/// digest of a pack in a previous index (the output directory's, or `--previous-index`) whose file is
/// here at its recorded size, nothing is written and that description is kept, so an unchanged build
/// republishes nothing. Otherwise the pack is assembled from the precompressed frames under a
/// temporary name and fsynced; its file name carries its version and the first 8 hex digits of its
/// SHA-256 (`packs/<name>-v<N>-<sha8>.tar.zst`). Names are immutable:
///
/// - bytes equal to a version published before (in either index or the state's history) keep that
///   version and name;
/// - anything else gets version `highest + 1`, the highest of the state's history, both indexes and
///   the pack files in `packs/`, so a lost index or cache never numbers a pack from 1 again;
/// - a file already present under the chosen name is never replaced: equal bytes are kept, different
///   bytes are a hard error naming the file (``PackPublishError/nameTaken(_:)``).
///
/// The index that points at the pack is written later, last.
///
/// ```swift
/// let publisher = PackPublisher(outputDirectory: "dist", frames: frames, source: source)
/// let (description, outcome) = try publisher.publish(entry, results: results, history: history)
/// ```
struct PackPublisher: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let source: SourceDescription
    /// Each GIF's BlurHash and average colour (format 1.2), found in (or derived into) the cache.
    var placeholders: PlaceholderCache? = nil

    enum Outcome: String { case published, unchanged }

    /// What earlier builds published of one pack.
    struct History: Sendable {
        /// The pack in the output directory's index and in `--previous-index`, when present.
        var references: [PackDescription] = []
        /// Versions the state recorded (pack files this cache's builds published).
        var recorded: [PublishedPack] = []
    }

    func publish(_ entry: PackPlan.Entry, results: FetchResults,
                 history: History) throws -> (PackDescription, Outcome) {
        var refs = ExerciseRefList()
        refs.reserveCapacity(entry.exercises.count)
        var distinct: [String: Int64] = [:]
        var previews: [String: GIFPlaceholder] = [:]
        for exercise in entry.exercises {
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
        // The plan's exercises are in id order: catalog.json is written from them one at a time,
        // each GIF with its BlurHash and average colour (format 1.2).
        let placeholderRecords = previews
        let rows = entry.exercises.readingRecords.lazy.map { exercise in
            var metadata: GIFMetadata?
            if case .stored(let gif)? = results[exercise.id] {
                metadata = gif.metadata
                if let preview = placeholderRecords[gif.sha256] {
                    metadata?.blurHash = preview.blurHash
                    metadata?.averageColor = preview.averageColor
                }
            }
            return PackCatalogWriter.Row(exercise: exercise, gif: metadata)
        }
        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let catalogSource = SourceDescription(kind: source.kind, baseURL: nil, resolution: source.resolution)
        let catalogPath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(entry.spec.name).catalog.json")
        defer { FileSystem.remove(catalogPath) }
        func current(_ digest: String) -> PackDescription? {
            guard var found = history.references
                .filter({ $0.contentDigest == digest && FileSystem.fileSize("\(outputDirectory)/\($0.file)") == $0.bytes })
                .max(by: { $0.version < $1.version }) else { return nil }
            // Equal content digests mean equal catalog.json, which names every exercise's GIF: the
            // exercise list is this run's (the builder reads its own index without those lists).
            found.exercises = refs
            return found
        }
        // With a published version to compare with, catalog.json is hashed first without being
        // written: an unchanged pack (every no-change rebuild) writes nothing.
        if !history.references.isEmpty,
           let current = current(try PackCatalogWriter.digest(pack: entry.spec.name, source: catalogSource, sortedExercises: rows).sha256) {
            return (current, .unchanged)
        }
        let digest = try PackCatalogWriter.write(pack: entry.spec.name, source: catalogSource, sortedExercises: rows,
                                                 to: catalogPath).sha256
        if let current = current(digest) { return (current, .unchanged) }

        // catalog.json is compressed into a frame file of its own before the pack is opened, and
        // copied in like the GIFs' frames: the compressor of a big catalog.json (3.4 MB of tables
        // at 100,000 exercises) is freed before the pack's hash-behind buffer is taken.
        let catalogFramePath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(entry.spec.name).catalog.zst")
        defer { FileSystem.remove(catalogFramePath) }
        let encoder = TarEntryFrameEncoder(level: frames.level, mtime: frames.mtime)
        let catalogSize = try FrameCache.writeFrameFile(at: catalogFramePath) { sink in
            try encoder.encodeFileReportingSize(name: PackCatalog.path, sourcePath: catalogPath, to: sink).size
        }
        FileSystem.remove(catalogPath)

        let temporary = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(entry.spec.name).tar.zst")
        let summary: PackFileSummary
        let version: Int
        let file: String
        let outcome: Outcome
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendFrame(copyingFrom: catalogFramePath, uncompressedLength: TarHeader.entryLength(dataSize: catalogSize),
                                      trustedEntry: (name: PackCatalog.path, size: catalogSize))
            let hashes = distinct.keys.sorted()
            for (position, hash) in hashes.enumerated() {
                if position == hashes.count / 2 { CrashPoint.reach(.midPack) }
                let size = distinct[hash]!
                let blob = frames.layout.blobPath(sha256: hash)
                let length = TarHeader.entryLength(dataSize: size)
                // Every frame that enters the pack holds bytes checked against the hash naming them:
                // a frame made now hashed the blob as it compressed it (ensureFrame), a cached one is
                // decoded and hashed before it is copied.
                try Self.checkingBlob(hash) { try frames.ensureFrame(sha256: hash, blobPath: blob, size: size) }
                let trusted = frames.wasMadeHere(sha256: hash) ? (name: GIFEntry.path(forSHA256: hash), size: size) : nil
                if case .failure(let error) = Result(catching: { () throws(PackWriteError) in
                    try assembler.appendFrame(copyingFrom: frames.path(sha256: hash), uncompressedLength: length,
                                              trustedEntry: trusted, expectedSHA256: hash)
                }) {
                    // A cached frame that does not verify (cut short by a crash: frames are not
                    // fsynced; or damaged) is compressed again from the blob.
                    guard case .invalidFrame = error else { throw error }
                    FileSystem.remove(frames.path(sha256: hash))
                    try Self.checkingBlob(hash) { try frames.ensureFrame(sha256: hash, blobPath: blob, size: size) }
                    try assembler.appendFrame(copyingFrom: frames.path(sha256: hash), uncompressedLength: length,
                                              expectedSHA256: hash)
                }
            }
            summary = try assembler.finish()
            (version, file, outcome) = try Self.place(temporary, summary: summary, pack: entry.spec.name,
                                                      outputDirectory: outputDirectory,
                                                      referenced: history.references.map(\.published),
                                                      recorded: history.recorded)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }

        guard let catalogEntry = summary.entries.first, catalogEntry.name == PackCatalog.path else {
            throw PackPublishError.unexpectedLayout(file)
        }
        let gifs = summary.entries.dropFirst().map { packed in
            let hash = String(packed.name.dropFirst("gifs/".count).dropLast(".gif".count))
            return GIFEntry(sha256: hash,
                            location: EntryLocation(path: packed.name, size: packed.size,
                                                    frameOffset: packed.frameOffset, frameLength: packed.frameLength),
                            placeholder: previews[hash])
        }
        let description = PackDescription(
            name: entry.spec.name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
            entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
            catalog: EntryLocation(path: catalogEntry.name, size: catalogEntry.size,
                                   frameOffset: catalogEntry.frameOffset, frameLength: catalogEntry.frameLength),
            gifs: gifs, exerciseList: refs)
        return (description, outcome)
    }
}

/// A pack version an earlier build published: its version, file (relative to the output
/// directory) and the file's SHA-256.
public struct PublishedPack: Sendable, Equatable {
    public var version: Int
    public var file: String
    public var sha256: String

    public init(version: Int, file: String, sha256: String) {
        self.version = version
        self.file = file
        self.sha256 = sha256
    }
}

extension PackDescription {
    /// The version, file and SHA-256 this description publishes.
    var published: PublishedPack { PublishedPack(version: version, file: file, sha256: sha256) }
}

extension PosterPackDescription {
    /// The version, file and SHA-256 this description publishes.
    var published: PublishedPack { PublishedPack(version: version, file: file, sha256: sha256) }
}

/// Pack file names: `packs/<name>-v<N>-<sha8>.tar.zst`, where `<sha8>` is the first 8 hex digits
/// of the file's SHA-256; builds before format 1.1 wrote `packs/<name>-v<N>.tar.zst`.
///
/// ```swift
/// PackFileName.file(pack: "all", version: 3, sha256: "1a2b3c4d…")   // "packs/all-v3-1a2b3c4d.tar.zst"
/// PackFileName.version(of: "all-v3-1a2b3c4d.tar.zst", pack: "all")   // 3
/// ```
enum PackFileName {
    static func file(pack: String, version: Int, sha256: String) -> String {
        "packs/\(pack)-v\(version)-\(sha256.prefix(8)).tar.zst"
    }

    /// The version of a file name of `pack` (either form), nil for any other name.
    static func version(of name: String, pack: String) -> Int? {
        guard name.hasPrefix("\(pack)-v"), name.hasSuffix(".tar.zst") else { return nil }
        let rest = name.dropFirst(pack.count + 2).dropLast(".tar.zst".count)
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), let version = Int(parts[0]),
              version > 0 else { return nil }
        if parts.count == 2 {
            guard parts[1].count == 8, parts[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        }
        return version
    }

    /// The files of one pack in `packs/`, listed once: their versions, and which of them hold given
    /// bytes. An unreadable directory is an error (``FileSystemError``, naming the directory and the
    /// system's reason), never taken for an empty one: a version present there but unseen could be
    /// numbered again.
    ///
    /// ```swift
    /// let files = try PackFileName.Listing(of: "all", in: "dist/packs")
    /// files.highestVersion                      // 3
    /// try files.present(sha256: summary.sha256) // [PublishedPack(version: 2, …)] when v2 has these bytes
    /// ```
    struct Listing {
        let directory: String
        /// File names of the pack, with their versions.
        let files: [(name: String, version: Int)]

        init(of pack: String, in directory: String) throws(FileSystemError) {
            self.directory = directory
            files = try FileSystem.list(directory).compactMap { name in
                PackFileName.version(of: name, pack: pack).map { (name, $0) }
            }
        }

        /// The highest version among the files, 0 when there is none.
        var highestVersion: Int { files.map(\.version).max() ?? 0 }

        /// The files whose name carries the first 8 digits of `sha256` and whose bytes hash to it; a
        /// file that cannot be read is an error (one removed meanwhile is skipped).
        func present(sha256: String) throws(FileSystemError) -> [PublishedPack] {
            var found: [PublishedPack] = []
            for file in files where file.name.hasSuffix("-\(sha256.prefix(8)).tar.zst") {
                let digest: String
                do { digest = try StreamingSHA256.file(at: "\(directory)/\(file.name)").sha256 } catch {
                    if error.errno == ENOENT { continue }
                    throw error
                }
                if digest == sha256 { found.append(PublishedPack(version: file.version, file: "packs/\(file.name)", sha256: sha256)) }
            }
            return found
        }
    }

    /// A `packs/…` path made of plain characters, safe to join to the output directory.
    static func isPlain(_ file: String) -> Bool {
        file.hasPrefix("packs/") && !file.dropFirst(6).contains("/") && !file.hasPrefix("packs/.")
            && file.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-/".contains($0)) }
    }
}

extension PackPublisher {
    /// Names an assembled pack file (pack or posters pack) and moves it into place, by the rules of
    /// the type's comment: bytes equal to a version published before (`referenced`: the indexes';
    /// `recorded`: the state's; or a file of this pack already in `packs/`) keep that version and
    /// name, anything else gets `highest + 1`; a file already under the chosen name is never
    /// replaced. Removes `temporary` in every case but a rename.
    static func place(_ temporary: String, summary: PackFileSummary, pack name: String, outputDirectory: String,
                      referenced: [PublishedPack], recorded: [PublishedPack]) throws -> (version: Int, file: String, outcome: Outcome) {
        let version: Int
        let file: String
        let outcome: Outcome
        let packFiles = try PackFileName.Listing(of: name, in: "\(outputDirectory)/packs")
        let known = referenced + recorded + (try packFiles.present(sha256: summary.sha256))
        if let same = known.first(where: { $0.sha256 == summary.sha256 && PackFileName.isPlain($0.file) }) {
            // The same bytes were published before (or renamed into place by a run killed before
            // its index): same version, same name.
            version = same.version
            file = same.file
            outcome = referenced.contains { $0.version == same.version && $0.file == same.file } ? .unchanged : .published
        } else {
            version = max(known.map(\.version).max() ?? 0, packFiles.highestVersion) + 1
            file = PackFileName.file(pack: name, version: version, sha256: summary.sha256)
            outcome = .published
        }
        let finalPath = "\(outputDirectory)/\(file)"
        CrashPoint.reach(.beforePackRename)
        if FileSystem.exists(finalPath) {
            // Never replaced: equal bytes are the same pack, different bytes a hard error.
            guard FileSystem.fileSize(finalPath) == summary.bytes, (try? StreamingSHA256.file(at: finalPath))?.sha256 == summary.sha256 else {
                throw PackPublishError.nameTaken(file)
            }
            FileSystem.remove(temporary)
        } else {
            try FileSystem.publish(temporary, as: finalPath)
        }
        return (version, file, outcome)
    }

    /// Runs `body`, turning a blob whose bytes no longer match their hash into
    /// ``PackPublishError/damagedBlob(sha256:)``.
    static func checkingBlob(_ hash: String, _ body: () throws -> Void) throws {
        do { try body() } catch PackWriteError.contentMismatch {
            throw PackPublishError.damagedBlob(sha256: hash)
        }
    }
}

enum PackPublishError: Error, CustomStringConvertible {
    case unexpectedLayout(String)
    /// The cached GIF stored under this hash no longer hashes to it (the cache was damaged).
    case damagedBlob(sha256: String)
    case nameTaken(String)

    var description: String {
        switch self {
        case .unexpectedLayout(let file): "the assembled pack \(file) does not start with catalog.json"
        case .damagedBlob(let hash): "the cached GIF \(hash) no longer matches its hash"
        case .nameTaken(let file):
            "\(file) already exists with different bytes; a published pack name never changes content, so nothing was "
                + "published (if that file was never published, move it away and run again)"
        }
    }
}

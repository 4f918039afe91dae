import Crypto
import Foundation

/// Turns one planned pack into a published pack file, or finds that the published one is current.
///
/// The pack's `catalog.json` is built first; its SHA-256 is the content digest. When it equals the
/// digest of the pack in the previous index (and that file is still there, at its recorded size),
/// nothing is written and the previous description is kept, so an unchanged build republishes
/// nothing. Otherwise version N+1 is assembled from the precompressed frames under a temporary name,
/// fsynced and renamed into `packs/<name>-v<N+1>.tar.zst`; the index that points at it is written
/// later, last.
///
/// ```swift
/// let publisher = PackPublisher(outputDirectory: "dist", frames: frames, source: source)
/// let (description, outcome) = try publisher.publish(entry, results: results, previous: nil)
/// ```
struct PackPublisher: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let source: SourceDescription

    enum Outcome: String { case published, unchanged }

    func publish(_ entry: PackPlan.Entry, results: [String: GIFFetchResult],
                 previous: PackDescription?) throws -> (PackDescription, Outcome) {
        var rows: [PackCatalogWriter.Row] = []
        var refs: [ExerciseRef] = []
        var distinct: [String: Int64] = [:]
        for exercise in entry.exercises {
            var metadata: GIFMetadata?
            if case .stored(let gif)? = results[exercise.id] {
                metadata = gif.metadata
                distinct[gif.sha256] = gif.bytes
            }
            rows.append(PackCatalogWriter.Row(exercise: exercise, gif: metadata))
            refs.append(ExerciseRef(id: exercise.id, gif: metadata?.sha256))
        }
        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let catalogSource = SourceDescription(kind: source.kind, baseURL: nil, resolution: source.resolution)
        let catalogPath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(entry.spec.name).catalog.json")
        defer { FileSystem.remove(catalogPath) }
        let digest = try PackCatalogWriter.write(pack: entry.spec.name, source: catalogSource, exercises: rows,
                                                 to: catalogPath).sha256

        if let previous, previous.contentDigest == digest,
           FileSystem.fileSize("\(outputDirectory)/\(previous.file)") == previous.bytes {
            return (previous, .unchanged)
        }

        let version = (previous?.version ?? 0) + 1
        let file = "packs/\(entry.spec.name)-v\(version).tar.zst"
        let finalPath = "\(outputDirectory)/\(file)"
        let temporary = FileSystem.temporaryPath(beside: finalPath)
        let summary: PackFileSummary
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendEntry(name: PackCatalog.path, sourcePath: catalogPath)
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
            CrashPoint.reach(.beforePackRename)
            try FileSystem.publish(temporary, as: finalPath)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }

        guard let catalogEntry = summary.entries.first, catalogEntry.name == PackCatalog.path else {
            throw PackPublishError.unexpectedLayout(file)
        }
        let gifs = summary.entries.dropFirst().map { packed in
            GIFEntry(sha256: String(packed.name.dropFirst("gifs/".count).dropLast(".gif".count)),
                     location: EntryLocation(path: packed.name, size: packed.size,
                                             frameOffset: packed.frameOffset, frameLength: packed.frameLength))
        }
        let description = PackDescription(
            name: entry.spec.name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
            entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
            catalog: EntryLocation(path: catalogEntry.name, size: catalogEntry.size,
                                   frameOffset: catalogEntry.frameOffset, frameLength: catalogEntry.frameLength),
            gifs: gifs, exercises: refs)
        return (description, .published)
    }
}

extension PackPublisher {
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

    var description: String {
        switch self {
        case .unexpectedLayout(let file): "the assembled pack \(file) does not start with catalog.json"
        case .damagedBlob(let hash): "the cached GIF \(hash) no longer matches its hash"
        }
    }
}

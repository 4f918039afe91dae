import Foundation
import GifPackFormat
import GifPackSystem
import GifPackIndexReader

/// Reads a pack file without an index: walks its zstd frames and reads entries frame by frame.
///
/// Used by `gifpack verify PACK`, `gifpack inspect` and `gifpack cat PACK ID`. Without an index the
/// expected sizes come from each frame's declared content size, capped by ``PackLimits``; every
/// header must be a regular file with a safe name. Looking up a GIF by exercise reads the catalog
/// (frame 0) and then decodes frames until the one named `gifs/<sha256>.gif`, whose SHA-256 must
/// match; with an index, ``PackEntryReader`` goes straight to the frame instead.
///
/// Calls block on disk I/O.
///
/// ```swift
/// let scan = try PackFileScan(path: "dist/packs/all-v3-1a2b3c4d.tar.zst")
/// let catalog = try scan.catalog()
/// let gif = try scan.gif(forExercise: "0001")
/// ```
package struct PackFileScan: Sendable {
    /// One decoded entry.
    package struct Entry: Sendable {
        package var header: TarHeader
        package var data: [UInt8]
        package var sha256: String
    }

    package let path: String
    /// Every zstd frame of the file, in order.
    package let frames: [ZstdFrameExtent]
    package let limits: PackLimits
    private let reader: PackFrameReader
    private var name: String { PathText.lastComponent(path) }

    package init(path: String, limits: PackLimits = .standard) throws(PackClientError) {
        let name = PathText.lastComponent(path)
        do {
            frames = try ZstdFrames.frameExtents(in: path, maxFrames: Self.maxFrames(limits))
            reader = try PackFrameReader(path: path)
        } catch {
            throw EntryReading.translate(error, pack: name, entry: path, readerPath: path)
        }
        guard frames.count >= 2 else {
            throw .rejected(PackRejection(.badFrame, pack: name, detail: "\(frames.count) frame(s): a pack has at least a catalog and an end-of-archive frame"))
        }
        self.path = path
        self.limits = limits
    }

    /// The most frames a pack within `limits` can hold: every GIF (or poster) entry is listed in
    /// the catalog by its 64-digit SHA-256, so a catalog of at most `maxCatalogBytes` lists at most
    /// `maxCatalogBytes / 64` of them; plus the catalog and end-of-archive frames. A file of tiny
    /// frames beyond that is refused before its frame list outgrows the bound (32 MiB of extents
    /// with the standard limits), instead of growing with the file.
    package static func maxFrames(_ limits: PackLimits) -> Int {
        let listed = Int(clamping: max(0, limits.maxCatalogBytes) / 64)
        return listed > Int.max - 2 ? .max : listed + 2
    }

    /// Decodes the entry of `frame`, whose size is bounded by the frame's declared content size
    /// and `maxSize`.
    package func entry(_ frame: ZstdFrameExtent, maxSize: Int64) throws(PackClientError) -> Entry {
        let entry = "frame@\(frame.offset)"
        guard let declared = frame.contentSize, declared >= Int64(TarHeader.blockSize) else {
            throw .rejected(PackRejection(.badFrame, pack: name, entry: entry, detail: "the frame declares no usable content size"))
        }
        let dataLimit = declared - Int64(TarHeader.blockSize)
        guard dataLimit <= TarHeader.entryLength(dataSize: maxSize) - Int64(TarHeader.blockSize) else {
            throw .rejected(PackRejection(.oversize, pack: name, entry: entry, detail: "the frame declares \(declared) bytes, more than the \(maxSize)-byte limit"))
        }
        var data: [UInt8] = []
        let result = try EntryReading.read(
            reader: reader, pack: name, entry: entry, frameOffset: frame.offset, frameLength: frame.compressedLength,
            maxSize: dataLimit, validate: { [name] header in EntryReading.unsafeHeaderProblem(header, pack: name) },
            into: { chunk in data.append(contentsOf: chunk) })
        return Entry(header: result.header, data: data, sha256: result.sha256)
    }

    /// The pack's `catalog.json`, the first frame.
    package func catalog() throws(PackClientError) -> PackCatalog {
        let first = try entry(frames[0], maxSize: limits.maxCatalogBytes)
        guard first.header.name == PackCatalog.path else {
            throw .rejected(
                PackRejection(
                    .entryMismatch, pack: name, entry: SafePath.printable(first.header.name),
                    detail: "the first entry must be catalog.json"))
        }
        do { return try PackCatalog.decode(from: first.data) } catch {
            throw .rejected(PackRejection(.catalogMismatch, pack: name, entry: PackCatalog.path, detail: "does not decode: \(JSONValueDecoder.describe(error))"))
        }
    }

    /// The GIF of exercise `id`, found through the catalog and checked against its hash.
    package func gif(forExercise id: String) throws(PackClientError) -> [UInt8] {
        let catalog = try catalog()
        guard let exercise = catalog.exercises.first(where: { $0.id == id }) else { throw .unknownExercise(id) }
        guard let metadata = exercise.gif else { throw .noGIF(exercise: id) }
        // A WebP of a WebP pack (format 1.4) is at images/<sha256>.webp, its container walked before it is given out.
        let format = metadata.format ?? .gif
        let wanted = format.entryPath(forSHA256: metadata.sha256) ?? GIFEntry.path(forSHA256: metadata.sha256)
        for frame in frames.dropFirst().dropLast() {
            let found = try entry(frame, maxSize: limits.maxGIFBytes)
            guard found.header.name == wanted else { continue }
            guard found.sha256 == metadata.sha256 else {
                throw .rejected(
                    PackRejection(
                        .hashMismatch, pack: name, entry: wanted,
                        detail: "the data hashes to \(found.sha256)"))
            }
            if format == .webp, let problem = IndexedEntry.webpProblem(found.data, pack: name, entry: wanted) { throw .rejected(problem) }
            return found.data
        }
        throw .rejected(PackRejection(.missingEntry, pack: name, entry: wanted, detail: "exercise \(id)'s GIF is not in the pack"))
    }
}

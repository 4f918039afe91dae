import GifPackFormat
import GifPackGIFCore
import GifPackIndexReader

/// Reads an entry where the index says it is and holds it to everything the index says.
///
/// On top of ``EntryReading``: the tar header must be a regular file with a safe name equal to the
/// location's path and exactly the location's size; the decompression cap is the location's entry
/// length; the data's SHA-256 must equal `sha256`; an image (`image`: the entry's format, nil for a
/// catalog) must start with its format's signature (a GIF's, or a WebP's RIFF header, format 1.4),
/// and a rendition pack's GIF (`side`: `PackDescription.renditionSide`) have a logical screen
/// whose larger side is that resolution. Every reader of a pack's image bytes comes here: verify,
/// install (whole and sparse), the lazy cache's fetch and ``PackEntryReader``; ``readAll(_:sha256:image:side:pack:reader:)``
/// also walks a WebP's whole container (``webpProblem(_:pack:entry:)``), as the lazy cache does.
///
/// ```swift
/// let bytes = try IndexedEntry.readAll(gif.location, sha256: gif.sha256, image: gif.imageFormat, pack: "all", reader: reader)
/// ```
enum IndexedEntry {
    static func read(
        _ location: EntryLocation, sha256 expected: String, image: ImageFormat?, side: Int? = nil, pack: String,
        reader: PackFrameReader,
        into consumer: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackClientError) {
        let entry = SafePath.printable(location.path)
        let allowed = TarHeader.entryLength(dataSize: location.size) - Int64(TarHeader.blockSize)
        let result = try EntryReading.read(
            reader: reader, pack: pack, entry: entry, frameOffset: location.frameOffset,
            frameLength: location.frameLength, maxSize: allowed,
            validate: { header in headerProblem(header, location: location, pack: pack) }, into: consumer)
        guard result.sha256 == expected else {
            throw .rejected(
                PackRejection(
                    .hashMismatch, pack: pack, entry: entry,
                    detail: "the data hashes to \(result.sha256), the index says \(expected)"))
        }
        guard let image else { return }
        if image == .webp {
            if !WebPWalker.hasSignature(result.prefix) {
                throw .rejected(PackRejection(.notAWebP, pack: pack, entry: entry, detail: "the data does not start with RIFF, a size and WEBP"))
            }
        } else {
            if !EntryReading.hasGIFSignature(result.prefix) {
                throw .rejected(PackRejection(.notAGIF, pack: pack, entry: entry, detail: "the data does not start with GIF87a or GIF89a"))
            }
            if let side, let problem = sideProblem(result.prefix, side: side, pack: pack, entry: entry) { throw .rejected(problem) }
        }
    }

    /// A WebP whose container ``WebPWalker`` refuses (truncated, malformed, past the limits):
    /// format 1.4's structural check, run on every WebP before it is served.
    static func webpProblem(_ bytes: [UInt8], pack: String, entry: String) -> PackRejection? {
        do { _ = try WebPWalker.inspect(bytes: bytes) } catch {
            return PackRejection(.notAWebP, pack: pack, entry: entry, detail: "the WebP container is refused: \(error)")
        }
        return nil
    }

    /// A rendition's GIF of another size: its logical screen (bytes 6-9 of the GIF, little-endian
    /// width and height) has a larger side other than `side`.
    static func sideProblem(_ prefix: [UInt8], side: Int, pack: String, entry: String) -> PackRejection? {
        guard prefix.count >= 10 else {
            return PackRejection(.notAGIF, pack: pack, entry: entry, detail: "the data ends before the GIF's logical screen")
        }
        let width = Int(prefix[6]) | Int(prefix[7]) << 8
        let height = Int(prefix[8]) | Int(prefix[9]) << 8
        guard max(width, height) != side else { return nil }
        return PackRejection(
            .wrongResolution, pack: pack, entry: entry,
            detail: "the GIF is \(width)×\(height), not the pack's resolution of \(side) px")
    }

    /// Reads the entry into memory (a WebP's container walked too).
    static func readAll(
        _ location: EntryLocation, sha256: String, image: ImageFormat?, side: Int? = nil, pack: String,
        reader: PackFrameReader
    ) throws(PackClientError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(0, location.size)))
        try read(location, sha256: sha256, image: image, side: side, pack: pack, reader: reader) { chunk in
            bytes.append(contentsOf: chunk)
        }
        if image == .webp, let problem = webpProblem(bytes, pack: pack, entry: SafePath.printable(location.path)) { throw .rejected(problem) }
        return bytes
    }

    static func headerProblem(_ header: TarHeader, location: EntryLocation, pack: String) -> PackRejection? {
        if let problem = EntryReading.unsafeHeaderProblem(header, pack: pack) { return problem }
        let name = SafePath.printable(header.name)
        guard header.name == location.path else {
            return PackRejection(
                .entryMismatch, pack: pack, entry: name,
                detail: "the frame holds \(name) where the index puts \(SafePath.printable(location.path))")
        }
        if header.size > location.size {
            return PackRejection(
                .oversize, pack: pack, entry: name,
                detail: "the entry is \(header.size) bytes, the index says \(location.size)")
        }
        if header.size < location.size {
            return PackRejection(
                .sizeMismatch, pack: pack, entry: name,
                detail: "the entry is \(header.size) bytes, the index says \(location.size)")
        }
        return nil
    }
}

/// Random access to single tar entries inside a pack.
///
/// A pack is a ustar stream compressed as one zstd frame per tar entry (header, data and
/// padding), followed by a frame holding the end-of-archive blocks. The index records each
/// entry's frame offset and length, so a reader `pread`s exactly that range and decompresses it
/// alone. The frame must declare its content size and a content checksum; output is capped at
/// `512 + maxSize + 511` bytes (refused from the frame header when possible, so a bomb costs
/// nothing), the checksum is verified by zstd, the range must hold exactly one frame, and the
/// content must be exactly one entry: a valid ustar header, `size` data bytes and the padding.
///
/// The reader holds a file descriptor (closed when the last copy goes away) and is safe to use
/// from several threads at once; each call uses its own decompression context. Calls block on
/// disk I/O, so run them off Swift's cooperative pool.
///
/// ```swift
/// let reader = try PackFrameReader(path: "packs/chest-3.tar.zst")
/// let (header, gif) = try reader.readEntry(frameOffset: 1536, frameLength: 81_233, maxSize: 4 << 20)
/// print(header.name, gif.count)   // gifs/<sha256>.gif 94210
/// ```
public struct PackFrameReader: Sendable {
    /// Compressed bytes read per `pread` while streaming a frame.
    public static let readChunkSize = 64 * 1024

    private let file: PackFileHandle

    public var path: String { file.path }

    public init(path: String) throws(PackReadError) {
        file = try PackFileHandle(path: path)
    }

    /// Size of the pack file in bytes.
    public func fileSize() throws(PackReadError) -> Int64 {
        try file.size()
    }

    /// Reads the entry whose frame occupies `frameLength` bytes at `frameOffset` and returns its
    /// header and exactly `header.size` data bytes, refusing entries larger than `maxSize`.
    public func readEntry(frameOffset: Int64, frameLength: Int64,
                          maxSize: Int64) throws(PackReadError) -> (header: TarHeader, data: [UInt8]) {
        var data: [UInt8] = []
        let header = try streamEntry(frameOffset: frameOffset, frameLength: frameLength, maxSize: maxSize,
                                     onHeader: { header in data.reserveCapacity(Int(header.size)) },
                                     into: { chunk in data.append(contentsOf: chunk) })
        return (header, data)
    }

    /// Like ``readEntry(frameOffset:frameLength:maxSize:)`` but hands the data to `consumer` in
    /// chunks as it is decompressed, so memory does not depend on the entry size. `onHeader` runs
    /// once, after the header is verified and before any data. Returns the header.
    @discardableResult
    public func streamEntry(
        frameOffset: Int64, frameLength: Int64, maxSize: Int64,
        onHeader: (TarHeader) throws(PackReadError) -> Void = { _ in },
        into consumer: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackReadError) -> TarHeader {
        guard frameOffset >= 0, frameLength > 0, maxSize >= 0 else {
            throw .badFrameHeader(offset: frameOffset,
                                  reason: "invalid frame range (length \(frameLength), max size \(maxSize))")
        }
        let limit = TarHeader.entryLength(dataSize: maxSize)
        let decoder = try ZstdFrameStreamDecoder(frameOffset: frameOffset, maxContentSize: limit)
        var splitter = TarEntrySplitter(maxSize: maxSize)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var position: Int64 = 0
        while position < frameLength {
            let want = Int(min(Int64(chunk.count), frameLength - position))
            let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]),
                                    at: frameOffset + position)
            guard got > 0 else { throw .truncatedFrame(offset: frameOffset) }
            position += Int64(got)
            try decoder.feed(UnsafeRawBufferPointer(rebasing: chunk[0..<got])) { decoded throws(PackReadError) in
                try splitter.consume(decoded, onHeader: onHeader, into: consumer)
            }
        }
        try decoder.finish()
        return try splitter.finish()
    }
}

/// Random access to single tar entries inside a pack.
///
/// A pack is a ustar stream compressed as one zstd frame per tar entry (header, data and
/// padding), followed by a frame holding the end-of-archive blocks. The index records each
/// entry's frame offset and length, so a reader `pread`s exactly that range and decompresses it
/// alone with the pure-Swift decoder (`GifPackZstd`). The frame must declare its content size and
/// a content checksum; output is capped at `512 + maxSize + 511` bytes (refused from the frame
/// header when possible, so a bomb costs nothing), the checksum is verified, the range must hold
/// exactly one frame, and the content must be exactly one entry: a valid ustar header, `size` data
/// bytes and the padding. The range is read whole before it is decoded, so it may be no longer than
/// a frame of that much content can be (the content stored raw, plus headers); memory is the frame
/// plus its window (at most the content size).
///
/// The reader holds a file descriptor (closed when the last copy goes away) and is safe to use
/// from several threads at once; each call uses its own decoder. Calls block on disk I/O, so run
/// them off Swift's cooperative pool.
///
/// ```swift
/// let reader = try PackFrameReader(path: "packs/chest-3.tar.zst")
/// let (header, gif) = try reader.readEntry(frameOffset: 1536, frameLength: 81_233, maxSize: 4 << 20)
/// print(header.name, gif.count)   // gifs/<sha256>.gif 94210
/// ```
package struct PackFrameReader: Sendable {
    /// Compressed bytes read per `pread` while streaming a frame.
    package static let readChunkSize = 64 * 1024

    private let file: PackFileHandle

    package var path: String { file.path }

    /// Bytes read from the file so far through this reader and its copies (tests: what a step read).
    package var bytesRead: Int64 { file.bytesRead }

    package init(path: String) throws(PackReadError) {
        file = try PackFileHandle(path: path)
    }

    /// Reads `bytes` in memory as the pack file (a frame fetched by range starts at offset 0);
    /// `name` stands for the path in messages.
    package init(bytes: [UInt8], name: String) {
        file = PackFileHandle(bytes: bytes, name: name)
    }

    /// Up to `count` bytes at `offset` (fewer only where the file ends), without decompressing.
    package func readBytes(at offset: Int64, count: Int) throws(PackReadError) -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw .badFrameHeader(offset: offset, reason: "invalid range (\(count) bytes)")
        }
        var failure: PackReadError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            var position = 0
            while position < count {
                let want = min(Self.readChunkSize * 16, count - position)
                let got: Int
                do throws(PackReadError) {
                    let slice = UnsafeMutableBufferPointer(rebasing: buffer[position..<(position + want)])
                    got = try file.read(into: UnsafeMutableRawBufferPointer(slice), at: offset + Int64(position))
                } catch {
                    failure = error
                    break
                }
                position += got
                initialized = position
                if got < want { break }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Size of the pack file in bytes.
    package func fileSize() throws(PackReadError) -> Int64 {
        try file.size()
    }

    /// Reads the entry whose frame occupies `frameLength` bytes at `frameOffset` and returns its
    /// header and exactly `header.size` data bytes, refusing entries larger than `maxSize`.
    package func readEntry(
        frameOffset: Int64, frameLength: Int64,
        maxSize: Int64
    ) throws(PackReadError) -> (header: TarHeader, data: [UInt8]) {
        var data: [UInt8] = []
        let header = try streamEntry(
            frameOffset: frameOffset, frameLength: frameLength, maxSize: maxSize,
            onHeader: { header in data.reserveCapacity(Int(header.size)) },
            into: { chunk in data.append(contentsOf: chunk) })
        return (header, data)
    }

    /// Like ``readEntry(frameOffset:frameLength:maxSize:)`` but hands the data to `consumer` in
    /// chunks as it is decompressed, so memory does not depend on the entry size. `onHeader` runs
    /// once, after the header is verified and before any data. Returns the header.
    @discardableResult
    package func streamEntry(
        frameOffset: Int64, frameLength: Int64, maxSize: Int64,
        onHeader: (TarHeader) throws(PackReadError) -> Void = { _ in },
        into consumer: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackReadError) -> TarHeader {
        guard frameOffset >= 0, frameLength > 0, maxSize >= 0 else {
            throw .badFrameHeader(
                offset: frameOffset,
                reason: "invalid frame range (length \(frameLength), max size \(maxSize))")
        }
        let limit = TarHeader.entryLength(dataSize: maxSize)
        let longest = ZstdEntryFrameDecoder.maxCompressedLength(contentSize: limit)
        guard frameLength <= longest else {
            throw .corruptFrame(
                offset: frameOffset,
                reason: "a frame of \(frameLength) bytes is longer than any frame "
                    + "of at most \(limit) content bytes (\(longest))")
        }
        let frame = try readBytes(at: frameOffset, count: Int(frameLength))
        guard frame.count == Int(frameLength) else { throw .truncatedFrame(offset: frameOffset) }
        var splitter = TarEntrySplitter(maxSize: maxSize)
        let decoded: Result<Void, PackReadError> = frame.withUnsafeBytes { bytes in
            Result { () throws(PackReadError) in
                try ZstdEntryFrameDecoder.decode(bytes, frameOffset: frameOffset, maxContentSize: limit) { decoded throws(PackReadError) in
                    try splitter.consume(decoded, onHeader: onHeader, into: consumer)
                }
            }
        }
        try decoded.get()
        return try splitter.finish()
    }
}

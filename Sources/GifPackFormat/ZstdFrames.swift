/// Where one zstd frame sits in a file.
///
/// `contentSize` is the decompressed size the frame header declares, or nil when the frame does
/// not declare one (or declares more than `Int64.max` bytes).
package struct ZstdFrameExtent: Sendable, Equatable {
    package var offset: Int64
    package var compressedLength: Int64
    package var contentSize: Int64?

    package init(offset: Int64, compressedLength: Int64, contentSize: Int64?) {
        self.offset = offset
        self.compressedLength = compressedLength
        self.contentSize = contentSize
    }
}

/// Frame-level inspection of `.zst` files made of concatenated frames.
///
/// ``frameExtents(in:maxFrames:)`` walks the file without decompressing anything and with a fixed amount of
/// memory (one 1 MiB window), whatever the file holds: each frame is measured from its headers
/// alone (RFC 8878: the frame header, then each block's 3-byte header, skipping the block's bytes,
/// then the checksum), as libzstd's `ZSTD_findFrameCompressedSize` measures it, reading only the
/// pieces at those offsets that the window does not already hold. Bytes that do not start a frame
/// are refused at their offset at once ("no zstd frame at offset N"), without reading further.
/// Verify tools use it to check that an index's offsets are real frame boundaries.
///
/// ```swift
/// let frames = try ZstdFrames.frameExtents(in: "packs/chest-3.tar.zst")
/// // one frame per tar entry, plus the end-of-archive frame (contentSize 1024)
/// ```
package enum ZstdFrames {
    static let windowSize = 1 << 20
    /// Bytes read at a block header the window does not hold.
    static let walkReadSize = 64 * 1024
    /// The largest window log a frame may declare (libzstd's limit on 64-bit systems).
    static let maxWindowLog = 31

    /// Every frame in the file at `path`, in order. Throws if the file is not entirely zstd frames,
    /// or holds more than `maxFrames` frames (a frame can be 9 bytes long, so a caller that knows
    /// how many frames it can need bounds the list, and the memory it takes, with `maxFrames`).
    package static func frameExtents(in path: String, maxFrames: Int = .max) throws(PackReadError) -> [ZstdFrameExtent] {
        try frameExtents(in: path, maxFrames: maxFrames, windowSize: windowSize)
    }

    /// ``frameExtents(in:maxFrames:)`` with another window size (tests use a tiny one so that
    /// almost every header needs a read of its own). At least 32 bytes, so a frame header always fits.
    static func frameExtents(in path: String, maxFrames: Int = .max, windowSize: Int) throws(PackReadError) -> [ZstdFrameExtent] {
        let window = try FileWindow(path: path, capacity: max(windowSize, 32))
        var position: Int64 = 0
        var extents: [ZstdFrameExtent] = []
        while position < window.fileSize {
            guard extents.count < maxFrames else {
                throw .badFrameHeader(offset: position, reason: "more than \(maxFrames) frames, more than the reader allows")
            }
            let extent = try measureFrame(at: position, window: window)
            extents.append(extent)
            position += extent.compressedLength
        }
        return extents
    }

    /// The frame at `offset`: its length, from its frame header, block headers and checksum.
    private static func measureFrame(at offset: Int64, window: FileWindow) throws(PackReadError) -> ZstdFrameExtent {
        let head = try window.bytes(at: offset, minimum: ZstdFrameHeaderFields.maxSize)
        let fields = try ZstdFrameHeaderFields.parse(head, at: offset)
        if let skippableLength = fields.skippableLength {
            guard skippableLength <= window.fileSize - offset else { throw .truncatedFrame(offset: offset) }
            return ZstdFrameExtent(offset: offset, compressedLength: skippableLength, contentSize: 0)
        }
        var cursor = offset + Int64(fields.headerSize)
        while true {
            let header = try window.bytes(at: cursor, minimum: 3, readLength: walkReadSize)
            guard header.count >= 3 else { throw .truncatedFrame(offset: offset) }
            let bits = UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16
            let blockSize = Int64(bits >> 3)
            let stored: Int64
            switch (bits >> 1) & 3 {
            case 0, 2: stored = blockSize  // raw or compressed: the block's bytes
            case 1: stored = 1  // RLE: one byte repeated blockSize times
            default:
                throw .corruptFrame(offset: offset, reason: "reserved block type in the block header at offset \(cursor)")
            }
            cursor += 3 + stored
            guard cursor <= window.fileSize else { throw .truncatedFrame(offset: offset) }
            if bits & 1 != 0 { break }
        }
        if fields.hasChecksum { cursor += 4 }
        guard cursor <= window.fileSize else { throw .truncatedFrame(offset: offset) }
        return ZstdFrameExtent(offset: offset, compressedLength: cursor - offset, contentSize: fields.contentSize)
    }
}

/// The fields of a zstd frame header (RFC 8878, 3.1.1.1) that measuring a frame needs, checked as
/// libzstd's `ZSTD_getFrameHeader` checks them (magic number, reserved bit, window log); a
/// dictionary id is allowed here (the frame is measured, not decoded).
struct ZstdFrameHeaderFields: Equatable {
    /// A zstd frame header is at most 18 bytes (magic 4, descriptor 1, window 1, dictionary 4, size 8).
    static let maxSize = 18

    /// Bytes of the header, magic number included (for a skippable frame: 8).
    var headerSize: Int
    /// The whole length of a skippable frame (its 8-byte header included); nil for a zstd frame.
    var skippableLength: Int64?
    /// The declared content size; nil when none is declared or it exceeds `Int64.max`.
    var contentSize: Int64?
    /// Whether the header has a content size field (a skippable frame: false).
    var declaresContentSize: Bool
    var hasChecksum: Bool

    /// Parses the header at the start of `bytes` (the frame at file offset `offset`); `bytes` holds
    /// at least ``maxSize`` bytes unless the file ends first.
    static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(PackReadError) -> ZstdFrameHeaderFields {
        let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        guard bytes.count >= 4 else {
            // A prefix of a magic number is a truncated frame; anything else is not zstd.
            let prefixOfZstd = bytes.elementsEqual(zstdMagic.prefix(bytes.count))
            let prefixOfSkippable = bytes.enumerated().allSatisfy { index, byte in
                index == 0 ? byte & 0xF0 == 0x50 : byte == [0, 0x2A, 0x4D, 0x18][index]
            }
            throw prefixOfZstd || prefixOfSkippable ? .truncatedFrame(offset: offset) : .notZstd(offset: offset)
        }
        if bytes[0] & 0xF0 == 0x50, bytes[1] == 0x2A, bytes[2] == 0x4D, bytes[3] == 0x18 {
            guard bytes.count >= 8 else { throw .truncatedFrame(offset: offset) }
            let size = Int64(UInt32(bytes[4]) | UInt32(bytes[5]) << 8 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 24)
            return ZstdFrameHeaderFields(
                headerSize: 8, skippableLength: 8 + size, contentSize: 0,
                declaresContentSize: false, hasChecksum: false)
        }
        guard bytes.prefix(4).elementsEqual(zstdMagic) else {
            throw .notZstd(offset: offset)
        }
        guard bytes.count >= 5 else { throw .truncatedFrame(offset: offset) }
        let descriptor = bytes[4]
        let singleSegment = descriptor & 0x20 != 0
        let dictionaryIDBytes = [0, 1, 2, 4][Int(descriptor & 0x03)]
        let contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        let headerSize = 5 + (singleSegment ? 0 : 1) + dictionaryIDBytes + contentSizeBytes
        guard bytes.count >= headerSize else { throw .truncatedFrame(offset: offset) }
        guard descriptor & 0x08 == 0 else {
            throw .corruptFrame(offset: offset, reason: "the reserved bit of the frame header descriptor is set")
        }
        if !singleSegment {
            let windowLog = 10 + Int(bytes[5] >> 3)
            guard windowLog <= ZstdFrames.maxWindowLog else {
                throw .corruptFrame(offset: offset, reason: "the frame asks for a window of 2^\(windowLog) bytes, more than 2^\(ZstdFrames.maxWindowLog)")
            }
        }
        var contentSize: Int64?
        if contentSizeBytes > 0 {
            let start = headerSize - contentSizeBytes
            var value: UInt64 = 0
            for index in 0..<contentSizeBytes { value |= UInt64(bytes[start + index]) << UInt64(8 * index) }
            if contentSizeBytes == 2 { value += 256 }
            contentSize = Int64(exactly: value)
        }
        return ZstdFrameHeaderFields(
            headerSize: headerSize, skippableLength: nil, contentSize: contentSize,
            declaresContentSize: contentSizeBytes > 0, hasChecksum: descriptor & 0x04 != 0)
    }
}

/// A fixed-size buffer over a file: holds the bytes of one range, loaded with `pread`.
private final class FileWindow {
    let file: PackFileHandle
    let fileSize: Int64
    let capacity: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var start: Int64 = 0  // file offset of buffer[0]
    private var count = 0  // valid bytes in the buffer

    init(path: String, capacity: Int) throws(PackReadError) {
        file = try PackFileHandle(path: path)
        fileSize = try file.size()
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The loaded bytes from `offset` to the end of the window, holding at least `minimum` bytes
    /// unless the file ends first; loads `readLength` (default: the whole window) from `offset`
    /// when fewer are loaded. Valid until the next call.
    func bytes(at offset: Int64, minimum: Int, readLength: Int? = nil) throws(PackReadError) -> UnsafeRawBufferPointer {
        if offset >= start, offset - start <= Int64(count) {
            let from = Int(offset - start)
            if count - from >= minimum || start + Int64(count) == fileSize {
                return UnsafeRawBufferPointer(rebasing: buffer[from..<count])
            }
        }
        return try load(at: offset, length: max(minimum, min(readLength ?? capacity, capacity)))
    }

    /// Reads up to `length` bytes (at most the capacity) at `offset`; fewer only at end of file.
    func load(at offset: Int64, length: Int) throws(PackReadError) -> UnsafeRawBufferPointer {
        let want = Int(max(0, min(Int64(min(length, capacity)), fileSize - offset)))
        let got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset)
        guard got == want else { throw .truncatedFrame(offset: offset) }
        start = offset
        count = got
        return UnsafeRawBufferPointer(rebasing: buffer[0..<got])
    }
}

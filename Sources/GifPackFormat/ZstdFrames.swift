import CZstd

/// Where one zstd frame sits in a file.
///
/// `contentSize` is the decompressed size the frame header declares, or nil when the frame does
/// not declare one (or declares more than `Int64.max` bytes).
public struct ZstdFrameExtent: Sendable, Equatable {
    public var offset: Int64
    public var compressedLength: Int64
    public var contentSize: Int64?

    public init(offset: Int64, compressedLength: Int64, contentSize: Int64?) {
        self.offset = offset
        self.compressedLength = compressedLength
        self.contentSize = contentSize
    }
}

/// Frame-level inspection of `.zst` files made of concatenated frames.
///
/// ``frameExtents(in:)`` walks the file without decompressing anything and with a fixed amount of
/// memory (one 1 MiB window), whatever the file holds. A frame that fits in the window is measured
/// by `ZSTD_findFrameCompressedSize`; a larger one is walked header by header (the frame header,
/// then each block's 3-byte header, skipping the block's bytes, then the checksum), reading only
/// small pieces at those offsets. Bytes that do not start a frame are refused at their offset at
/// once ("no zstd frame at offset N"), without reading further. Verify tools use it to check that
/// an index's offsets are real frame boundaries.
///
/// ```swift
/// let frames = try ZstdFrames.frameExtents(in: "packs/chest-3.tar.zst")
/// // one frame per tar entry, plus the end-of-archive frame (contentSize 1024)
/// ```
public enum ZstdFrames {
    static let windowSize = 1 << 20
    /// Bytes read at a block header while walking a frame larger than the window.
    static let walkReadSize = 64 * 1024

    /// Every frame in the file at `path`, in order. Throws if the file is not entirely zstd frames,
    /// or holds more than `maxFrames` frames (a frame can be 9 bytes long, so a caller that knows
    /// how many frames it can need bounds the list, and the memory it takes, with `maxFrames`).
    public static func frameExtents(in path: String, maxFrames: Int = .max) throws(PackReadError) -> [ZstdFrameExtent] {
        try frameExtents(in: path, maxFrames: maxFrames, windowSize: windowSize)
    }

    /// ``frameExtents(in:maxFrames:)`` with another window size (tests use a tiny one so that every
    /// frame takes the walking path). At least 32 bytes, so a frame header always fits.
    static func frameExtents(in path: String, maxFrames: Int = .max, windowSize: Int) throws(PackReadError) -> [ZstdFrameExtent] {
        let window = try FileWindow(path: path, capacity: max(windowSize, 32))
        var position: Int64 = 0
        var extents: [ZstdFrameExtent] = []
        while position < window.fileSize {
            guard extents.count < maxFrames else {
                throw .badFrameHeader(offset: position, reason: "more than \(maxFrames) frames, more than the reader allows")
            }
            var bytes = try window.bytes(at: position, minimum: 1)
            var result = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
            if isIncomplete(result), !window.reachesEnd(bytes, at: position), bytes.count < window.capacity {
                // The window was loaded for an earlier frame: load it again from here.
                bytes = try window.load(at: position, length: window.capacity)
                result = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
            }
            let contentSize = declaredContentSize(bytes)
            let length: Int64
            if ZSTD_isError(result) == 0 {
                length = Int64(result)
            } else if isIncomplete(result), !window.reachesEnd(bytes, at: position) {
                // A frame larger than the window.
                length = try walkFrame(at: position, window: window)
            } else {
                throw frameError(result, at: position)
            }
            extents.append(ZstdFrameExtent(offset: position, compressedLength: length, contentSize: contentSize))
            position += length
        }
        return extents
    }

    /// The length of the frame at `offset`, which continues past the window: walked through its
    /// frame header, block headers and checksum, reading at most ``walkReadSize`` bytes at a time.
    private static func walkFrame(at offset: Int64, window: FileWindow) throws(PackReadError) -> Int64 {
        let head = try window.load(at: offset, length: min(window.capacity, walkReadSize))
        guard head.count >= 8 else { throw .truncatedFrame(offset: offset) }
        let magic = UInt32(head[0]) | UInt32(head[1]) << 8 | UInt32(head[2]) << 16 | UInt32(head[3]) << 24
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // A skippable frame: magic, 4-byte little-endian size, then that many bytes.
            let size = Int64(UInt32(head[4]) | UInt32(head[5]) << 8 | UInt32(head[6]) << 16 | UInt32(head[7]) << 24)
            guard offset + 8 + size <= window.fileSize else { throw .truncatedFrame(offset: offset) }
            return 8 + size
        }
        guard magic == 0xFD2F_B528 else { throw .notZstd(offset: offset) }
        // zstd itself checks the frame header (reserved bit, window size) before reporting the
        // frame as incomplete; checked again here so the walk never trusts an unchecked header.
        guard ZSTD_getFrameContentSize(head.baseAddress, head.count) != ZSTD_CONTENTSIZE_ERROR else {
            throw frameError(ZSTD_findFrameCompressedSize(head.baseAddress, head.count), at: offset)
        }
        let descriptor = head[4]
        let singleSegment = descriptor & 0x20 != 0
        let hasChecksum = descriptor & 0x04 != 0
        let dictionaryIDBytes: Int64 = [0, 1, 2, 4][Int(descriptor & 0x03)]
        let contentSizeBytes: Int64 = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        var cursor = offset + 5 + (singleSegment ? 0 : 1) + dictionaryIDBytes + contentSizeBytes
        while true {
            let header = try window.bytes(at: cursor, minimum: 3, readLength: walkReadSize)
            guard header.count >= 3 else { throw .truncatedFrame(offset: offset) }
            let fields = UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16
            let blockSize = Int64(fields >> 3)
            let stored: Int64
            switch (fields >> 1) & 3 {
            case 0, 2: stored = blockSize      // raw or compressed: the block's bytes
            case 1: stored = 1                 // RLE: one byte repeated blockSize times
            default:
                throw .corruptFrame(offset: offset, reason: "reserved block type in the block header at offset \(cursor)")
            }
            cursor += 3 + stored
            guard cursor <= window.fileSize else { throw .truncatedFrame(offset: offset) }
            if fields & 1 != 0 { break }
        }
        if hasChecksum { cursor += 4 }
        guard cursor <= window.fileSize else { throw .truncatedFrame(offset: offset) }
        return cursor - offset
    }

    /// The content size the frame header at the start of `bytes` declares; nil when it declares
    /// none or more than `Int64.max` (untrusted bytes: never trapped on).
    private static func declaredContentSize(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        let declared = ZSTD_getFrameContentSize(bytes.baseAddress, bytes.count)
        guard declared != ZSTD_CONTENTSIZE_ERROR, declared != ZSTD_CONTENTSIZE_UNKNOWN else { return nil }
        return Int64(exactly: declared)
    }

    /// True when zstd stopped because the bytes end inside the frame.
    private static func isIncomplete(_ result: Int) -> Bool {
        ZSTD_isError(result) != 0 && ZSTD_getErrorCode(result) == ZSTD_error_srcSize_wrong
    }

    private static func frameError(_ result: Int, at offset: Int64) -> PackReadError {
        switch ZSTD_getErrorCode(result) {
        case ZSTD_error_prefix_unknown: return .notZstd(offset: offset)
        case ZSTD_error_srcSize_wrong: return .truncatedFrame(offset: offset)
        default: return .corruptFrame(offset: offset, reason: String(cString: ZSTD_getErrorName(result)))
        }
    }
}

/// A fixed-size buffer over a file: holds the bytes of one range, loaded with `pread`.
private final class FileWindow {
    let file: PackFileHandle
    let fileSize: Int64
    let capacity: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var start: Int64 = 0  // file offset of buffer[0]
    private var count = 0         // valid bytes in the buffer

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

    /// True when `bytes` (returned for `offset`) run to the end of the file.
    func reachesEnd(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        offset + Int64(bytes.count) >= fileSize
    }
}

import CZstd

/// Where one zstd frame sits in a file.
///
/// `contentSize` is the decompressed size the frame header declares, or nil when the frame does
/// not declare one.
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
/// ``frameExtents(in:)`` walks the file with `ZSTD_findFrameCompressedSize` over a sliding buffer
/// without decompressing anything: it reads 1 MiB windows and grows the window only while a
/// single frame does not fit, so memory is bounded by the largest frame (one GIF's entry), not
/// the file. Verify tools use it to check that an index's offsets are real frame boundaries.
///
/// ```swift
/// let frames = try ZstdFrames.frameExtents(in: "packs/chest-3.tar.zst")
/// // one frame per tar entry, plus the end-of-archive frame (contentSize 1024)
/// ```
public enum ZstdFrames {
    static let windowSize = 1 << 20

    /// Every frame in the file at `path`, in order. Throws if the file is not entirely zstd frames.
    public static func frameExtents(in path: String) throws(PackReadError) -> [ZstdFrameExtent] {
        let file = try PackFileHandle(path: path)
        let fileSize = try file.size()
        var window = UnsafeMutableRawBufferPointer.allocate(byteCount: windowSize, alignment: 16)
        defer { window.deallocate() }
        var windowStart: Int64 = 0  // file offset of window[0]
        var windowCount = 0         // valid bytes in the window
        var position: Int64 = 0
        var extents: [ZstdFrameExtent] = []
        while position < fileSize {
            let frame = UnsafeRawBufferPointer(rebasing: window[Int(position - windowStart)..<windowCount])
            if let length = completeFrameLength(frame) {
                let declared = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
                extents.append(ZstdFrameExtent(offset: position, compressedLength: Int64(length),
                                               contentSize: declared >= ZSTD_CONTENTSIZE_ERROR ? nil : Int64(declared)))
                position += Int64(length)
                continue
            }
            let remaining = fileSize - position
            if Int64(frame.count) == remaining { throw frameError(frame, at: position) }
            if frame.count == window.count {
                // One frame is larger than the window: double it.
                window.deallocate()
                window = .allocate(byteCount: frame.count * 2, alignment: 16)
            }
            let want = Int(min(Int64(window.count), remaining))
            windowCount = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: window[0..<want]), at: position)
            windowStart = position
            guard windowCount == want else { throw .truncatedFrame(offset: position) }
        }
        return extents
    }

    /// The length of the complete frame at the start of `bytes`, or nil if it is incomplete or invalid.
    private static func completeFrameLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty else { return nil }
        let result = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
        return ZSTD_isError(result) == 0 ? result : nil
    }

    private static func frameError(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> PackReadError {
        let result = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
        switch ZSTD_getErrorCode(result) {
        case ZSTD_error_prefix_unknown: return .notZstd(offset: offset)
        case ZSTD_error_srcSize_wrong: return .truncatedFrame(offset: offset)
        default: return .corruptFrame(offset: offset, reason: String(cString: ZSTD_getErrorName(result)))
        }
    }
}

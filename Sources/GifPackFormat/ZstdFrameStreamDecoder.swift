import CZstd

/// Decompresses exactly one zstd frame fed in arbitrary chunks, with a hard cap on output.
///
/// Before any decompression the frame header must declare its content size (at most
/// `maxContentSize`, so a bomb is refused from its first bytes) and a content checksum, which
/// zstd then verifies at the end of the frame. Output beyond `maxContentSize` is refused as well,
/// in case the header lies. Input left over after the frame ends (trailing bytes or a second
/// frame) is an error. Used by one reader on one thread.
final class ZstdFrameStreamDecoder {
    private let context: OpaquePointer
    private let frameOffset: Int64
    private let maxContentSize: Int64
    private let output: UnsafeMutableRawBufferPointer
    private var headerChecked = false
    private var pendingHeader: [UInt8] = []

    /// Decompressed bytes produced so far.
    private(set) var producedBytes: Int64 = 0
    /// True once the frame's last block and checksum were consumed.
    private(set) var isComplete = false

    init(frameOffset: Int64, maxContentSize: Int64) throws(PackReadError) {
        guard let context = ZSTD_createDCtx() else {
            throw .corruptFrame(offset: frameOffset, reason: "ZSTD_createDCtx failed (out of memory)")
        }
        self.context = context
        self.frameOffset = frameOffset
        self.maxContentSize = maxContentSize
        output = .allocate(byteCount: ZSTD_DStreamOutSize(), alignment: 16)
    }

    deinit {
        ZSTD_freeDCtx(context)
        output.deallocate()
    }

    /// Decompresses `input`, handing each produced chunk to `sink`.
    func feed(_ input: UnsafeRawBufferPointer,
              into sink: (UnsafeRawBufferPointer) throws(PackReadError) -> Void) throws(PackReadError) {
        guard !input.isEmpty else { return }
        if isComplete { throw .trailingData(offset: frameOffset, bytes: Int64(input.count)) }
        if !headerChecked { try checkHeader(input) }
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outputFilled = false
        // A full output buffer may leave decoded bytes pending inside zstd: call again until it is not.
        while source.pos < source.size || outputFilled {
            var target = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
            let result = ZSTD_decompressStream(context, &target, &source)
            if ZSTD_isError(result) != 0 { throw decodingError(result) }
            producedBytes += Int64(target.pos)
            if producedBytes > maxContentSize {
                throw .frameTooLarge(offset: frameOffset, limit: maxContentSize)
            }
            if target.pos > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<target.pos])) }
            outputFilled = target.pos == target.size
            if result == 0 {
                isComplete = true
                if source.pos < source.size {
                    throw .trailingData(offset: frameOffset, bytes: Int64(source.size - source.pos))
                }
                return
            }
        }
    }

    /// Throws unless the frame ended; call after the last input.
    func finish() throws(PackReadError) {
        guard isComplete else { throw .truncatedFrame(offset: frameOffset) }
    }

    /// Requires a zstd magic number, a declared content size within the limit and a checksum flag.
    private func checkHeader(_ input: UnsafeRawBufferPointer) throws(PackReadError) {
        pendingHeader.append(contentsOf: input.prefix(18 - pendingHeader.count))
        let contentSize = pendingHeader.withUnsafeBytes { ZSTD_getFrameContentSize($0.baseAddress, $0.count) }
        if pendingHeader.count >= 4,
           pendingHeader[0..<4] != [0x28, 0xB5, 0x2F, 0xFD] {
            throw .notZstd(offset: frameOffset)
        }
        if contentSize == ZSTD_CONTENTSIZE_ERROR {
            // Too few bytes to hold the header yet (it is at most 18 bytes): wait for more input.
            if pendingHeader.count < 18 { return }
            throw .badFrameHeader(offset: frameOffset, reason: "unreadable frame header")
        }
        guard contentSize != ZSTD_CONTENTSIZE_UNKNOWN else {
            throw .badFrameHeader(offset: frameOffset, reason: "the frame does not declare its content size")
        }
        guard pendingHeader[4] & 0x04 != 0 else {
            throw .badFrameHeader(offset: frameOffset, reason: "the frame has no content checksum")
        }
        guard contentSize <= UInt64(maxContentSize) else {
            throw .frameTooLarge(offset: frameOffset, limit: maxContentSize)
        }
        headerChecked = true
        pendingHeader = []
    }

    private func decodingError(_ code: Int) -> PackReadError {
        if ZSTD_getErrorCode(code) == ZSTD_error_checksum_wrong { return .checksumMismatch(offset: frameOffset) }
        if ZSTD_getErrorCode(code) == ZSTD_error_prefix_unknown { return .notZstd(offset: frameOffset) }
        // zstd stops a frame whose data outgrows the content size its header declares: a bomb.
        if ZSTD_getErrorCode(code) == ZSTD_error_dstSize_tooSmall { return .frameTooLarge(offset: frameOffset, limit: maxContentSize) }
        return .corruptFrame(offset: frameOffset, reason: String(cString: ZSTD_getErrorName(code)))
    }
}

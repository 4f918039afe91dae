import GifPackZstd

/// Decompresses exactly one zstd frame held in memory, with a hard cap on output, using the
/// pure-Swift decoder (``GifPackZstd``).
///
/// Before any decompression the frame header must declare its content size (at most
/// `maxContentSize`, so a bomb is refused from its first bytes) and a content checksum, which the
/// decoder verifies at the end of the frame; a frame whose data outgrows the size it declares is
/// refused as corrupt. Bytes left over after the frame ends (trailing bytes or a second frame) are
/// an error. Each call uses a decoder of its own, so the type has no state.
enum ZstdEntryFrameDecoder {
    /// The longest compressed frame that can hold at most `contentSize` bytes: the content stored
    /// raw (3 bytes of block header per 128 KiB block), an 18-byte frame header and a 4-byte
    /// checksum, with room to spare. A longer range is refused before it is read.
    static func maxCompressedLength(contentSize: Int64) -> Int64 {
        contentSize + contentSize / 4096 + 4096
    }

    /// Decodes the frame in `frame` (which starts at file offset `frameOffset`), handing each
    /// decoded chunk (at most 128 KiB, valid during the call) to `sink`.
    static func decode(
        _ frame: UnsafeRawBufferPointer, frameOffset: Int64, maxContentSize: Int64,
        into sink: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackReadError) {
        let fields = try ZstdFrameHeaderFields.parse(frame, at: frameOffset)
        guard fields.skippableLength == nil else { throw .notZstd(offset: frameOffset) }
        guard fields.declaresContentSize else {
            throw .badFrameHeader(offset: frameOffset, reason: "the frame does not declare its content size")
        }
        guard fields.hasChecksum else {
            throw .badFrameHeader(offset: frameOffset, reason: "the frame has no content checksum")
        }
        guard let contentSize = fields.contentSize, contentSize <= maxContentSize else {
            throw .frameTooLarge(offset: frameOffset, limit: maxContentSize)
        }
        var sinkError: PackReadError?
        let result: ZstdDecoder.FrameResult
        do {
            result = try ZstdDecoder().decompressFrame(frame, maxOutput: Int(clamping: maxContentSize)) { chunk in
                do throws(PackReadError) { try sink(chunk) } catch {
                    sinkError = error
                    throw error
                }
            }
        } catch {
            if let sinkError { throw sinkError }
            guard let error = error as? ZstdDecodingError else {
                throw .corruptFrame(offset: frameOffset, reason: "\(error)")
            }
            switch error.kind {
            case .truncated: throw .truncatedFrame(offset: frameOffset)
            case .checksumMismatch: throw .checksumMismatch(offset: frameOffset)
            case .outputLimitExceeded: throw .frameTooLarge(offset: frameOffset, limit: maxContentSize)
            case .corrupt, .unsupported, .windowTooLarge:
                throw .corruptFrame(offset: frameOffset, reason: "\(error.reason) (at byte \(error.offset) of the frame)")
            }
        }
        if result.inputBytes < frame.count {
            throw .trailingData(offset: frameOffset, bytes: Int64(frame.count - result.inputBytes))
        }
    }
}

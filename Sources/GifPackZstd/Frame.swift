// Frames (RFC 8878, 3.1): magic number, frame header, blocks, content checksum; skippable frames.

let zstdMagic: UInt32 = 0xFD2F_B528
let skippableMagicMask: UInt32 = 0xFFFF_FFF0
let skippableMagic: UInt32 = 0x184D_2A50

@inline(__always) func readLE32(_ p: UnsafePointer<UInt8>) -> UInt32 {
    UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self))
}

/// What a frame header says (RFC 8878, 3.1.1.1).
public struct ZstdFrameHeader: Sendable, Equatable {
    /// Bytes of the header, magic number included.
    public var headerSize: Int
    /// How far back matches may reach (for single-segment frames: the content size).
    public var windowSize: Int
    /// The decompressed size, when the frame declares it.
    public var contentSize: Int?
    /// Whether the frame ends with a 4-byte XXH64 content checksum.
    public var hasChecksum: Bool
    /// Whether the frame is single-segment (its window is its whole content).
    public var isSingleSegment: Bool
}

enum ParsedFrame {
    case zstd(ZstdFrameHeader)
    /// A skippable frame of this many bytes, header included.
    case skippable(Int)
}

enum FrameParser {
    /// Parses the frame starting at `src[0]` (input offset `at`), `count` bytes available.
    static func parse(_ src: UnsafePointer<UInt8>, count: Int, at: Int) throws(ZstdDecodingError) -> ParsedFrame {
        guard count >= 4 else {
            throw ZstdDecodingError(.truncated, "input ends inside a frame's magic number", offset: at)
        }
        let magic = readLE32(src)
        if magic & skippableMagicMask == skippableMagic {
            guard count >= 8 else {
                throw ZstdDecodingError(.truncated, "input ends inside a skippable frame's header", offset: at)
            }
            let size = Int(readLE32(src + 4))
            guard size <= count - 8 else {
                throw ZstdDecodingError(.truncated, "skippable frame of \(size) bytes runs past the input", offset: at)
            }
            return .skippable(8 + size)
        }
        guard magic == zstdMagic else {
            let hex = String(magic, radix: 16)
            throw ZstdDecodingError(.corrupt, "not a zstd frame (magic number 0x\(hex))", offset: at)
        }
        guard count >= 5 else {
            throw ZstdDecodingError(.truncated, "input ends before the frame header descriptor", offset: at + 4)
        }
        let descriptor = Int(src[4])
        let fcsFlag = descriptor >> 6
        let singleSegment = descriptor & 0x20 != 0
        guard descriptor & 0x08 == 0 else {
            throw ZstdDecodingError(.corrupt, "reserved bit of the frame header descriptor is set", offset: at + 4)
        }
        let hasChecksum = descriptor & 0x04 != 0
        let dictionaryIDSize = [0, 1, 2, 4][descriptor & 3]
        let contentSizeSize = fcsFlag == 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]
        let headerSize = 5 + (singleSegment ? 0 : 1) + dictionaryIDSize + contentSizeSize
        guard count >= headerSize else {
            throw ZstdDecodingError(.truncated, "input ends inside the \(headerSize)-byte frame header", offset: at)
        }
        var p = 5
        var windowSize = 0
        if !singleSegment {
            let wd = Int(src[p])
            let windowLog = 10 + (wd >> 3)
            // RFC 8878 lets the descriptor say up to 41; libzstd 1.5.4 refuses more than 31
            // (ZSTD_WINDOWLOG_MAX on 64 bits) whatever the frame declares besides, and so does this decoder.
            guard windowLog <= 31 else {
                throw ZstdDecodingError(.windowTooLarge, "frame declares a window log of \(windowLog), more than 31", offset: at + 5)
            }
            let windowBase = 1 << windowLog
            windowSize = windowBase + (windowBase >> 3) * (wd & 7)
            p += 1
        }
        var dictionaryID: UInt64 = 0
        for i in 0..<dictionaryIDSize { dictionaryID |= UInt64(src[p + i]) << UInt64(8 * i) }
        p += dictionaryIDSize
        if dictionaryID != 0 {
            throw ZstdDecodingError(.unsupported, "frame needs dictionary \(dictionaryID); dictionaries are not supported", offset: at + 5)
        }
        var contentSize: Int? = nil
        if contentSizeSize > 0 {
            var value: UInt64 = 0
            for i in 0..<contentSizeSize { value |= UInt64(src[p + i]) << UInt64(8 * i) }
            if contentSizeSize == 2 { value += 256 }
            guard value <= UInt64(Int.max / 2) else {
                throw ZstdDecodingError(.outputLimitExceeded, "frame declares a content size of \(value) bytes", offset: at + p)
            }
            contentSize = Int(value)
        }
        if singleSegment {
            // contentSizeSize >= 1 for single-segment frames, so contentSize is set.
            windowSize = contentSize ?? 0
        }
        return .zstd(
            ZstdFrameHeader(
                headerSize: headerSize, windowSize: windowSize, contentSize: contentSize,
                hasChecksum: hasChecksum, isSingleSegment: singleSegment))
    }
}

/// The output memory of a frame: `base[0..<capacity]` usable plus `outputSlack` bytes for wild
/// copies. One-shot decoding grows it (`growable`); streaming decoding slides the window back to
/// the start (`sliding`); a caller-sized buffer does neither.
struct OutputBuffer {
    var base: UnsafeMutablePointer<UInt8>
    var capacity: Int
    var pos: Int
    var historyStart: Int
    let growable: Bool
    let sliding: Bool
    /// Growth never goes past this capacity.
    let maxCapacity: Int

    static func allocate(capacity: Int, growable: Bool, sliding: Bool, maxCapacity: Int) -> OutputBuffer {
        // Not zero-filled: the decoder reads only bytes it wrote (matches reach back into the
        // output; the wild copies' over-reads stay behind the write position).
        let base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + outputSlack)
        return OutputBuffer(
            base: base, capacity: capacity, pos: 0, historyStart: 0, growable: growable, sliding: sliding,
            maxCapacity: maxCapacity)
    }

    /// Makes room for `count` more bytes after `pos` (keeping `window` bytes of history when sliding).
    mutating func reserve(_ count: Int, window: Int) {
        if pos + count <= capacity { return }
        if sliding {
            let keep = min(window, pos - historyStart)
            if keep > 0 { base.update(from: base + (pos - keep), count: keep) }
            pos = keep
            historyStart = 0
            if pos + count <= capacity { return }
        }
        guard growable else { return }
        var newCapacity = max(pos + count, capacity * 2)
        newCapacity = min(newCapacity, max(maxCapacity, pos + count))
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity + outputSlack)
        newBase.update(from: base, count: pos)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}

/// Progress through one frame's blocks.
struct FrameProgress {
    let header: ZstdFrameHeader
    /// Input offset of the next block header.
    var inputPos: Int
    /// Bytes of this frame decoded so far.
    var produced = 0
    /// Upper bound of this frame's output: what remains of the caller's limit.
    let maxOutput: Int
    /// The caller's whole limit (for messages).
    let callerLimit: Int
    var hasher = XXH64()
    var finished = false
    let blockSizeMax: Int
    /// libzstd 1.5.4 decodes a frame that declares a content size of at most 128 KiB in one pass
    /// (ZSTD_decompress, or ZSTD_decompressStream given a 128 KiB output buffer, as `zstd -d` gives it)
    /// and any other frame block by block (ZSTD_decompressContinue); where the two read a frame
    /// differently, this decoder reads it as the way libzstd takes for it does.
    let decodedInOnePass: Bool

    init(header: ZstdFrameHeader, inputPos: Int, maxOutput: Int, callerLimit: Int) {
        self.header = header
        self.inputPos = inputPos
        self.maxOutput = maxOutput
        self.callerLimit = callerLimit
        if let size = header.contentSize, size <= zstdBlockSizeMax {
            decodedInOnePass = true
        } else {
            decodedInOnePass = false
        }
        // Block_Maximum_Size is the smaller of the window and 128 KiB, as block by block. The one pass
        // holds a compressed block's bytes to 128 KiB and what the blocks decode to to the content size,
        // whatever the window: 128 KiB then (the content size, at most that, bounds the output).
        blockSizeMax = decodedInOnePass ? zstdBlockSizeMax : min(header.windowSize, zstdBlockSizeMax)
    }
}

extension DecoderContext {
    /// Decodes the frame's next block into `out` and returns where its bytes are in `out`.
    /// After the last block, checks the content size and checksum and sets `frame.finished`.
    func decodeNextBlock(
        _ input: UnsafePointer<UInt8>, inputCount: Int, frame: inout FrameProgress, out: inout OutputBuffer
    ) throws(ZstdDecodingError) -> Range<Int> {
        let at = frame.inputPos
        guard inputCount - at >= 3 else {
            throw ZstdDecodingError(.truncated, "input ends inside a block header", offset: at)
        }
        let blockHeader = Int(input[at]) | Int(input[at + 1]) << 8 | Int(input[at + 2]) << 16
        let isLast = blockHeader & 1 != 0
        let blockSize = blockHeader >> 3
        // A compressed block of 0 bytes has no literals section; libzstd's block-by-block decoding takes
        // it for an empty block (its one pass refuses it), and so does this decoder for such frames.
        var type = (blockHeader >> 1) & 3
        if type == 2 && blockSize == 0 && !frame.decodedInOnePass { type = 0 }
        let contentAt = at + 3
        let available = inputCount - contentAt
        guard blockSize <= frame.blockSizeMax else {
            throw ZstdDecodingError(.corrupt, "block of \(blockSize) bytes exceeds the block size limit \(frame.blockSizeMax)", offset: at)
        }
        // Output allowed for this block: the block limit, the caller's limit, the declared content size.
        var room = frame.blockSizeMax
        var limit = OutputLimit.blockSize(frame.blockSizeMax)
        if frame.maxOutput - frame.produced < room {
            room = frame.maxOutput - frame.produced
            limit = .caller(frame.callerLimit)
        }
        if let contentSize = frame.header.contentSize, contentSize - frame.produced < room {
            room = contentSize - frame.produced
            limit = .contentSize(contentSize)
        }
        let start: Int
        let end: Int
        switch type {
        case 0:
            guard blockSize <= available else {
                throw ZstdDecodingError(.truncated, "raw block of \(blockSize) bytes runs past the input", offset: at)
            }
            guard blockSize <= room else { throw limit.error(at: at) }
            out.reserve(blockSize, window: frame.header.windowSize)
            guard out.pos + blockSize <= out.capacity else { throw limit.error(at: at) }
            start = out.pos
            (out.base + start).update(from: input + contentAt, count: blockSize)
            end = start + blockSize
            frame.inputPos = contentAt + blockSize
        case 1:
            guard available >= 1 else {
                throw ZstdDecodingError(.truncated, "RLE block byte is missing", offset: at)
            }
            guard blockSize <= room else { throw limit.error(at: at) }
            out.reserve(blockSize, window: frame.header.windowSize)
            guard out.pos + blockSize <= out.capacity else { throw limit.error(at: at) }
            start = out.pos
            (out.base + start).update(repeating: input[contentAt], count: blockSize)
            end = start + blockSize
            frame.inputPos = contentAt + 1
        case 2:
            guard blockSize <= available else {
                throw ZstdDecodingError(.truncated, "compressed block of \(blockSize) bytes runs past the input", offset: at)
            }
            out.reserve(room, window: frame.header.windowSize)
            guard out.pos + room <= out.capacity else { throw limit.error(at: at) }
            start = out.pos
            let blockOutput = BlockOutput(
                base: out.base, pos: start, historyStart: out.historyStart, end: start + room,
                limit: limit, windowSize: frame.header.windowSize)
            end = try decodeCompressedBlock(input + contentAt, size: blockSize, at: contentAt, output: blockOutput)
            frame.inputPos = contentAt + blockSize
        default:
            throw ZstdDecodingError(.corrupt, "reserved block type", offset: at)
        }
        out.pos = end
        frame.produced += end - start
        if frame.header.hasChecksum {
            frame.hasher.update(UnsafeRawBufferPointer(start: out.base + start, count: end - start))
        }
        if isLast {
            if let contentSize = frame.header.contentSize, contentSize != frame.produced {
                throw ZstdDecodingError(.corrupt, "frame decodes to \(frame.produced) bytes but declares \(contentSize)", offset: at)
            }
            if frame.header.hasChecksum {
                guard inputCount - frame.inputPos >= 4 else {
                    throw ZstdDecodingError(.truncated, "input ends inside the content checksum", offset: frame.inputPos)
                }
                let stored = readLE32(input + frame.inputPos)
                let computed = UInt32(truncatingIfNeeded: frame.hasher.digest())
                guard stored == computed else {
                    throw ZstdDecodingError(.checksumMismatch, "content checksum mismatch", offset: frame.inputPos)
                }
                frame.inputPos += 4
            }
            frame.finished = true
        }
        return start..<end
    }
}

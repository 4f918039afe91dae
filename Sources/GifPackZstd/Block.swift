// Compressed blocks (RFC 8878, 3.1.1.3): the limits of a block's output, and its literals section
// (raw, RLE or Huffman-coded). The sequences section and the execution of sequences are in
// Sequences.swift, the sequence decoding tables in SequenceTables.swift.

/// Where a block's output goes: `base[pos...]`, at most up to `end` (exclusive), with
/// `outputSlack` writable bytes after `end`. Matches may reach back to `historyStart`.
struct BlockOutput {
    var base: UnsafeMutablePointer<UInt8>
    var pos: Int
    var historyStart: Int
    /// The block may not end after this position.
    var end: Int
    /// Which limit `end` is.
    var limit: OutputLimit
    var windowSize: Int
}

/// The limit that bounds a block's output.
enum OutputLimit {
    /// The format's Block_Maximum_Size (bytes).
    case blockSize(Int)
    /// The caller's `maxOutput` (bytes).
    case caller(Int)
    /// The frame's declared content size (bytes).
    case contentSize(Int)

    func error(at: Int) -> ZstdDecodingError {
        switch self {
        case .blockSize(let n):
            ZstdDecodingError(.corrupt, "block decodes to more than the block size limit \(n)", offset: at)
        case .caller(let n):
            ZstdDecodingError(.outputLimitExceeded, "the data decodes to more bytes than the output limit \(n)", offset: at)
        case .contentSize(let n):
            ZstdDecodingError(.corrupt, "frame decodes to more bytes than its declared content size \(n)", offset: at)
        }
    }
}

extension DecoderContext {
    /// Decodes one compressed block at `src[0..<size]` (input offset `at`) into `output`;
    /// returns the new output position.
    func decodeCompressedBlock(
        _ src: UnsafePointer<UInt8>, size: Int, at: Int, output: BlockOutput
    ) throws(ZstdDecodingError) -> Int {
        let (literalsUsed, literalCount) = try decodeLiterals(src, size: size, at: at)
        // The wild copies read up to `literalSlack` bytes past the last literal: give them
        // initialized bytes (the buffer is not zero-filled when allocated).
        (literalBuffer + literalCount).initialize(repeating: 0, count: literalSlack)
        return try decodeSequences(
            src + literalsUsed, size: size - literalsUsed, at: at + literalsUsed,
            literalCount: literalCount, output: output)
    }

    // MARK: Literals

    /// Decodes the literals section into `literalBuffer`; returns (bytes used, literal count).
    private func decodeLiterals(_ src: UnsafePointer<UInt8>, size: Int, at: Int) throws(ZstdDecodingError) -> (Int, Int) {
        guard size >= 1 else {
            throw ZstdDecodingError(.truncated, "compressed block has no literals section", offset: at)
        }
        let b0 = Int(src[0])
        let type = b0 & 3
        let sizeFormat = (b0 >> 2) & 3
        if type <= 1 {
            // Raw or RLE literals.
            let headerSize: Int
            let count: Int
            switch sizeFormat {
            case 0, 2:
                headerSize = 1
                count = b0 >> 3
            case 1:
                headerSize = 2
                guard size >= 2 else { throw ZstdDecodingError(.truncated, "literals section header", offset: at) }
                count = (b0 >> 4) + (Int(src[1]) << 4)
            default:
                headerSize = 3
                guard size >= 3 else { throw ZstdDecodingError(.truncated, "literals section header", offset: at) }
                count = (b0 >> 4) + (Int(src[1]) << 4) + (Int(src[2]) << 12)
            }
            guard count <= zstdBlockSizeMax else {
                throw ZstdDecodingError(.corrupt, "\(count) literals exceed the block size limit", offset: at)
            }
            if type == 0 {
                guard headerSize + count <= size else {
                    throw ZstdDecodingError(.truncated, "\(count) raw literals run past the block", offset: at)
                }
                literalBuffer.update(from: src + headerSize, count: count)
                return (headerSize + count, count)
            }
            guard headerSize + 1 <= size else {
                throw ZstdDecodingError(.truncated, "RLE literals byte is missing", offset: at)
            }
            literalBuffer.update(repeating: src[headerSize], count: count)
            return (headerSize + 1, count)
        }
        // Huffman-compressed literals (type 2), or reusing the previous block's tree (type 3).
        let headerSize: Int
        let sizeBits: Int
        let fourStreams = sizeFormat != 0
        switch sizeFormat {
        case 0, 1: headerSize = 3; sizeBits = 10
        case 2: headerSize = 4; sizeBits = 14
        default: headerSize = 5; sizeBits = 18
        }
        guard size >= headerSize else {
            throw ZstdDecodingError(.truncated, "literals section header", offset: at)
        }
        var header: UInt64 = 0
        for i in 0..<headerSize { header |= UInt64(src[i]) << UInt64(8 * i) }
        let mask = (UInt64(1) << UInt64(sizeBits)) - 1
        let count = Int((header >> 4) & mask)
        let compressedSize = Int((header >> UInt64(4 + sizeBits)) & mask)
        guard count <= zstdBlockSizeMax else {
            throw ZstdDecodingError(.corrupt, "\(count) literals exceed the block size limit", offset: at)
        }
        guard headerSize + compressedSize <= size else {
            throw ZstdDecodingError(.truncated, "\(compressedSize) bytes of compressed literals run past the block", offset: at)
        }
        var streams = src + headerSize
        var streamsSize = compressedSize
        var streamsAt = at + headerSize
        if type == 2 {
            let treeSize = try readHuffmanTree(base: streams, size: streamsSize, at: streamsAt)
            streams += treeSize
            streamsSize -= treeSize
            streamsAt += treeSize
        } else {
            guard hasHuffmanTable else {
                throw ZstdDecodingError(.corrupt, "literals reuse a Huffman tree but none was defined in this frame", offset: at)
            }
        }
        if fourStreams {
            try decodeFourHuffmanStreams(streams, size: streamsSize, into: literalBuffer, count: count, at: streamsAt)
        } else {
            try decodeHuffmanStream(streams, size: streamsSize, into: literalBuffer, count: count, at: streamsAt)
        }
        return (headerSize + compressedSize, count)
    }
}

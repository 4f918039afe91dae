// The decoder's working memory, reused by every block of a frame: literal buffer, Huffman table,
// the three sequence tables (kept between blocks for the "repeat" modes), the repeat offsets, and
// scratch for building tables. Everything is allocated once, bounded, and freed with the context.

/// Largest decompressed block (RFC 8878, Block_Maximum_Size).
let zstdBlockSizeMax = 128 * 1024
/// Bytes past the end of the literals that wild copies may read.
let literalSlack = 32
/// Bytes past the end of the output that wild copies may write.
let outputSlack = 64

final class DecoderContext {
    let literalBuffer: UnsafeMutablePointer<UInt8>
    let huffmanTable: UnsafeMutablePointer<UInt16>
    let huffmanWeights: UnsafeMutablePointer<UInt8>
    var hasHuffmanTable = false
    /// Bits that index `huffmanTable`: 11, or 12 for a 12-bit tree.
    var huffmanTableBits = huffmanFastBits

    let normalizedCounts: UnsafeMutablePointer<Int16>
    let scratchSymbols: UnsafeMutablePointer<UInt8>
    let scratchBits: UnsafeMutablePointer<UInt8>
    let scratchStates: UnsafeMutablePointer<UInt16>
    let scratchNext: UnsafeMutablePointer<UInt16>

    /// Tables built from a block's FSE description or RLE symbol.
    let literalLengthTable: UnsafeMutablePointer<SequenceEntry>
    let offsetTable: UnsafeMutablePointer<SequenceEntry>
    let matchLengthTable: UnsafeMutablePointer<SequenceEntry>
    /// The predefined tables (literal lengths at 0, offsets at 64, match lengths at 96), built on
    /// first use and kept.
    let predefinedTables: UnsafeMutablePointer<SequenceEntry>
    var predefinedReady = false
    /// The tables the current block uses: a built one or a predefined one.
    var currentLiteralLengthTable: UnsafePointer<SequenceEntry>
    var currentOffsetTable: UnsafePointer<SequenceEntry>
    var currentMatchLengthTable: UnsafePointer<SequenceEntry>
    /// Base value and additional bits of each symbol: literal lengths at 0, offsets at 64,
    /// match lengths at 128.
    let codeBase: UnsafeMutablePointer<UInt32>
    let codeBits: UnsafeMutablePointer<UInt8>
    /// Accuracy log of each sequence table; -1 until a block of this frame defines it.
    var literalLengthLog = -1
    var offsetLog = -1
    var matchLengthLog = -1

    var repeatOffsets: (Int, Int, Int) = (1, 4, 8)

    init() {
        // Not zero-filled (a new decoder per frame must be cheap): each block writes its literals
        // and the slack after them before anything reads them.
        literalBuffer = .allocate(capacity: zstdBlockSizeMax + literalSlack)
        huffmanTable = .allocate(capacity: huffmanTableSize)
        huffmanTable.initialize(repeating: 0, count: huffmanTableSize)
        huffmanWeights = .allocate(capacity: 256)
        huffmanWeights.initialize(repeating: 0, count: 256)
        normalizedCounts = .allocate(capacity: 256)
        normalizedCounts.initialize(repeating: 0, count: 256)
        scratchSymbols = .allocate(capacity: 512)
        scratchSymbols.initialize(repeating: 0, count: 512)
        scratchBits = .allocate(capacity: 512)
        scratchBits.initialize(repeating: 0, count: 512)
        scratchStates = .allocate(capacity: 512)
        scratchStates.initialize(repeating: 0, count: 512)
        scratchNext = .allocate(capacity: 256)
        scratchNext.initialize(repeating: 0, count: 256)
        let empty = SequenceEntry(newState: 0, nbBits: 0, additionalBits: 0, baseValue: 0)
        literalLengthTable = .allocate(capacity: 512)
        literalLengthTable.initialize(repeating: empty, count: 512)
        offsetTable = .allocate(capacity: 256)
        offsetTable.initialize(repeating: empty, count: 256)
        matchLengthTable = .allocate(capacity: 512)
        matchLengthTable.initialize(repeating: empty, count: 512)
        predefinedTables = .allocate(capacity: 160)
        predefinedTables.initialize(repeating: empty, count: 160)
        currentLiteralLengthTable = UnsafePointer(literalLengthTable)
        currentOffsetTable = UnsafePointer(offsetTable)
        currentMatchLengthTable = UnsafePointer(matchLengthTable)
        codeBase = .allocate(capacity: 192)
        codeBase.initialize(repeating: 0, count: 192)
        codeBits = .allocate(capacity: 192)
        codeBits.initialize(repeating: 0, count: 192)
        for (i, v) in SequenceCodes.literalLengthBase.enumerated() { codeBase[i] = v }
        for (i, v) in SequenceCodes.literalLengthBits.enumerated() { codeBits[i] = v }
        for i in 0..<32 {
            codeBase[64 + i] = UInt32(1) << UInt32(i)
            codeBits[64 + i] = UInt8(i)
        }
        for (i, v) in SequenceCodes.matchLengthBase.enumerated() { codeBase[128 + i] = v }
        for (i, v) in SequenceCodes.matchLengthBits.enumerated() { codeBits[128 + i] = v }
    }

    deinit {
        literalBuffer.deallocate()
        huffmanTable.deallocate()
        huffmanWeights.deallocate()
        normalizedCounts.deallocate()
        scratchSymbols.deallocate()
        scratchBits.deallocate()
        scratchStates.deallocate()
        scratchNext.deallocate()
        literalLengthTable.deallocate()
        offsetTable.deallocate()
        matchLengthTable.deallocate()
        predefinedTables.deallocate()
        codeBase.deallocate()
        codeBits.deallocate()
    }

    /// Forgets everything a previous frame defined (tables, repeat offsets).
    func resetForFrame() {
        hasHuffmanTable = false
        literalLengthLog = -1
        offsetLog = -1
        matchLengthLog = -1
        repeatOffsets = (1, 4, 8)
    }
}

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

    let normalizedCounts: UnsafeMutablePointer<Int16>
    let scratchSymbols: UnsafeMutablePointer<UInt8>
    let scratchBits: UnsafeMutablePointer<UInt8>
    let scratchStates: UnsafeMutablePointer<UInt16>
    let scratchNext: UnsafeMutablePointer<UInt16>

    let literalLengthTable: UnsafeMutablePointer<SequenceEntry>
    let offsetTable: UnsafeMutablePointer<SequenceEntry>
    let matchLengthTable: UnsafeMutablePointer<SequenceEntry>
    /// Accuracy log of each sequence table; -1 until a block of this frame defines it.
    var literalLengthLog = -1
    var offsetLog = -1
    var matchLengthLog = -1

    var repeatOffsets: (Int, Int, Int) = (1, 4, 8)

    init() {
        literalBuffer = .allocate(capacity: zstdBlockSizeMax + literalSlack)
        literalBuffer.initialize(repeating: 0, count: zstdBlockSizeMax + literalSlack)
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

// Compressed blocks (RFC 8878, 3.1.1.3): literals section, sequences section, and the execution of
// sequences into the output. Bounds are checked per section and per sequence, so the copy loops
// can use unchecked pointer access: every write stays below `outputEnd + outputSlack`, every
// literal read below `literalEnd + literalSlack`, every match read at or after the frame's start.

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

@inline(__always) private func copy16(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>) {
    UnsafeMutableRawPointer(dst).storeBytes(
        of: UnsafeRawPointer(src).loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
}

@inline(__always) private func copy8(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>) {
    UnsafeMutableRawPointer(dst).storeBytes(
        of: UnsafeRawPointer(src).loadUnaligned(as: UInt64.self), as: UInt64.self)
}

@inline(__always) private func copy4(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>) {
    UnsafeMutableRawPointer(dst).storeBytes(
        of: UnsafeRawPointer(src).loadUnaligned(as: UInt32.self), as: UInt32.self)
}

/// Copies `length` bytes 16, then 32 at a time; may write up to 31 bytes past `dst + length` and
/// read up to 31 past `src + length`. `dst` and `src` must be at least 16 apart if they overlap
/// (each 16-byte copy reads after the previous one wrote).
@inline(__always) private func wildCopy16(_ dst: UnsafeMutablePointer<UInt8>, _ src: UnsafePointer<UInt8>, _ length: Int) {
    copy16(dst, src)
    if length <= 16 { return }
    var d = dst + 16
    var s = src + 16
    let end = dst + length
    repeat {
        copy16(d, s)
        copy16(d + 16, s + 16)
        d += 32
        s += 32
    } while d < end
}

enum SequenceKind {
    case literalLength, offset, matchLength

    var name: String {
        switch self {
        case .literalLength: "literal lengths"
        case .offset: "offsets"
        case .matchLength: "match lengths"
        }
    }
    var maxSymbol: Int {
        switch self {
        case .literalLength: 35
        case .offset: 31
        case .matchLength: 52
        }
    }
    var maxLog: Int {
        switch self {
        case .literalLength: 9
        case .offset: 8
        case .matchLength: 9
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

    // MARK: Sequence tables

    /// Builds the table of one sequence symbol kind per its compression mode and makes it the
    /// current one; returns the bytes used.
    private func buildSequenceTable(
        _ kind: SequenceKind, mode: Int, src: UnsafePointer<UInt8>, size: Int, at: Int
    ) throws(ZstdDecodingError) -> Int {
        var log: Int
        var used = 0
        var table: UnsafePointer<SequenceEntry>
        switch mode {
        case 0:
            // Predefined distribution.
            if !predefinedReady { try buildPredefinedTables(at: at) }
            switch kind {
            case .literalLength: table = UnsafePointer(predefinedTables); log = 6
            case .offset: table = UnsafePointer(predefinedTables + 64); log = 5
            case .matchLength: table = UnsafePointer(predefinedTables + 96); log = 6
            }
        case 1:
            // RLE: one symbol, no bits.
            guard size >= 1 else {
                throw ZstdDecodingError(.truncated, "RLE symbol for \(kind.name) is missing", offset: at)
            }
            let symbol = Int(src[0])
            guard symbol <= kind.maxSymbol else {
                throw ZstdDecodingError(.corrupt, "RLE symbol \(symbol) for \(kind.name) exceeds \(kind.maxSymbol)", offset: at)
            }
            scratchSymbols[0] = UInt8(symbol)
            scratchBits[0] = 0
            scratchStates[0] = 0
            log = 0
            used = 1
            table = fillSequenceTable(kind, log: 0, into: ownTable(kind))
        case 2:
            let d = try FSE.readNormalizedCounts(
                base: src, size: size, at: at, maxSymbol: kind.maxSymbol, maxLog: kind.maxLog,
                what: kind.name, counts: normalizedCounts)
            log = d.log
            used = d.bytes
            try FSE.build(
                counts: normalizedCounts, symbols: d.symbols, log: log, at: at, what: kind.name,
                tableSymbols: scratchSymbols, tableBits: scratchBits, tableStates: scratchStates, next: scratchNext)
            table = fillSequenceTable(kind, log: log, into: ownTable(kind))
        default:
            // Repeat: the previous block's table.
            let previous: Int
            switch kind {
            case .literalLength: previous = literalLengthLog
            case .offset: previous = offsetLog
            case .matchLength: previous = matchLengthLog
            }
            guard previous >= 0 else {
                throw ZstdDecodingError(.corrupt, "\(kind.name) repeat the previous table but none was defined in this frame", offset: at)
            }
            return 0
        }
        switch kind {
        case .literalLength:
            literalLengthLog = log
            currentLiteralLengthTable = table
        case .offset:
            offsetLog = log
            currentOffsetTable = table
        case .matchLength:
            matchLengthLog = log
            currentMatchLengthTable = table
        }
        return used
    }

    private func ownTable(_ kind: SequenceKind) -> UnsafeMutablePointer<SequenceEntry> {
        switch kind {
        case .literalLength: literalLengthTable
        case .offset: offsetTable
        case .matchLength: matchLengthTable
        }
    }

    /// Turns the generic table in the scratch arrays (`1 << log` states) into `table`.
    private func fillSequenceTable(
        _ kind: SequenceKind, log: Int, into table: UnsafeMutablePointer<SequenceEntry>
    ) -> UnsafePointer<SequenceEntry> {
        let codes: Int
        switch kind {
        case .literalLength: codes = 0
        case .offset: codes = 64
        case .matchLength: codes = 128
        }
        let base = codeBase + codes
        let bits = codeBits + codes
        let symbols = scratchSymbols, nbBits = scratchBits, states = scratchStates
        for u in 0..<(1 << log) {
            // Symbols are at most kind.maxSymbol (<= 52): checked when the table was read.
            let symbol = Int(symbols[u])
            table[u] = SequenceEntry(newState: states[u], nbBits: nbBits[u], additionalBits: bits[symbol], baseValue: base[symbol])
        }
        return UnsafePointer(table)
    }

    private func buildPredefinedTables(at: Int) throws(ZstdDecodingError) {
        for (kind, defaults, log, start) in [
            (SequenceKind.literalLength, SequenceCodes.literalLengthDefault, 6, 0),
            (.offset, SequenceCodes.offsetDefault, 5, 64),
            (.matchLength, SequenceCodes.matchLengthDefault, 6, 96),
        ] {
            for (i, c) in defaults.enumerated() { normalizedCounts[i] = c }
            try FSE.build(
                counts: normalizedCounts, symbols: defaults.count, log: log, at: at, what: kind.name,
                tableSymbols: scratchSymbols, tableBits: scratchBits, tableStates: scratchStates, next: scratchNext)
            _ = fillSequenceTable(kind, log: log, into: predefinedTables + start)
        }
        predefinedReady = true
    }

    // MARK: Sequences

    private func decodeSequences(
        _ src: UnsafePointer<UInt8>, size: Int, at: Int, literalCount: Int, output: BlockOutput
    ) throws(ZstdDecodingError) -> Int {
        guard size >= 1 else {
            throw ZstdDecodingError(.truncated, "compressed block has no sequences section", offset: at)
        }
        let b0 = Int(src[0])
        var sequenceCount: Int
        var used: Int
        if b0 < 128 {
            sequenceCount = b0
            used = 1
        } else if b0 < 255 {
            guard size >= 2 else { throw ZstdDecodingError(.truncated, "sequences section header", offset: at) }
            sequenceCount = ((b0 - 128) << 8) + Int(src[1])
            used = 2
        } else {
            guard size >= 3 else { throw ZstdDecodingError(.truncated, "sequences section header", offset: at) }
            sequenceCount = Int(src[1]) + (Int(src[2]) << 8) + 0x7F00
            used = 3
        }
        let litStart = UnsafePointer(literalBuffer)
        if sequenceCount == 0 {
            guard used == size else {
                throw ZstdDecodingError(.corrupt, "\(size - used) bytes after a sequences section without sequences", offset: at + used)
            }
            return try appendLiterals(litStart, count: literalCount, output: output, at: at)
        }
        guard size > used else { throw ZstdDecodingError(.truncated, "sequence compression modes are missing", offset: at + used) }
        // RFC 8878 reserves the two low bits; libzstd 1.5.4 (the builder's) ignores them, and so does
        // this decoder, so that it never refuses a frame the builder's reader takes (found by fuzzing).
        let modes = Int(src[used])
        used += 1
        used += try buildSequenceTable(.literalLength, mode: modes >> 6, src: src + used, size: size - used, at: at + used)
        used += try buildSequenceTable(.offset, mode: (modes >> 4) & 3, src: src + used, size: size - used, at: at + used)
        used += try buildSequenceTable(.matchLength, mode: (modes >> 2) & 3, src: src + used, size: size - used, at: at + used)
        let streamSize = size - used
        let streamAt = at + used
        guard streamSize >= 1 else {
            throw ZstdDecodingError(.truncated, "sequences bitstream is missing", offset: streamAt)
        }
        let stream = src + used
        guard stream[streamSize - 1] != 0 else {
            throw ZstdDecodingError(.corrupt, "sequences bitstream has no end marker", offset: streamAt + streamSize - 1)
        }

        let llTable = currentLiteralLengthTable
        let ofTable = currentOffsetTable
        let mlTable = currentMatchLengthTable
        var bits = BackwardBitReader(start: stream, size: streamSize)
        // States are always below their table's size: an initial state is read with `log` bits and
        // each next state is newState + (nbBits bits), which the table construction keeps in range.
        var llState = Int(bits.read(UInt64(literalLengthLog)))
        var ofState = Int(bits.read(UInt64(offsetLog)))
        var mlState = Int(bits.read(UInt64(matchLengthLog)))
        bits.reload()

        var (rep0, rep1, rep2) = repeatOffsets
        let base = output.base
        var op = base + output.pos
        let oend = base + output.end
        let history = UnsafePointer(base + output.historyStart)
        let window = output.windowSize
        var lit = litStart
        let litEnd = litStart + literalCount

        var remaining = sequenceCount
        while remaining > 0 {
            remaining -= 1
            let ll = llTable[llState]
            let ml = mlTable[mlState]
            let of = ofTable[ofState]

            // Offset first, then match length, then literal length (RFC 8878, 4.1.2).
            let ofBits = UInt64(of.additionalBits)
            var offset: Int
            let ofValue = Int(of.baseValue) &+ Int(bits.read(ofBits))
            let mlBits = UInt64(ml.additionalBits)
            let matchLength = Int(ml.baseValue) &+ Int(bits.read(mlBits))
            let llBits = UInt64(ll.additionalBits)
            // At most 57 bits between reloads: 31 + 16 + 16 extra bits and 9 + 9 + 8 state bits do not fit.
            if ofBits &+ mlBits &+ llBits > 31 { bits.reload() }
            let litLength = Int(ll.baseValue) &+ Int(bits.read(llBits))

            // Offset codes of 2 and more (known from the table, before the bits) are new offsets;
            // codes 0 and 1 give offset values 1...3, the repeat offsets (RFC 8878, 3.1.2.5).
            if ofBits > 1 {
                offset = ofValue &- 3
                rep2 = rep1
                rep1 = rep0
                rep0 = offset
            } else {
                let index = ofValue &- 1 &+ (litLength == 0 ? 1 : 0)
                switch index {
                case 0:
                    offset = rep0
                case 1:
                    offset = rep1
                    rep1 = rep0
                    rep0 = offset
                case 2:
                    offset = rep2
                    rep2 = rep1
                    rep1 = rep0
                    rep0 = offset
                default:
                    // Repeated_Offset1 - 1 is 0 only in a corrupt frame; libzstd then uses 1.
                    offset = rep0 == 1 ? 1 : rep0 &- 1
                    rep2 = rep1
                    rep1 = rep0
                    rep0 = offset
                }
            }

            if remaining > 0 {
                // Next states: literal length, match length, offset.
                llState = Int(ll.newState) &+ Int(bits.read(UInt64(ll.nbBits)))
                mlState = Int(ml.newState) &+ Int(bits.read(UInt64(ml.nbBits)))
                ofState = Int(of.newState) &+ Int(bits.read(UInt64(of.nbBits)))
            } else {
                // libzstd 1.5.4 updates the states after the last sequence too (RFC 8878 says not to)
                // and only then checks the stream's end: bits left unread up to those updates' widths
                // are accepted there, so they are consumed (unused) here before the same check.
                _ = bits.read(UInt64(ll.nbBits) &+ UInt64(ml.nbBits) &+ UInt64(of.nbBits))
            }
            bits.reload()

            // Execute: literals, then the match.
            guard litLength <= litEnd - lit else {
                throw ZstdDecodingError(.corrupt, "sequence needs \(litLength) literals, \(litEnd - lit) remain", offset: streamAt)
            }
            guard litLength &+ matchLength <= oend - op else {
                throw outputOverflow(output, at: streamAt)
            }
            wildCopy16(op, lit, litLength)
            op += litLength
            lit += litLength
            guard offset >= 1, offset <= UnsafePointer(op) - history, offset <= window else {
                throw ZstdDecodingError(.corrupt, "match offset \(offset) reaches before the frame's start or window", offset: streamAt)
            }
            var src = UnsafePointer(op - offset)
            if offset >= 16 {
                wildCopy16(op, src, matchLength)
            } else {
                // Overlapping match: spread the first 8 bytes so that the rest is 8 or more apart.
                var dst = op
                let end = op + matchLength
                if offset < 8 {
                    dst[0] = src[0]
                    dst[1] = src[1]
                    dst[2] = src[2]
                    dst[3] = src[3]
                    let add: Int
                    let sub: Int
                    switch offset {
                    case 1: add = 1; sub = 8
                    case 2: add = 2; sub = 8
                    case 3: add = 1; sub = 7
                    case 4: add = 4; sub = 8
                    case 5: add = 4; sub = 9
                    case 6: add = 4; sub = 10
                    default: add = 4; sub = 11
                    }
                    src += add
                    copy4(dst + 4, src)
                    src -= sub
                } else {
                    copy8(dst, src)
                }
                src += 8
                dst += 8
                while dst < end {
                    copy8(dst, src)
                    dst += 8
                    src += 8
                }
            }
            op += matchLength
        }
        // Read exactly to its first bit, or past it: libzstd 1.5.4 accepts an overread sequences
        // bitstream (its last fields then come from the bits the reader wraps round to), so it is
        // accepted here as well; bits left unread are refused by both.
        guard bits.isExactlyConsumed || bits.isOverflowed else {
            throw ZstdDecodingError(.corrupt, "sequences bitstream does not end with its last sequence", offset: streamAt)
        }
        repeatOffsets = (rep0, rep1, rep2)
        var rest = output
        rest.pos = op - base
        return try appendLiterals(lit, count: litEnd - lit, output: rest, at: at)
    }

    /// Copies the literals left after the last sequence.
    private func appendLiterals(
        _ lit: UnsafePointer<UInt8>, count: Int, output: BlockOutput, at: Int
    ) throws(ZstdDecodingError) -> Int {
        guard count <= output.end - output.pos else { throw outputOverflow(output, at: at) }
        (output.base + output.pos).update(from: lit, count: count)
        return output.pos + count
    }

    private func outputOverflow(_ output: BlockOutput, at: Int) -> ZstdDecodingError {
        output.limit.error(at: at)
    }
}

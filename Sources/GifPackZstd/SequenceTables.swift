// The decoding tables of the sequences section (RFC 8878, 3.1.1.3.2.1 and 4.1): literal lengths,
// offsets and match lengths, each predefined, RLE, FSE-compressed or repeated from the previous block.

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
    /// Builds the table of one sequence symbol kind per its compression mode and makes it the
    /// current one; returns the bytes used.
    func buildSequenceTable(
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
            (.matchLength, SequenceCodes.matchLengthDefault, 6, 96)
        ] {
            for (i, c) in defaults.enumerated() { normalizedCounts[i] = c }
            try FSE.build(
                counts: normalizedCounts, symbols: defaults.count, log: log, at: at, what: kind.name,
                tableSymbols: scratchSymbols, tableBits: scratchBits, tableStates: scratchStates, next: scratchNext)
            _ = fillSequenceTable(kind, log: log, into: predefinedTables + start)
        }
        predefinedReady = true
    }
}

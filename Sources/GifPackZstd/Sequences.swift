// The sequences section of a compressed block (RFC 8878, 3.1.1.3.2) and the execution of its
// sequences into the output (3.1.1.4). Bounds are checked per section and per sequence, so the copy
// loops can use unchecked pointer access: every write stays below `outputEnd + outputSlack`, every
// literal read below `literalEnd + literalSlack`, every match read at or after the frame's start.

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

/// Copies a match of `length` bytes from `offset` bytes back (1 or more); may write up to 31 bytes
/// past `op + length`. Overlapping matches (offset below 16) repeat their pattern.
@inline(__always) private func copyMatch(_ op: UnsafeMutablePointer<UInt8>, offset: Int, length: Int) {
    var src = UnsafePointer(op - offset)
    if offset >= 16 {
        wildCopy16(op, src, length)
        return
    }
    // Overlapping match: spread the first 8 bytes so that the rest is 8 or more apart.
    var dst = op
    let end = op + length
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

/// The three repeat offsets (RFC 8878, 3.1.2.5) while a block's sequences are decoded.
struct RepeatOffsets {
    var rep0: Int
    var rep1: Int
    var rep2: Int

    /// The offset of a sequence whose offset code has `codeBits` extra bits and gave `value`:
    /// codes of 2 and more (known from the table, before the bits) are new offsets; codes 0 and 1
    /// give values 1...3, the repeat offsets, shifted by one after a literal length of 0. 0 only
    /// for `Repeated_Offset1 - 1` when `Repeated_Offset1` is 1, which the format calls corrupt
    /// (RFC 8878, 3.1.2.5; libzstd refuses it since 1.5.5): the caller refuses the sequence.
    @inline(__always) mutating func resolve(value: Int, codeBits: UInt64, literalLength: Int) -> Int {
        if codeBits > 1 {
            let offset = value &- 3
            rep2 = rep1
            rep1 = rep0
            rep0 = offset
            return offset
        }
        let offset: Int
        switch value &- 1 &+ (literalLength == 0 ? 1 : 0) {
        case 0:
            return rep0
        case 1:
            offset = rep1
        case 2:
            offset = rep2
            rep2 = rep1
        default:
            // Repeated_Offset1 - 1: 0 (from 1) is corrupt, refused by the caller.
            offset = rep0 &- 1
            rep2 = rep1
        }
        rep1 = rep0
        rep0 = offset
        return offset
    }
}

extension DecoderContext {
    /// Reads the sequences section's header and builds its tables. Returns the number of sequences
    /// and where the bitstream starts in `src` (when there are sequences, it has at least one byte
    /// and its last byte is not zero).
    private func readSequencesHeader(
        _ src: UnsafePointer<UInt8>, size: Int, at: Int
    ) throws(ZstdDecodingError) -> (count: Int, used: Int) {
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
        if sequenceCount == 0 {
            guard used == size else {
                throw ZstdDecodingError(.corrupt, "\(size - used) bytes after a sequences section without sequences", offset: at + used)
            }
            return (0, used)
        }
        guard size > used else { throw ZstdDecodingError(.truncated, "sequence compression modes are missing", offset: at + used) }
        // RFC 8878 reserves the two low bits; libzstd 1.5.4 (the builder's) ignores them, and so does
        // this decoder, so that it never refuses a frame the builder's reader takes (found by fuzzing).
        let modes = Int(src[used])
        used += 1
        used += try buildSequenceTable(.literalLength, mode: modes >> 6, src: src + used, size: size - used, at: at + used)
        used += try buildSequenceTable(.offset, mode: (modes >> 4) & 3, src: src + used, size: size - used, at: at + used)
        used += try buildSequenceTable(.matchLength, mode: (modes >> 2) & 3, src: src + used, size: size - used, at: at + used)
        guard size - used >= 1 else {
            throw ZstdDecodingError(.truncated, "sequences bitstream is missing", offset: at + used)
        }
        guard src[size - 1] != 0 else {
            throw ZstdDecodingError(.corrupt, "sequences bitstream has no end marker", offset: at + size - 1)
        }
        return (sequenceCount, used)
    }

    /// Decodes the sequences section at `src[0..<size]` (input offset `at`) and executes its
    /// sequences with the block's `literalCount` literals into `output`; returns the new output position.
    func decodeSequences(
        _ src: UnsafePointer<UInt8>, size: Int, at: Int, literalCount: Int, output: BlockOutput
    ) throws(ZstdDecodingError) -> Int {
        let litStart = UnsafePointer(literalBuffer)
        let (sequenceCount, used) = try readSequencesHeader(src, size: size, at: at)
        if sequenceCount == 0 {
            return try appendLiterals(litStart, count: literalCount, output: output, at: at)
        }
        let streamAt = at + used
        let llTable = currentLiteralLengthTable
        let ofTable = currentOffsetTable
        let mlTable = currentMatchLengthTable
        var bits = BackwardBitReader(start: src + used, size: size - used)
        // States are always below their table's size: an initial state is read with `log` bits and
        // each next state is newState + (nbBits bits), which the table construction keeps in range.
        var llState = Int(bits.readState(UInt64(literalLengthLog)))
        var ofState = Int(bits.readState(UInt64(offsetLog)))
        var mlState = Int(bits.readState(UInt64(matchLengthLog)))
        bits.reload()

        var reps = RepeatOffsets(rep0: repeatOffsets.0, rep1: repeatOffsets.1, rep2: repeatOffsets.2)
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
            let ofValue = Int(of.baseValue) &+ Int(bits.read(ofBits))
            let mlBits = UInt64(ml.additionalBits)
            let matchLength = Int(ml.baseValue) &+ Int(bits.read(mlBits))
            let llBits = UInt64(ll.additionalBits)
            // At most 57 bits between reloads: 31 + 16 + 16 extra bits and 9 + 9 + 8 state bits do not fit.
            if ofBits &+ mlBits &+ llBits > 31 { bits.reload() }
            let litLength = Int(ll.baseValue) &+ Int(bits.read(llBits))
            let offset = reps.resolve(value: ofValue, codeBits: ofBits, literalLength: litLength)

            if remaining > 0 {
                // Next states: literal length, match length, offset.
                llState = Int(ll.newState) &+ Int(bits.readState(UInt64(ll.nbBits)))
                mlState = Int(ml.newState) &+ Int(bits.readState(UInt64(ml.nbBits)))
                ofState = Int(of.newState) &+ Int(bits.readState(UInt64(of.nbBits)))
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
                if offset == 0 { throw Self.zeroOffset(at: streamAt) }
                throw ZstdDecodingError(.corrupt, "match offset \(offset) reaches before the frame's start or window", offset: streamAt)
            }
            copyMatch(op, offset: offset, length: matchLength)
            op += matchLength
        }
        // Read exactly to its first bit, or past it: libzstd 1.5.4 accepts an overread sequences
        // bitstream (its last fields then come from the bits its reader gives past the start, which
        // `read` and `readState` give as it does), so it is accepted here as well; bits left unread
        // are refused by both.
        guard bits.isExactlyConsumed || bits.isOverflowed else {
            throw ZstdDecodingError(.corrupt, "sequences bitstream does not end with its last sequence", offset: streamAt)
        }
        repeatOffsets = (reps.rep0, reps.rep1, reps.rep2)
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

    /// The refusal of an offset of 0: `Repeated_Offset1 - 1` with `Repeated_Offset1` 1 (RFC 8878,
    /// 3.1.2.5: "the data is considered corrupted"; libzstd refuses it since 1.5.5, 1.5.4 took 1).
    static func zeroOffset(at: Int) -> ZstdDecodingError {
        ZstdDecodingError(.corrupt, "match offset 0 (Repeated_Offset1 - 1 with Repeated_Offset1 = 1)", offset: at)
    }
}

// Finite State Entropy tables (RFC 8878, 4.1): reading a table description (normalized counts)
// and building the decoding table from it.

/// One state of a sequence decoding table (literal lengths, match lengths or offsets): the state's
/// symbol is already turned into its base value and its number of additional bits.
struct SequenceEntry {
    var newState: UInt16
    var nbBits: UInt8
    var additionalBits: UInt8
    var baseValue: UInt32
}

enum FSE {
    /// Reads an FSE table description at `base[0..<size]` into `counts` (one per symbol,
    /// -1 = "less than 1"). Returns the accuracy log, the number of symbols described and the
    /// bytes used. `at` is the input offset of `base`, for errors.
    static func readNormalizedCounts(
        base: UnsafePointer<UInt8>, size: Int, at: Int, maxSymbol: Int, maxLog: Int, what: String,
        counts: UnsafeMutablePointer<Int16>
    ) throws(ZstdDecodingError) -> (log: Int, symbols: Int, bytes: Int) {
        guard size >= 1 else {
            throw ZstdDecodingError(.truncated, "\(what) table description is missing", offset: at)
        }
        var bits = ForwardBitReader(base: base, size: size)
        let log = bits.read(4) + 5
        guard log <= maxLog else {
            throw ZstdDecodingError(.corrupt, "\(what) table accuracy log \(log) exceeds \(maxLog)", offset: at)
        }
        var remaining = (1 << log) + 1
        var threshold = 1 << log
        var nbBits = log + 1
        var symbol = 0
        while remaining > 1 && symbol <= maxSymbol {
            let maxValue = 2 * threshold - 1 - remaining
            var count: Int
            let low = bits.peek(nbBits - 1)
            if low < maxValue {
                count = low
                bits.bitPosition += nbBits - 1
            } else {
                count = bits.peek(nbBits)
                if count >= threshold { count -= maxValue }
                bits.bitPosition += nbBits
            }
            count -= 1
            remaining -= count < 0 ? -count : count
            counts[symbol] = Int16(count)
            symbol += 1
            if count == 0 {
                // Zero probabilities are followed by 2-bit repeat flags: 3 means "three more and another flag".
                var flag = 3
                while flag == 3 {
                    flag = bits.read(2)
                    guard bits.bitPosition <= size * 8 else { break }
                    guard symbol + flag <= maxSymbol + 1 else {
                        throw ZstdDecodingError(.corrupt, "\(what) table describes more than \(maxSymbol + 1) symbols", offset: at)
                    }
                    for _ in 0..<flag {
                        counts[symbol] = 0
                        symbol += 1
                    }
                }
            }
            while remaining < threshold && nbBits > 1 {
                nbBits -= 1
                threshold >>= 1
            }
            guard bits.bitPosition <= size * 8 else {
                throw ZstdDecodingError(.truncated, "\(what) table description runs past the \(size) bytes left for it", offset: at)
            }
        }
        guard remaining == 1 else {
            throw ZstdDecodingError(.corrupt, "\(what) table probabilities do not add up to \(1 << log)", offset: at)
        }
        return (log, symbol, bits.bytesUsed)
    }

    /// Builds the generic decoding table (symbol, bits to read, next state base) of `1 << log` states.
    /// `next` is scratch of at least `symbols` entries.
    static func build(
        counts: UnsafePointer<Int16>, symbols: Int, log: Int, at: Int, what: String,
        tableSymbols: UnsafeMutablePointer<UInt8>, tableBits: UnsafeMutablePointer<UInt8>,
        tableStates: UnsafeMutablePointer<UInt16>, next: UnsafeMutablePointer<UInt16>
    ) throws(ZstdDecodingError) {
        let size = 1 << log
        var high = size - 1
        for s in 0..<symbols {
            let c = Int(counts[s])
            if c == -1 {
                guard high >= 0 else {
                    throw ZstdDecodingError(.corrupt, "\(what) table has too many low-probability symbols", offset: at)
                }
                tableSymbols[high] = UInt8(truncatingIfNeeded: s)
                high -= 1
                next[s] = 1
            } else {
                next[s] = UInt16(truncatingIfNeeded: c)
            }
        }
        let mask = size - 1
        let step = (size >> 1) + (size >> 3) + 3
        var position = 0
        for s in 0..<symbols {
            let c = Int(counts[s])
            if c <= 0 { continue }
            for _ in 0..<c {
                tableSymbols[position] = UInt8(truncatingIfNeeded: s)
                repeat { position = (position + step) & mask } while position > high
            }
        }
        guard position == 0 else {
            throw ZstdDecodingError(.corrupt, "\(what) table cannot be spread", offset: at)
        }
        for u in 0..<size {
            let s = Int(tableSymbols[u])
            let state = Int(next[s])
            next[s] &+= 1
            // state is in 1...2*size-1, so the bit count is in 0...log.
            let bitCount = log - (Int.bitWidth - 1 - state.leadingZeroBitCount)
            tableBits[u] = UInt8(truncatingIfNeeded: bitCount)
            tableStates[u] = UInt16(truncatingIfNeeded: (state << bitCount) - size)
        }
    }
}

/// The symbols of literal lengths, match lengths and offsets (RFC 8878, 3.1.1.3.2.1).
enum SequenceCodes {
    static let literalLengthBase: [UInt32] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
        8192, 16384, 32768, 65536
    ]
    static let literalLengthBits: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
        13, 14, 15, 16
    ]
    static let matchLengthBase: [UInt32] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
        19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
        35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
        4099, 8195, 16387, 32771, 65539
    ]
    static let matchLengthBits: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
        12, 13, 14, 15, 16
    ]
    static let literalLengthDefault: [Int16] = [
        4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
        -1, -1, -1, -1
    ]
    static let matchLengthDefault: [Int16] = [
        1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
        -1, -1, -1, -1, -1
    ]
    static let offsetDefault: [Int16] = [
        1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1
    ]
}

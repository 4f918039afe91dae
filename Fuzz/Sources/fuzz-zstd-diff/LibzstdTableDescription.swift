@testable import GifPackZstd

/// libzstd 1.5.4's reader of FSE table descriptions (`FSE_readNCount_body`, lib/common/entropy_common.c,
/// unchanged since), step for step, to recognise the one way it accepts a description that runs past
/// the bytes left for it.
///
/// It reads 32 bits at a time and never loads past the last 4 bytes of its buffer (a description shorter
/// than 8 bytes is first copied into a zero-filled 8-byte buffer); once the read position reaches the
/// buffer's end it keeps the bit count modulo 32 (`bitCount &= 31`), so it reads the last 4 bytes again
/// from their start instead of failing, and its final checks (`bitCount > 32`, the count size against a
/// short description's size) only see where it ended. A description that needed more bits than the frame
/// holds is then accepted, read from bits the frame gave for other symbols (and the zero padding). Without
/// that wrap the reading is bit for bit GifPackZstd's, which refuses any description running past its bytes.
enum LibzstdTableDescription {
    struct Reading: Equatable {
        /// Accepted: the bytes it says the description used (`FSE_readNCount`'s return value).
        var bytes: Int?
        /// The read position went past the buffer's end and was wrapped round.
        var wrapped: Bool
    }

    /// The disagreement GifPackZstd names "… table description runs past the N bytes left for it" is
    /// this difference when libzstd, given the same N bytes, accepts the description only by wrapping.
    static func explains(_ error: ZstdDecodingError, input: [UInt8]) -> Bool {
        guard error.kind == .truncated, let range = error.reason.range(of: " table description runs past the ") else { return false }
        let maxSymbols: [String: Int] = ["literal lengths": 35, "offsets": 31, "match lengths": 52, "Huffman weights": 255]
        guard let maxSymbol = maxSymbols[String(error.reason[..<range.lowerBound])],
              let size = Int(error.reason[range.upperBound...].prefix { $0.isNumber }),
              error.offset >= 0, size <= input.count - error.offset else { return false }
        let reading = read(Array(input[error.offset..<(error.offset + size)]), maxSymbol: maxSymbol)
        return reading.bytes != nil && reading.wrapped
    }

    /// `FSE_readNCount(counts, &maxSymbol, &log, header, header.count)`.
    static func read(_ header: [UInt8], maxSymbol: Int) -> Reading {
        guard header.count >= 8 else {
            var reading = read(header + [UInt8](repeating: 0, count: 8 - header.count), maxSymbol: maxSymbol)
            if let bytes = reading.bytes, bytes > header.count { reading.bytes = nil }
            return reading
        }
        let end = header.count
        func load(_ at: Int) -> UInt32 {
            UInt32(header[at]) | UInt32(header[at + 1]) << 8 | UInt32(header[at + 2]) << 16 | UInt32(header[at + 3]) << 24
        }
        var wrapped = false
        var ip = 0
        var bitStream = load(0)
        var nbBits = Int(bitStream & 0xF) + 5
        guard nbBits <= 15 else { return Reading(bytes: nil, wrapped: false) }
        bitStream >>= 4
        var bitCount = 4
        var remaining = (1 << nbBits) + 1
        var threshold = 1 << nbBits
        nbBits += 1
        var symbol = 0
        var previousZero = false
        /// Moves `ip` on by the whole bytes of `bitCount`, or to the last 4 bytes (wrapping the count).
        func advance() {
            if ip <= end - 7 || ip + (bitCount >> 3) <= end - 4 {
                ip += bitCount >> 3
                bitCount &= 7
            } else {
                bitCount -= 8 * (end - 4 - ip)
                if bitCount > 31 { wrapped = true }
                bitCount &= 31
                ip = end - 4
            }
            bitStream = load(ip) >> UInt32(bitCount)
        }
        while true {
            if previousZero {
                var repeats = (~bitStream | 0x8000_0000).trailingZeroBitCount >> 1
                while repeats >= 12 {
                    symbol += 3 * 12
                    if ip <= end - 7 {
                        ip += 3
                    } else {
                        bitCount -= 8 * (end - 7 - ip)
                        if bitCount > 31 { wrapped = true }
                        bitCount &= 31
                        ip = end - 4
                    }
                    bitStream = load(ip) >> UInt32(bitCount)
                    repeats = (~bitStream | 0x8000_0000).trailingZeroBitCount >> 1
                }
                symbol += 3 * repeats
                bitStream >>= UInt32(2 * repeats)
                bitCount += 2 * repeats
                symbol += Int(bitStream & 3)
                bitCount += 2
                if symbol >= maxSymbol + 1 { break }
                advance()
            }
            let max = (2 * threshold - 1) - remaining
            var count: Int
            if Int(bitStream & UInt32(threshold - 1)) < max {
                count = Int(bitStream & UInt32(threshold - 1))
                bitCount += nbBits - 1
            } else {
                count = Int(bitStream & UInt32(2 * threshold - 1))
                if count >= threshold { count -= max }
                bitCount += nbBits
            }
            count -= 1
            remaining -= count >= 0 ? count : 1
            symbol += 1
            previousZero = count == 0
            if remaining < threshold {
                if remaining <= 1 { break }
                nbBits = (Int.bitWidth - remaining.leadingZeroBitCount - 1) + 1
                threshold = 1 << (nbBits - 1)
            }
            if symbol >= maxSymbol + 1 { break }
            advance()
        }
        guard remaining == 1, symbol <= maxSymbol + 1, bitCount <= 32 else { return Reading(bytes: nil, wrapped: wrapped) }
        return Reading(bytes: ip + (bitCount + 7) >> 3, wrapped: wrapped)
    }
}

// Bit readers. zstd's entropy-coded streams (Huffman literals, FSE sequences, FSE-coded Huffman
// weights) are read backwards: the encoder wrote them forwards, little-endian, and closed them with
// a 1 bit in the last byte; the decoder starts at that marker and reads towards the first byte,
// most significant bits first. The table descriptions (FSE normalized counts) are read forwards.

@inline(__always) func loadLE64(_ p: UnsafePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
}

/// Backward bit reader over `[start, start + size)`, with a 64-bit container.
///
/// `bitsConsumed` counts bits taken from the top of the container; reading past the start of the
/// stream (a corrupt stream) never touches memory outside it: it makes `bitsConsumed` exceed 64,
/// which the caller finds with ``isOverflowed`` or ``isExactlyConsumed``. Peeks stay in range
/// whatever the state, so table lookups driven by garbage bits stay inside their tables.
struct BackwardBitReader {
    let start: UnsafePointer<UInt8>
    /// Where the container was loaded from (8 bytes, or the whole stream when it is shorter).
    var ptr: UnsafePointer<UInt8>
    var container: UInt64
    var bitsConsumed: UInt64

    /// `size` must be at least 1 and the last byte nonzero (checked by the caller, who knows the offset).
    @inline(__always) init(start: UnsafePointer<UInt8>, size: Int) {
        self.start = start
        let last = start[size - 1]
        let padding = UInt64(last.leadingZeroBitCount) + 1  // zero bits above the marker, and the marker
        if size >= 8 {
            ptr = start + (size - 8)
            container = loadLE64(ptr)
            bitsConsumed = padding
        } else {
            ptr = start
            var c: UInt64 = 0
            for i in 0..<size { c |= UInt64(start[i]) &<< UInt64(8 * i) }
            container = c
            bitsConsumed = padding + UInt64(8 * (8 - size))
        }
    }

    /// Peeks `n` bits (0...57 after a reload), without consuming them.
    @inline(__always) func peek(_ n: UInt64) -> UInt64 {
        ((container &<< (bitsConsumed & 63)) &>> 1) &>> ((63 &- n) & 63)
    }

    /// Reads `n` bits (0...57 after a reload).
    @inline(__always) mutating func read(_ n: UInt64) -> UInt64 {
        let v = peek(n)
        bitsConsumed &+= n
        return v
    }

    /// Reads `n` bits (0...57 after a reload) the way libzstd 1.5.4 reads FSE states (`BIT_readBits`,
    /// through `BIT_getMiddleBits`), while `read` reads as its `BIT_readBitsFast` does. They give the
    /// same bits unless the read reaches past the stream's start (`bitsConsumed + n > 64`, a corrupt
    /// stream that libzstd may still accept, see `decodeSequences`): this one then gives the container's
    /// top bits with zeros above them, `read` wraps round to its bottom bits.
    @inline(__always) mutating func readState(_ n: UInt64) -> UInt64 {
        let v = (container &>> ((64 &- bitsConsumed &- n) & 63)) & ((1 &<< n) &- 1)
        bitsConsumed &+= n
        return v
    }

    /// Refills the container so that at least 57 bits are available, unless the stream's start is
    /// near (then as many as remain).
    @inline(__always) mutating func reload() {
        if bitsConsumed > 64 { return }
        if ptr - start >= 8 {
            ptr -= Int(bitsConsumed &>> 3)
            bitsConsumed &= 7
            container = loadLE64(ptr)
            return
        }
        reloadNearStart()
    }

    @inline(never) mutating func reloadNearStart() {
        if ptr == start { return }
        var bytes = Int(bitsConsumed &>> 3)
        let room = ptr - start
        if bytes > room { bytes = room }
        ptr -= bytes
        bitsConsumed &-= UInt64(bytes &* 8)
        // Only here when the stream is at least 8 bytes long (a shorter one starts with ptr == start).
        container = loadLE64(ptr)
    }

    /// Whether the reader is far enough from the start that `reload()` takes its fast branch.
    @inline(__always) var isFarFromStart: Bool { ptr - start >= 8 }

    /// The stream was read exactly to its first bit.
    var isExactlyConsumed: Bool { ptr == start && bitsConsumed == 64 }

    /// More bits were read than the stream holds.
    var isOverflowed: Bool { bitsConsumed > 64 }
}

/// Forward little-endian bit reader for table descriptions; bounds-checked, reads zeros past the end
/// (the caller checks `bytesUsed` against the size it has).
struct ForwardBitReader {
    let base: UnsafePointer<UInt8>
    let size: Int
    var bitPosition: Int = 0

    init(base: UnsafePointer<UInt8>, size: Int) {
        self.base = base
        self.size = size
    }

    /// Peeks `n` bits (0...24).
    func peek(_ n: Int) -> Int {
        let byte = bitPosition >> 3
        var v: UInt64 = 0
        var i = 0
        while i < 4 {
            let at = byte + i
            if at < size { v |= UInt64(base[at]) << UInt64(8 * i) }
            i += 1
        }
        v >>= UInt64(bitPosition & 7)
        return Int(v & ((1 << UInt64(n)) - 1))
    }

    mutating func read(_ n: Int) -> Int {
        let v = peek(n)
        bitPosition += n
        return v
    }

    var bytesUsed: Int { (bitPosition + 7) >> 3 }
}

/// XXH64 (seed 0 by default), streaming: the hash zstd uses for its content checksum
/// (the low 32 bits of XXH64 of the decompressed content, seed 0).
public struct XXH64: Sendable {
    @inline(__always) static var p1: UInt64 { 11_400_714_785_074_694_791 }
    @inline(__always) static var p2: UInt64 { 14_029_467_366_897_019_727 }
    @inline(__always) static var p3: UInt64 { 1_609_587_929_392_839_161 }
    @inline(__always) static var p4: UInt64 { 9_650_029_242_287_828_579 }
    @inline(__always) static var p5: UInt64 { 2_870_177_450_012_600_261 }

    private var v1: UInt64
    private var v2: UInt64
    private var v3: UInt64
    private var v4: UInt64
    private let seed: UInt64
    private var totalLength: UInt64 = 0
    /// Up to 31 bytes not yet folded into the four lanes.
    private var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var bufferCount = 0

    public init(seed: UInt64 = 0) {
        self.seed = seed
        v1 = seed &+ XXH64.p1 &+ XXH64.p2
        v2 = seed &+ XXH64.p2
        v3 = seed
        v4 = seed &- XXH64.p1
    }

    @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x &<< r) | (x &>> (64 &- r)) }

    @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) static func merge(_ acc: UInt64, _ val: UInt64) -> UInt64 {
        (acc ^ round(0, val)) &* p1 &+ p4
    }

    @inline(__always) static func read64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Adds bytes to the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var count = bytes.count
        var p = base
        totalLength &+= UInt64(count)
        if bufferCount > 0 {
            let take = min(32 - bufferCount, count)
            withUnsafeMutableBytes(of: &buffer) { b in
                b.baseAddress?.advanced(by: bufferCount).copyMemory(from: p, byteCount: take)
            }
            bufferCount += take
            p += take
            count -= take
            if bufferCount < 32 { return }
            let (a, b, c, d) = buffer
            v1 = XXH64.round(v1, UInt64(littleEndian: a))
            v2 = XXH64.round(v2, UInt64(littleEndian: b))
            v3 = XXH64.round(v3, UInt64(littleEndian: c))
            v4 = XXH64.round(v4, UInt64(littleEndian: d))
            bufferCount = 0
        }
        if count >= 32 {
            var a = v1, b = v2, c = v3, d = v4
            let stripes = count / 32
            for _ in 0..<stripes {
                a = XXH64.round(a, XXH64.read64(p, 0))
                b = XXH64.round(b, XXH64.read64(p, 8))
                c = XXH64.round(c, XXH64.read64(p, 16))
                d = XXH64.round(d, XXH64.read64(p, 24))
                p += 32
            }
            v1 = a; v2 = b; v3 = c; v4 = d
            count -= stripes * 32
        }
        if count > 0 {
            withUnsafeMutableBytes(of: &buffer) { b in
                b.baseAddress?.copyMemory(from: p, byteCount: count)
            }
            bufferCount = count
        }
    }

    /// The hash of everything added so far (the state is not changed).
    public func digest() -> UInt64 {
        var h: UInt64
        if totalLength >= 32 {
            h = XXH64.rotl(v1, 1) &+ XXH64.rotl(v2, 7) &+ XXH64.rotl(v3, 12) &+ XXH64.rotl(v4, 18)
            h = XXH64.merge(h, v1)
            h = XXH64.merge(h, v2)
            h = XXH64.merge(h, v3)
            h = XXH64.merge(h, v4)
        } else {
            h = seed &+ XXH64.p5
        }
        h &+= totalLength
        var tail = buffer
        let n = bufferCount
        withUnsafeBytes(of: &tail) { raw in
            guard let p = raw.baseAddress else { return }
            var i = 0
            while i + 8 <= n {
                h ^= XXH64.round(0, XXH64.read64(p, i))
                h = XXH64.rotl(h, 27) &* XXH64.p1 &+ XXH64.p4
                i += 8
            }
            if i + 4 <= n {
                let k = UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self)))
                h ^= k &* XXH64.p1
                h = XXH64.rotl(h, 23) &* XXH64.p2 &+ XXH64.p3
                i += 4
            }
            while i < n {
                h ^= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) &* XXH64.p5
                h = XXH64.rotl(h, 11) &* XXH64.p1
                i += 1
            }
        }
        h ^= h &>> 33
        h &*= XXH64.p2
        h ^= h &>> 29
        h &*= XXH64.p3
        h ^= h &>> 32
        return h
    }

    /// One-shot XXH64 of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var state = XXH64(seed: seed)
        state.update(bytes)
        return state.digest()
    }
}

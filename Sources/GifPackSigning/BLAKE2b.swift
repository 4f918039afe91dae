/// BLAKE2b (RFC 7693), unkeyed, with an output of 1 to 64 bytes.
///
/// minisign prehashes the signed file with BLAKE2b-512 (its `ED` signatures) and checksums a
/// secret key with BLAKE2b-256; swift-crypto has neither, so the index signature uses this one.
/// Streaming: feed any number of chunks with `update(_:)`.
///
/// ```swift
/// var hasher = BLAKE2b(outputLength: 64)
/// hasher.update(Array("abc".utf8))
/// let digest = hasher.finalize()   // ba80a53f981c4d0d…
/// ```
package struct BLAKE2b: Sendable {
    private static let iv: [UInt64] = [
        0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
        0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179
    ]
    private static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]
    ]

    private var h: [UInt64]
    private var buffer: [UInt8] = []
    private var counter: UInt64 = 0  // bytes compressed so far (messages below 2^64 bytes)
    package let outputLength: Int

    /// `outputLength`: 1...64 bytes (64 for BLAKE2b-512).
    package init(outputLength: Int = 64) {
        precondition((1...64).contains(outputLength), "BLAKE2b output is 1 to 64 bytes")
        self.outputLength = outputLength
        h = Self.iv
        h[0] ^= 0x0101_0000 ^ UInt64(outputLength)
        buffer.reserveCapacity(128)
    }

    /// One-shot hash.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes, outputLength: Int = 64) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = BLAKE2b(outputLength: outputLength)
        hasher.update(bytes)
        return hasher.finalize()
    }

    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var position = 0
        while position < bytes.count {
            // The last block is compressed by finalize(), so a full buffer waits for more input.
            if buffer.count == 128 {
                counter &+= 128
                buffer.withUnsafeBytes { compress($0, last: false) }
                buffer.removeAll(keepingCapacity: true)
            }
            if buffer.isEmpty, bytes.count - position > 128 {
                // Whole blocks straight from the input, keeping at least one byte back.
                counter &+= 128
                compress(UnsafeRawBufferPointer(rebasing: bytes[position..<position + 128]), last: false)
                position += 128
                continue
            }
            let take = min(128 - buffer.count, bytes.count - position)
            buffer.append(contentsOf: bytes[position..<position + take])
            position += take
        }
    }

    package mutating func finalize() -> [UInt8] {
        counter &+= UInt64(buffer.count)
        var block = buffer
        block += [UInt8](repeating: 0, count: 128 - block.count)
        block.withUnsafeBytes { compress($0, last: true) }
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for word in h { for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) } }
        return Array(out.prefix(outputLength))
    }

    private static let flatSigma: [Int] = sigma.flatMap { $0 } + sigma[0] + sigma[1]

    private mutating func compress(_ block: UnsafeRawBufferPointer, last: Bool) {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 16) { m in
            for i in 0..<16 { m[i] = UInt64(littleEndian: block.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
            mix(m, last: last)
        }
    }

    private mutating func mix(_ m: UnsafeMutableBufferPointer<UInt64>, last: Bool) {
        @inline(__always) func msg(_ i: Int) -> UInt64 { m[i] }
        var v0 = h[0], v1 = h[1], v2 = h[2], v3 = h[3], v4 = h[4], v5 = h[5], v6 = h[6], v7 = h[7]
        var v8 = Self.iv[0], v9 = Self.iv[1], v10 = Self.iv[2], v11 = Self.iv[3]
        var v12 = Self.iv[4] ^ counter, v13 = Self.iv[5], v14 = Self.iv[6], v15 = Self.iv[7]
        // v13 ^= high 64 bits of the counter: always 0 here.
        if last { v14 = ~v14 }
        @inline(__always) func g(
            _ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64,
            _ x: UInt64, _ y: UInt64
        ) {
            a = a &+ b &+ x
            d = (d ^ a).rotatedRight(32)
            c = c &+ d
            b = (b ^ c).rotatedRight(24)
            a = a &+ b &+ y
            d = (d ^ a).rotatedRight(16)
            c = c &+ d
            b = (b ^ c).rotatedRight(63)
        }
        Self.flatSigma.withUnsafeBufferPointer { sigma in
            for round in 0..<12 {
                let s = round * 16
                g(&v0, &v4, &v8, &v12, msg(sigma[s]), msg(sigma[s + 1]))
                g(&v1, &v5, &v9, &v13, msg(sigma[s + 2]), msg(sigma[s + 3]))
                g(&v2, &v6, &v10, &v14, msg(sigma[s + 4]), msg(sigma[s + 5]))
                g(&v3, &v7, &v11, &v15, msg(sigma[s + 6]), msg(sigma[s + 7]))
                g(&v0, &v5, &v10, &v15, msg(sigma[s + 8]), msg(sigma[s + 9]))
                g(&v1, &v6, &v11, &v12, msg(sigma[s + 10]), msg(sigma[s + 11]))
                g(&v2, &v7, &v8, &v13, msg(sigma[s + 12]), msg(sigma[s + 13]))
                g(&v3, &v4, &v9, &v14, msg(sigma[s + 14]), msg(sigma[s + 15]))
            }
        }
        h[0] ^= v0 ^ v8
        h[1] ^= v1 ^ v9
        h[2] ^= v2 ^ v10
        h[3] ^= v3 ^ v11
        h[4] ^= v4 ^ v12
        h[5] ^= v5 ^ v13
        h[6] ^= v6 ^ v14
        h[7] ^= v7 ^ v15
    }
}

private extension UInt64 {
    @inline(__always) func rotatedRight(_ n: UInt64) -> UInt64 { (self >> n) | (self << (64 - n)) }
}

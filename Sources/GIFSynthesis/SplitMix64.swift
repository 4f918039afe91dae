/// A tiny, fast, deterministic pseudo-random generator (Steele, Lea & Flood's SplitMix64).
///
/// Used where reproducibility matters more than statistical strength: synthesized fixture GIFs
/// must come out byte-identical for the same seed on every platform and Swift version, which
/// `SystemRandomNumberGenerator` cannot promise.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let a = rng.next()   // always the same value for seed 42
/// ```
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence depends only on `seed`.
    package init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 pseudo-random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import GIFSynthesis

extension SplitMix64 {
    /// A generator for one labelled stream of a seed, so independent parts of a generated
    /// catalog (ids, names, GIF recipes) do not shift each other when one draws more numbers.
    ///
    /// ```swift
    /// var names = SplitMix64(seed: 1, stream: 2)
    /// ```
    init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0xD6E8_FEB8_6659_FD93))
        self.init(seed: mixer.next())
    }
}

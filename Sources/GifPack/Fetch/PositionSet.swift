/// A set of positions in a fixed range, one bit each: which exercises of a catalog the fetch
/// still has to request (12.5 KB for 100,000 exercises).
///
/// ```swift
/// var due = PositionSet(range: 0..<100_000)
/// due.insert(42)
/// due.first(from: 0)   // 42
/// ```
struct PositionSet: Sendable {
    let range: Range<Int>
    private var words: [UInt64]
    /// How many positions are in the set.
    private(set) var count = 0

    init(range: Range<Int>) {
        self.range = range
        words = [UInt64](repeating: 0, count: (range.count + 63) / 64)
    }

    mutating func insert(_ position: Int) {
        precondition(range.contains(position), "position \(position) is outside \(range)")
        let bit = position - range.lowerBound
        let mask = UInt64(1) << UInt64(bit % 64)
        guard words[bit / 64] & mask == 0 else { return }
        words[bit / 64] |= mask
        count += 1
    }

    func contains(_ position: Int) -> Bool {
        guard range.contains(position) else { return false }
        let bit = position - range.lowerBound
        return words[bit / 64] & (UInt64(1) << UInt64(bit % 64)) != 0
    }

    /// The smallest position in the set at or after `position`, if any.
    func first(from position: Int) -> Int? {
        let from = max(position, range.lowerBound) - range.lowerBound
        guard from < range.count else { return nil }
        var index = from / 64
        var word = words[index] & (~UInt64(0) << UInt64(from % 64))
        while word == 0 {
            index += 1
            guard index < words.count else { return nil }
            word = words[index]
        }
        return range.lowerBound + index * 64 + word.trailingZeroBitCount
    }
}

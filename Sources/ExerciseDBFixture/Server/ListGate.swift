import Foundation

/// List requests at or past an offset, held unanswered until released: a test's slow last pages,
/// told by order (what the client sent while they were held) rather than by time.
///
/// ```swift
/// server.holdListPages(fromOffset: 30)   // pages at offset 30 and on wait
/// server.holdListPages(fromOffset: nil)  // answered now
/// ```
final class ListGate: @unchecked Sendable {  // @unchecked: `from` is read and written under `condition`.
    private let condition = NSCondition()
    private var from: Int?

    /// Holds list requests at `offset` and past it from now on; nil releases every held one.
    func hold(from offset: Int?) {
        condition.lock()
        from = offset
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a list request at `offset` is not held (at once when it never was).
    func pass(offset: Int) {
        condition.lock()
        defer { condition.unlock() }
        while let from, offset >= from { condition.wait() }
    }
}

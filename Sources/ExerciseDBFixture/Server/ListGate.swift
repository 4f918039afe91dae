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

/// GIF requests for some exercises, held unanswered until released: requests a test keeps in
/// flight, told by what the client sent while they were held rather than by time.
///
/// ```swift
/// server.holdImages(["0001", "0002"])   // their GIF requests wait
/// server.releaseImages(["0001"])        // that one is answered now
/// ```
final class ImageGate: @unchecked Sendable {  // @unchecked: `held` is read and written under `condition`.
    private let condition = NSCondition()
    private var held: Set<String> = []

    /// Holds the GIF requests of `ids` from now on, besides those already held.
    func hold(_ ids: Set<String>) {
        condition.lock()
        held.formUnion(ids)
        condition.unlock()
    }

    /// Answers the held requests of `ids` (of every held exercise when nil) now, and holds them no more.
    func release(_ ids: Set<String>?) {
        condition.lock()
        if let ids { held.subtract(ids) } else { held = [] }
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once a GIF request for `id` is not held (at once when it never was).
    func pass(id: String) {
        condition.lock()
        defer { condition.unlock() }
        while held.contains(id) { condition.wait() }
    }
}

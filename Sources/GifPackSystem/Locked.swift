import Foundation

/// A value that threads share, read and changed only under its lock: the one lock type of the
/// portable client's closure (GifPackSystem, GifPackTransport, GifPackClient, …), which runs from
/// iOS 15 / macOS 12, where Synchronization's `Mutex` (iOS 18) does not exist. Its API is `Mutex`'s
/// (`withLock`), over Foundation's `NSLock`.
///
/// One way per module: the client's closure locks with ``Locked``; the Linux-only modules (the
/// builder, GifPackHTTP, the CLI, the fixture server) with `Mutex`. Waiting for a change (a
/// queue, a countdown) is `NSCondition` in both (``WorkerThread``, ``BlockingPool``).
///
/// ```swift
/// let seen = Locked<Set<String>>([])
/// let isNew = seen.withLock { $0.insert(hash).inserted }
/// ```
package final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock; what `body` returns or throws is passed on.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}  // @unchecked: `value` is only reached inside `withLock`, under `lock`.

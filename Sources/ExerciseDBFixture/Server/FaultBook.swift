import Foundation

/// Which faults are pending for which exercise: a queue consumed one per image request, in
/// order, and an optional persistent default used once the queue is empty.
///
/// ```swift
/// book.schedule([.status(500)], for: "0001")
/// book.next(for: "0001")   // .status(500), then nil (or the default fault)
/// ```
final class FaultBook: @unchecked Sendable {  // @unchecked: every stored property is read and written under `lock`.
    private let lock = NSLock()
    private var queues: [String: [Fault]] = [:]
    private var defaults: [String: Fault] = [:]

    /// Appends to the exercise's queue.
    func schedule(_ faults: [Fault], for id: String) {
        lock.lock()
        queues[id, default: []].append(contentsOf: faults)
        lock.unlock()
    }

    func setDefault(_ fault: Fault?, for id: String) {
        lock.lock()
        defaults[id] = fault
        lock.unlock()
    }

    /// The fault for the next image request of `id`, consuming it if it was scheduled.
    func next(for id: String) -> Fault? {
        lock.lock()
        defer { lock.unlock() }
        if var queue = queues[id], !queue.isEmpty {
            let fault = queue.removeFirst()
            queues[id] = queue.isEmpty ? nil : queue
            return fault
        }
        return defaults[id]
    }
}

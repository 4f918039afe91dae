import Foundation
import Synchronization

/// Which faults are pending for which exercise: a queue consumed one per image request, in
/// order, and an optional persistent default used once the queue is empty.
///
/// ```swift
/// book.schedule([.status(500)], for: "0001")
/// book.next(for: "0001")   // .status(500), then nil (or the default fault)
/// ```
final class FaultBook: Sendable {
    private struct State {
        var queues: [String: [Fault]] = [:]
        var defaults: [String: Fault] = [:]
    }

    private let state = Mutex(State())

    /// Appends to the exercise's queue.
    func schedule(_ faults: [Fault], for id: String) {
        state.withLock { $0.queues[id, default: []].append(contentsOf: faults) }
    }

    func setDefault(_ fault: Fault?, for id: String) {
        state.withLock { $0.defaults[id] = fault }
    }

    /// The fault for the next image request of `id`, consuming it if it was scheduled.
    func next(for id: String) -> Fault? {
        state.withLock { state in
            if var queue = state.queues[id], !queue.isEmpty {
                let fault = queue.removeFirst()
                state.queues[id] = queue.isEmpty ? nil : queue
                return fault
            }
            return state.defaults[id]
        }
    }
}

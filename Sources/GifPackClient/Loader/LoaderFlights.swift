import Foundation
import GifPackSystem

/// Work in flight, shared by the callers that ask for the same thing: the first caller of a key
/// starts it, later ones join, each gets its outcome. A caller that is cancelled leaves at once with
/// `CancellationError`; the work goes on for the others and is cancelled when no one waits for it
/// any more (a new caller then starts it afresh). With `lastWaiterAwaitsCancelledWork` (an install:
/// the cache must be as it was when the call ends), the last caller to be cancelled waits for the
/// cancelled work to end and gets its outcome: an error, or its value when it was past its commit
/// point. A caller may ask for that per call (`awaitsCancelledWork`: a prefetch, whose handle's
/// `finished()` returns once its work has stopped). With `oneAtATime` (an install: two would meet
/// at the cache's lock), a flight started while an abandoned one of the same key is still stopping
/// runs its work once that one has ended.
///
/// ```swift
/// let flights = LoaderFlights<LoadedGIF?>()
/// let gif = try await flights.value(for: .lookup(.exercise("0001"))) { try await load("0001") }   // 20 callers, one load
/// ```
///
/// Its state is under a lock, not an actor: a caller never queues behind other callers' messages
/// (a visible request behind a prefetch of thousands), and a cancelled caller leaves, cancelling
/// work no one else waits for, within its cancellation handler, before `cancel()` returns.
final class LoaderFlights<Value: Sendable>: Sendable {
    typealias Key = FlightKey

    private struct Flight {
        let serial: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        /// Flights no one waits for any more, cancelled, until their work has ended.
        var abandoned: [UInt64: (key: Key, task: Task<Void, Never>?)] = [:]
        var counter: UInt64 = 0
        /// The last caller of each abandoned flight, when it waits for the cancelled work to end.
        var draining: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        /// Waiters that wait for cancelled work to end when they are its last caller.
        var patientWaiters: Set<UInt64> = []
    }

    private let state = Locked(State())
    private let lastWaiterAwaitsCancelledWork: Bool
    private let oneAtATime: Bool

    init(lastWaiterAwaitsCancelledWork: Bool = false, oneAtATime: Bool = false) {
        self.lastWaiterAwaitsCancelledWork = lastWaiterAwaitsCancelledWork
        self.oneAtATime = oneAtATime
    }

    /// The outcome of the flight for `key`, started with `work` when there is none.
    func value(
        for key: Key, awaitsCancelledWork: Bool = false,
        work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let waiter = state.withLock { state in
            state.counter += 1
            if awaitsCancelledWork { state.patientWaiters.insert(state.counter) }
            return state.counter
        }
        defer { _ = state.withLock { $0.patientWaiters.remove(waiter) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                // Under the lock: a cancellation handler that ran before this found nothing to
                // remove, and Task.isCancelled is already true here.
                let joined = state.withLock { state in
                    if Task.isCancelled { return false }
                    if state.flights[key] == nil {
                        state.counter += 1
                        let serial = state.counter
                        state.flights[key] = Flight(serial: serial)
                        // One at a time: the work starts once the abandoned flights of this key have stopped.
                        let before = oneAtATime ? state.abandoned.values.filter { $0.key == key }.compactMap(\.task) : []
                        state.flights[key]?.task = Task {
                            for earlier in before { await earlier.value }
                            let outcome: Result<Value, any Error>
                            do {
                                try Task.checkCancellation()
                                outcome = .success(try await work())
                            } catch { outcome = .failure(error) }
                            self.finish(key, serial: serial, outcome)
                        }
                    }
                    state.flights[key]?.waiters[waiter] = continuation
                    return true
                }
                if !joined { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            leave(key, waiter: waiter)
        }
    }

    /// Keys with work in flight now.
    var keys: [Key] { state.withLock { Array($0.flights.keys) } }

    /// No work in flight, cancelled work included.
    var isIdle: Bool { state.withLock { $0.flights.isEmpty && $0.abandoned.isEmpty } }

    /// Waits until every flight, abandoned ones included, has ended (tests: the caches are then at rest).
    func settle() async {
        while let task = state.withLock({ $0.flights.values.first?.task ?? $0.abandoned.values.first?.task }) { await task.value }
    }

    private func finish(_ key: Key, serial: UInt64, _ outcome: Result<Value, any Error>) {
        let resume: [CheckedContinuation<Value, any Error>] = state.withLock { state in
            state.abandoned[serial] = nil
            var resume = state.draining.removeValue(forKey: serial).map { [$0] } ?? []
            guard let flight = state.flights[key], flight.serial == serial else { return resume }
            state.flights[key] = nil
            resume += flight.waiters.values
            return resume
        }
        for continuation in resume { continuation.resume(with: outcome) }
    }

    private func leave(_ key: Key, waiter: UInt64) {
        let (continuation, cancel): (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) = state.withLock { state in
            guard let continuation = state.flights[key]?.waiters.removeValue(forKey: waiter) else { return (nil, nil) }
            guard let flight = state.flights[key], flight.waiters.isEmpty else { return (continuation, nil) }
            state.flights[key] = nil
            state.abandoned[flight.serial] = (key, flight.task)
            if lastWaiterAwaitsCancelledWork || state.patientWaiters.contains(waiter) {
                state.draining[flight.serial] = continuation
                return (nil, flight.task)
            }
            return (continuation, flight.task)
        }
        continuation?.resume(throwing: CancellationError())
        cancel?.cancel()
    }
}

/// How many network fetches run at once, visible requests first: a prefetch waits while any
/// visible request waits, and a prefetch that a visible caller joins is moved up.
///
/// ```swift
/// let gate = FetchGate(width: 4)
/// try await gate.enter(ticket: 7, visible: false)   // a prefetch
/// defer { Task { await gate.leave() } }
/// ```
actor FetchGate {
    let width: Int
    private var running = 0
    private var visible: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var prefetches: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var promoted: Set<UInt64> = []

    init(width: Int) { self.width = max(1, width) }

    /// Waits for a slot: visible tickets in the order they came, then prefetches. Throws
    /// `CancellationError` when the task is cancelled while it waits.
    func enter(ticket: UInt64, visible isVisible: Bool) async throws {
        try Task.checkCancellation()
        if running < width, visible.isEmpty, isVisible || prefetches.isEmpty {
            running += 1
            return
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if isVisible || promoted.contains(ticket) {
                    visible.append((ticket, continuation))
                } else {
                    prefetches.append((ticket, continuation))
                }
            }
        } onCancel: {
            Task { await self.withdraw(ticket) }
        }
    }

    /// Gives the slot back and lets the next waiter in.
    func leave() {
        running -= 1
        admit()
    }

    /// A prefetch that a visible request now waits for: it goes with the visible ones.
    func promote(_ ticket: UInt64) {
        promoted.insert(ticket)
        if let at = prefetches.firstIndex(where: { $0.ticket == ticket }) {
            visible.append(prefetches.remove(at: at))
        }
    }

    /// Waiting tickets: visible, then prefetches.
    var waiting: (visible: Int, prefetches: Int) { (visible.count, prefetches.count) }

    /// The prefetches waiting, in the order they will go.
    var waitingPrefetches: [UInt64] { prefetches.map(\.ticket) }

    private func admit() {
        while running < width {
            let next = visible.isEmpty ? (prefetches.isEmpty ? nil : prefetches.removeFirst()) : visible.removeFirst()
            guard let next else { return }
            running += 1
            promoted.remove(next.ticket)
            next.continuation.resume()
        }
    }

    private func withdraw(_ ticket: UInt64) {
        promoted.remove(ticket)
        if let at = visible.firstIndex(where: { $0.ticket == ticket }) {
            visible.remove(at: at).continuation.resume(throwing: CancellationError())
        } else if let at = prefetches.firstIndex(where: { $0.ticket == ticket }) {
            prefetches.remove(at: at).continuation.resume(throwing: CancellationError())
        }
    }
}

/// What a loader's flight is for: callers asking for the same thing share its flight.
enum FlightKey: Hashable, Sendable {
    /// A lookup by exercise id or GIF hash, down the tiers.
    case lookup(GIFLoader.Key)
    /// The network fetch of one GIF, by its SHA-256, whichever lookups ask for it.
    case fetch(sha256: String)
    /// The lazy cache's index made ready for lookups.
    case index
    /// The installed generation's manifest and placeholders.
    case installed
    /// An install of the index's packs (``GIFLoader/refresh()``).
    case refresh
}

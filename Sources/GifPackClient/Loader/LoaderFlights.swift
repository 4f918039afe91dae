import Foundation

/// Work in flight, shared by the callers that ask for the same thing: the first caller of a key
/// starts it, later ones join, each gets its outcome. A caller that is cancelled leaves at once with
/// `CancellationError`; the work goes on for the others and is cancelled when no one waits for it
/// any more (a new caller then starts it afresh). With `lastWaiterAwaitsCancelledWork` (an install:
/// the cache must be as it was when the call ends), the last caller to be cancelled waits for the
/// cancelled work to end and gets its outcome: an error, or its value when it was past its commit
/// point.
///
/// ```swift
/// let flights = LoaderFlights<LoadedGIF?>()
/// let gif = try await flights.value(for: "gif 0001") { try await load("0001") }   // 20 callers, one load
/// ```
actor LoaderFlights<Value: Sendable> {
    private struct Flight {
        let serial: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    }

    private var flights: [String: Flight] = [:]
    /// Flights no one waits for any more, cancelled, until their work has ended.
    private var abandoned: [UInt64: Task<Void, Never>] = [:]
    private var counter: UInt64 = 0
    private let lastWaiterAwaitsCancelledWork: Bool
    /// The last caller of each abandoned flight, when it waits for the cancelled work to end.
    private var draining: [UInt64: CheckedContinuation<Value, any Error>] = [:]

    init(lastWaiterAwaitsCancelledWork: Bool = false) {
        self.lastWaiterAwaitsCancelledWork = lastWaiterAwaitsCancelledWork
    }

    /// The outcome of the flight for `key`, started with `work` when there is none.
    func value(for key: String, work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        counter += 1
        let waiter = counter
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if flights[key] == nil {
                    counter += 1
                    let serial = counter
                    flights[key] = Flight(serial: serial)
                    flights[key]?.task = Task {
                        let outcome: Result<Value, any Error>
                        do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
                        self.finish(key, serial: serial, outcome)
                    }
                }
                flights[key]?.waiters[waiter] = continuation
            }
        } onCancel: {
            Task { await self.leave(key, waiter: waiter) }
        }
    }

    /// Keys with work in flight now.
    var keys: [String] { flights.keys.sorted() }

    /// Waits until every flight, abandoned ones included, has ended (tests: the caches are then at rest).
    func settle() async {
        while let task = flights.values.first?.task ?? abandoned.values.first { await task.value }
    }

    private func finish(_ key: String, serial: UInt64, _ outcome: Result<Value, any Error>) {
        abandoned[serial] = nil
        draining.removeValue(forKey: serial)?.resume(with: outcome)
        guard let flight = flights[key], flight.serial == serial else { return }
        flights[key] = nil
        for continuation in flight.waiters.values { continuation.resume(with: outcome) }
    }

    private func leave(_ key: String, waiter: UInt64) {
        guard let continuation = flights[key]?.waiters.removeValue(forKey: waiter) else { return }
        guard let flight = flights[key], flight.waiters.isEmpty else { return continuation.resume(throwing: CancellationError()) }
        flights[key] = nil
        abandoned[flight.serial] = flight.task
        if lastWaiterAwaitsCancelledWork {
            draining[flight.serial] = continuation
        } else {
            continuation.resume(throwing: CancellationError())
        }
        flight.task?.cancel()
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

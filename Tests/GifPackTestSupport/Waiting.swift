import Foundation

/// The tests' only sleeps: waiting for an event by polling for it, with a deadline. A test never
/// sleeps to order events (a sleep long enough on an idle machine is too short on a busy one);
/// TestHygieneTests keeps every other sleep out of the test sources.
///
/// ```swift
/// try await waitUntil { server.stats.inFlight == 1 }
/// #expect(await holdsThroughout(.milliseconds(100)) { asked.isEmpty })
/// ```

/// A condition that did not come by its deadline.
struct WaitTimedOut: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` every `interval` until it holds; throws ``WaitTimedOut`` (naming the caller's
/// line) when `deadline` has passed without it. The default deadline is generous on purpose: a full
/// suite on 2 cores can keep the cooperative pool busy for many seconds; a condition that never
/// comes still fails, and the suite's time limit bounds the test as a whole.
func waitUntil(
    deadline: Duration = .seconds(60), every interval: Duration = .milliseconds(10),
    fileID: String = #fileID, line: Int = #line,
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now + deadline
    while try await !condition() {
        guard clock.now < end else {
            throw WaitTimedOut(description: "condition at \(fileID):\(line) not met within \(deadline)")
        }
        try await Task.sleep(for: interval)
    }
}

/// True when `condition` holds at every poll (every `interval`) for `duration`: for a check that
/// something does NOT happen within a window, after the event that would trigger it has been
/// awaited. False at the first poll where it fails.
func holdsThroughout(
    _ duration: Duration, every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + duration
    while clock.now < end {
        guard try await condition() else { return false }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Runs blocking `body` (a condition-variable wait, a blocking system call) on a thread of its own
/// and awaits it: a test never blocks one of the cooperative pool's threads (two on these machines),
/// and never takes a thread of the library's own blocking pool either.
func onAThreadOfItsOwn<T: Sendable>(
    _ name: String = "gifpack.test-blocking",
    _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// ``onAThreadOfItsOwn(_:_:)`` for a body that cannot throw.
func onAThreadOfItsOwn<T: Sendable>(_ name: String = "gifpack.test-blocking", _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}

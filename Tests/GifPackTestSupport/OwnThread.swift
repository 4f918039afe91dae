import Foundation
import Synchronization
import Testing

/// Runs each test case of a suite (or of one test) on an executor of its own (``QueueExecutor``):
/// the test's body, its child tasks and every default actor it calls prefer it
/// (`withTaskExecutorPreference`) over Swift's cooperative pool, which has two threads on these
/// machines.
///
/// The whole suite runs in one process. A test that waits (a minute at most) for a request to reach
/// a server or a cancellation to land must not depend on getting one of the pool's threads in
/// time: with this trait it resumes on its own executor whatever the others do. TestHygieneTests
/// requires it on every suite that waits for an event with a bound (`waitUntil`,
/// `holdsThroughout`). Tests that compute take ``ComputesTrait`` instead, which bounds how many run
/// at once: with this trait on every suite, a hundred tests computed at once and twenty ran past
/// their time limits.
///
/// ```swift
/// @Suite("HTTP client", .ownThread, .timeLimit(.minutes(5))) struct HTTPClientTests { … }
/// ```
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// One executor per test case: a parameterized test's cases still run side by side.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThreadTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await OwnThreadTrait.withOwnExecutor(function)
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test case on an executor of its own (``OwnThreadTrait``).
    public static var ownThread: OwnThreadTrait { OwnThreadTrait() }
}

/// A task executor that runs its jobs in order on a serial dispatch queue of its own. On Linux a
/// serial queue targets dispatch's overcommit root queue, which starts a worker thread whenever
/// every one it has is busy, so a job here never waits for the cooperative pool's threads; the
/// queue holds no thread while it has no job.
final class QueueExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "gifpack.test")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension OwnThreadTrait {
    /// The executor of the test case running now, when its suite has ``OwnThreadTrait`` or
    /// ``ComputesTrait``.
    @TaskLocal static var executor: QueueExecutor?

    /// Runs `function` on a new ``QueueExecutor``, which its tasks and the default actors it calls
    /// prefer.
    static func withOwnExecutor(_ function: @Sendable () async throws -> Void) async throws {
        let executor = QueueExecutor()
        try await $executor.withValue(executor) {
            try await withTaskExecutorPreference(executor) { try await function() }
        }
    }
}

/// Runs each test of a suite (or one test) that computes on an executor of its own, once one of the
/// run's computing slots is free: as many slots as the machine has cores (``ComputeSlots``).
///
/// A synchronous test holds the thread it runs on from its first line to its last. On the
/// cooperative pool (two threads here) two of them stall every other test's awaits: in one CI run,
/// tests queued for 139 s and a build against the fixture server failed while its awaits waited.
/// With this trait the pool is left to the tests that await, the computing tests still run as many
/// at a time as there are cores (never a hundred at once), and a test waiting for a slot waits
/// without holding a thread. TestHygieneTests requires it (or ``OwnThreadTrait``) on every
/// synchronous test.
///
/// ```swift
/// @Suite("GIF walker", .computes, .timeLimit(.minutes(3))) struct GIFWalkerTests { … }
/// @Test(.computes) func everyTruncationIsRefused() throws { … }
/// ```
public struct ComputesTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// One scope per test function, around all its cases, and none per case: a scope per test
    /// function is entered before the time limits of its cases start (Swift Testing applies them
    /// per case), so the wait for a slot is not counted as the test's running time. The cases of a
    /// parameterized test share the function's executor and slot, one case after another.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> ComputesTrait? {
        test.isSuite || testCase != nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await ComputeSlots.shared.acquire()
        defer { ComputeSlots.shared.release() }
        try await OwnThreadTrait.withOwnExecutor(function)
    }
}

extension Trait where Self == ComputesTrait {
    /// Each test on an executor of its own, as many at a time as the machine has cores
    /// (``ComputesTrait``).
    public static var computes: ComputesTrait { ComputesTrait() }
}

/// The run's computing slots, one per core, handed out in the order they were asked for; a task
/// that waits for one holds no thread, and a cancelled one stops waiting.
final class ComputeSlots: Sendable {
    static let shared = ComputeSlots(count: max(1, ProcessInfo.processInfo.activeProcessorCount))

    private struct State {
        var free: Int
        var waiting: [(token: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextToken = 0
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(free: count))
    }

    /// Returns once a slot is this caller's; throws `CancellationError` if the task is cancelled first.
    func acquire() async throws {
        let token = state.withLock { state -> Int in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the lock the cancellation handler takes: cancelled before this, it found no waiter.
                let outcome = state.withLock { state -> Result<Bool, CancellationError> in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.free > 0 && state.waiting.isEmpty {
                        state.free -= 1
                        return .success(true)
                    }
                    state.waiting.append((token, continuation))
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.token == token }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives a slot back: to the first waiting, or to the free ones.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}

/// `Task { … }` for a test on an executor of its own: an unstructured task does not inherit a task
/// executor preference, so a plain `Task` would start on the cooperative pool, which the
/// computing tests can hold for a minute. Elsewhere the same as `Task { … }`.
@discardableResult
func testTask<T: Sendable>(_ operation: sending @escaping () async -> T) -> Task<T, Never> {
    Task(executorPreference: OwnThreadTrait.executor, operation: operation)
}

/// ``testTask(_:)`` for an operation that throws.
@discardableResult
func testTask<T: Sendable>(_ operation: sending @escaping () async throws -> T) -> Task<T, any Error> {
    Task(executorPreference: OwnThreadTrait.executor, operation: operation)
}

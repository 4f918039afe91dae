import Foundation
import Synchronization
import Testing

/// Runs each test case of a suite (or of one test) on a thread of its own: the test's body, its
/// child tasks and every default actor it calls prefer that thread's executor
/// (`withTaskExecutorPreference`) over Swift's cooperative pool, which has two threads on these
/// machines.
///
/// The whole suite runs in one process. A test that waits (a minute at most) for a request to reach
/// a server or a cancellation to land must not depend on getting one of the pool's threads in
/// time: with this trait it resumes on its own thread whatever the others do. TestHygieneTests
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

    /// One thread per test case: a parameterized test's cases still run side by side.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThreadTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await OwnThreadTrait.withThreadExecutor(named: "gifpack.test", function)
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test case on a thread of its own (``OwnThreadTrait``).
    public static var ownThread: OwnThreadTrait { OwnThreadTrait() }
}

/// A task executor with one thread that runs its jobs in order. ``finish()`` lets the thread end
/// once its queue is empty; a job enqueued later (nothing in a finished scope should enqueue one)
/// starts a new thread rather than being lost.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `finished` and `running` are read and written only with `condition` held.
    private let condition = NSCondition()
    private let name: String
    private var jobs: [UnownedJob] = []
    private var finished = false
    private var running = false

    init(name: String) {
        self.name = name
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = !running
        running = true
        condition.signal()
        condition.unlock()
        if start { startThread() }
    }

    /// The scope is over: the thread ends when its queue is empty.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func startThread() {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func runJobs() {
        while let job = nextJob() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The next job, waiting for one while the scope lasts; nil (and the thread ends) when the
    /// scope is over and nothing is queued.
    private func nextJob() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !finished { condition.wait() }
        guard !jobs.isEmpty else {
            running = false
            return nil
        }
        return jobs.removeFirst()
    }
}

extension OwnThreadTrait {
    /// The executor of the test case running now, when its suite has ``OwnThreadTrait`` or
    /// ``ComputesTrait``.
    @TaskLocal static var executor: ThreadExecutor?

    /// Runs `function` on a new ``ThreadExecutor`` named `name`, which its tasks and the default
    /// actors it calls prefer.
    static func withThreadExecutor(named name: String, _ function: @Sendable () async throws -> Void) async throws {
        let executor = ThreadExecutor(name: name)
        defer { executor.finish() }
        try await $executor.withValue(executor) {
            try await withTaskExecutorPreference(executor) { try await function() }
        }
    }
}

/// Runs each test of a suite (or one test) that computes on a thread of its own, once one of the
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
    /// parameterized test share the function's thread and slot, one case after another.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> ComputesTrait? {
        test.isSuite || testCase != nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await ComputeSlots.shared.acquire()
        defer { ComputeSlots.shared.release() }
        try await OwnThreadTrait.withThreadExecutor(named: "gifpack.test-computing", function)
    }
}

extension Trait where Self == ComputesTrait {
    /// Each test case on a thread of its own, as many at a time as the machine has cores
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

/// `Task { … }` for a test on a thread of its own: an unstructured task does not inherit a task
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

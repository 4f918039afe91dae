import Foundation
import Testing

/// Runs each test case of a suite (or of one test) on a thread of its own: the test's body, its
/// child tasks and every default actor it calls prefer that thread's executor
/// (`withTaskExecutorPreference`) over Swift's cooperative pool, which has two threads on these
/// machines.
///
/// The whole suite runs in one process. A test that decodes, hashes or scans for seconds in a
/// synchronous body holds a pool thread for that long; two such tests stall every other test's
/// awaits, and a test that waits (a minute at most) for a request to reach a server or a
/// cancellation to land then runs out of time. With this trait a waiting test resumes on its own
/// thread whatever the others do. TestHygieneTests requires it on every suite that waits for an
/// event with a bound (`waitUntil`, `holdsThroughout`). Computing suites stay on the pool, two at
/// a time: on every suite, a hundred tests computed at once and twenty ran past their time limits.
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

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let executor = ThreadExecutor(name: "gifpack.test")
        defer { executor.finish() }
        try await OwnThreadTrait.$executor.withValue(executor) {
            try await withTaskExecutorPreference(executor) { try await function() }
        }
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
    /// The executor of the test case running now, when its suite has ``OwnThreadTrait``.
    @TaskLocal static var executor: ThreadExecutor?
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

import Foundation

/// A bounded pool of dedicated threads for blocking jobs (file I/O, fsync, decoding, SQLite), so
/// they never run on Swift's cooperative pool and never start a thread per call.
///
/// Jobs wait in two first-in, first-out queues, urgent jobs (what a user waits for: a visible GIF's
/// disk read) before the others (a prefetch's); at most ``width`` run at once, each on one of the
/// pool's threads, which are started when the queue holds more jobs than idle threads and then
/// stay, parked on a condition variable. The awaiting task's continuation is resumed from the
/// worker that ran the job.
///
/// Rules for a job (the pool is bounded, so breaking them can deadlock it):
/// - A job must not wait for another job of the same pool (a semaphore, a condition, a process
///   whose end needs one): with every thread waiting, nothing would run the job they wait for.
///   Waiting for a dedicated ``WorkerThread`` (write-behind flushing, hashing) is fine.
/// - A loop that lives as long as something else (curl's multi loop, a server's accept loop, a
///   progress renderer) keeps its own `Thread`; it never takes a pool slot.
///
/// Cancellation neither skips nor interrupts a job: a blocking call cannot be interrupted, and a
/// job queued before its task was cancelled (a cleanup, a manifest write) still runs; the caller
/// gets its outcome and sees the cancellation at its next check.
///
/// Built on Foundation's `Thread` and `NSCondition`, which every platform the package names has:
/// dedicated threads can be named while a job runs (`top -H` shows which job is stuck), and a
/// worker blocked in `fsync` holds one of `width` threads rather than one of Dispatch's shared
/// workers, whose pool grows without a bound the package could set when its threads block.
///
/// ```swift
/// let manifest = try await BlockingWork.run("gifpack.manifest") { try InstallManifest.read(cacheDirectory: path) }
/// let pool = BlockingPool(name: "gifpack.test", width: 2)
/// let squares = try await pool.run { 7 * 7 }
/// ```
package final class BlockingPool: @unchecked Sendable {  // @unchecked: the queue and the thread counts are read and written under `condition`; the rest is constant.
    /// The pool ``BlockingWork`` runs its jobs on, ``defaultWidth`` threads at most.
    package static let shared = BlockingPool(name: "gifpack.blocking", width: defaultWidth)

    /// The processor count, at least 4 and at most 16. The jobs are mostly waits for the disk
    /// (fsync, reads), so the floor keeps two slow syncs on a 2-core machine from holding up a
    /// quick cache lookup; the cap bounds the threads a large machine parks.
    package static var defaultWidth: Int { min(max(ProcessInfo.processInfo.activeProcessorCount, 4), 16) }

    /// The most jobs that run at once, and the most threads the pool starts.
    package let width: Int
    private let name: String
    private let condition = NSCondition()
    // Guarded by `condition`.
    /// Jobs not urgent; a slot is emptied when its job is taken, so what a job captured (an install's
    /// lock, buffers) is released once it has run, however long the queue stays busy.
    private var queue: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var urgentQueue: [@Sendable () -> Void] = []
    private var started = 0
    private var idle = 0
    private var running = 0

    /// A pool of at most `width` threads (at least 1), named `name.0`, `name.1`, …
    package init(name: String, width: Int) {
        self.name = name
        self.width = max(1, width)
    }

    /// Runs `body` on one of the pool's threads, after the jobs queued before it; returns its
    /// value or throws its error, typed.
    /// `urgent`: before every job not urgent still waiting.
    package func run<T: Sendable, E: Error>(
        _ label: String? = nil, urgent: Bool = false,
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            // The body goes before the caller resumes: what it captured is not still held by a worker.
            let lease = Lease { Result { () throws(E) -> T in try body() } }
            enqueue(label, urgent: urgent) { continuation.resume(returning: lease.run()) }
        }
        return try result.get()
    }

    /// Queues `job` without waiting for it; it runs after the jobs queued before it (an urgent one:
    /// after the urgent ones). `label` names the thread while the job runs.
    package func enqueue(_ label: String? = nil, urgent: Bool = false, _ job: @escaping @Sendable () -> Void) {
        let named: @Sendable () -> Void
        if let label {
            let home = name
            named = {
                Thread.current.name = label
                job()
                Thread.current.name = home
            }
        } else {
            named = job
        }
        condition.lock()
        if urgent { urgentQueue.append(named) } else { queue.append(named) }
        let startOne = queue.count - head + urgentQueue.count > idle && started < width
        if startOne { started += 1 }
        let number = started - 1
        condition.signal()
        condition.unlock()
        if startOne { startThread(number) }
    }

    /// What the pool holds now: threads started, jobs running, jobs waiting for a thread.
    package var load: (threads: Int, running: Int, queued: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (started, running, queue.count - head + urgentQueue.count)
    }

    private func startThread(_ number: Int) {
        let thread = Thread { [self] in work() }
        thread.name = "\(name).\(number)"
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            while head == queue.count, urgentQueue.isEmpty {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if !urgentQueue.isEmpty {
                let job = urgentQueue.removeFirst()
                running += 1
                condition.unlock()
                job()
                condition.lock()
                running -= 1
                continue
            }
            guard let job = queue[head] else { preconditionFailure("a job taken twice") }
            queue[head] = nil
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
        }
    }
}

/// One blocking job on ``BlockingPool/shared``, awaited; errors keep their type. `name` labels the
/// pool thread while the job runs.
///
/// ```swift
/// let state = try await BlockingWork.run("gifpack.state") { try BuildState(path: path, source: key) }
/// let outcome = await BlockingWork.result("gifpack.install") { () throws(PackClientError) in try install() }
/// ```
package enum BlockingWork {
    /// Whether the jobs of the current task are urgent (``BlockingPool/run(_:urgent:_:)``): what a
    /// user waits for sets it around its work, and every job it queues, down to the caches', goes
    /// before the jobs of work nobody waits for yet (a prefetch).
    ///
    /// ```swift
    /// try await BlockingWork.$urgent.withValue(true) { try await loadVisibleGIF() }
    /// ```
    @TaskLocal package static var urgent = false

    package static func run<T: Sendable, E: Error>(
        _ name: String = "gifpack.blocking",
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        try await BlockingPool.shared.run(name, urgent: urgent, body)
    }

    /// Like ``run(_:_:)`` but hands back the outcome instead of throwing it.
    package static func result<T: Sendable, E: Error>(
        _ name: String = "gifpack.blocking",
        _ body: @escaping @Sendable () throws(E) -> T
    ) async -> Result<T, E> {
        do throws(E) { return .success(try await run(name, body)) } catch { return .failure(error) }
    }
}

/// A body for one thread to run once and let go of, with what it captured, before it reports
/// that it is done: a thread object or a queued job keeps its closure until the thread or the
/// worker's loop is through with it, which may be well after the caller went on (a file the body
/// held open stayed open after the call returned, and a deleted file kept its disk space).
///
/// ```swift
/// let lease = Lease { [probe] in probe.number }
/// Thread { print(lease.run()) }.start()   // `probe` is let go of before the number is printed
/// ```
package final class Lease<T>: @unchecked Sendable {  // @unchecked: `body` is read and cleared by the one thread that runs it.
    private var body: (@Sendable () -> T)?

    package init(_ body: @escaping @Sendable () -> T) { self.body = body }

    /// Runs the body (once: a second call is a programming error) and lets go of it.
    package func run() -> T {
        guard let body else { preconditionFailure("a lease run twice") }
        self.body = nil
        return body()
    }
}

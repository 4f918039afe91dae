import Foundation

/// A dedicated thread for a stream of blocking jobs that belong together (a pack's write-behind
/// flushing, its hashing, the fetch's GIF processing), never Swift's cooperative pool (2 threads
/// on these machines). One-off blocking jobs go to the bounded ``BlockingPool`` through
/// ``BlockingWork/run(_:_:)`` instead.
///
/// A ``WorkerThread`` runs jobs one at a time, in order; it can lower its own scheduling priority
/// (nice, which Linux applies per thread), so on a busy machine the threads that keep requests
/// moving — curl's loop and the cooperative pool — run first. A pool job may wait for a
/// ``WorkerThread`` (it is not one of the pool's threads).
///
/// ```swift
/// let worker = WorkerThread(name: "gifpack.process.0", niceness: 5)
/// worker.async { decodeAndStore(file) }
/// await worker.drain()
/// let summary = try await BlockingWork.run("gifpack.pack") { try assembler.finish() }
/// ```
package final class WorkerThread: @unchecked Sendable {  // @unchecked: `jobs` and `stopping` are read and written under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false

    package init(name: String, niceness: Int32 = 0) {
        let thread = Thread { [self] in
            if niceness != 0 { SystemCalls.lowerCurrentThreadPriority(niceness) }
            run()
        }
        thread.name = name
        thread.start()
    }

    deinit { stop() }

    package func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` after the jobs already queued and returns its outcome.
    package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            async { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Returns once every job queued before the call has run.
    package func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            async { continuation.resume() }
        }
    }

    /// Ends the thread after the jobs already queued.
    package func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && stopping {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}

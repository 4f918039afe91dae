import Foundation

/// A dedicated thread for a stream of blocking jobs that belong together (a pack's write-behind
/// flushing, its hashing, the fetch's GIF processing), never Swift's cooperative pool (2 threads
/// on these machines). One-off blocking jobs go to the bounded ``BlockingPool`` through
/// ``BlockingWork/run(_:_:)`` instead.
///
/// A ``WorkerThread`` runs jobs one at a time, in order; with `threads` above one, that many
/// threads take the jobs in order from one queue, each the next as soon as it is free (a long
/// job on one thread never holds up the queue while another is idle). It can lower its threads'
/// scheduling priority (nice, which Linux applies per thread), so on a busy machine the threads
/// that keep requests moving — curl's loop and the cooperative pool — run first. A pool job may
/// wait for a ``WorkerThread`` (it is not one of the pool's threads).
///
/// ```swift
/// let worker = WorkerThread(name: "gifpack.process", threads: 2, niceness: 5)
/// worker.async { decodeAndStore(file) }
/// await worker.drain()
/// let summary = try await BlockingWork.run("gifpack.pack") { try assembler.finish() }
/// ```
package final class WorkerThread: @unchecked Sendable {  // @unchecked: every stored var is read and written under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false
    /// Jobs queued so far, and taken from the queue so far: job `n` (from 0) is the `n`th queued.
    private var queued = 0
    private var taken = 0
    /// The numbers of the jobs running now (at most `threads`).
    private var running: Set<Int> = []
    /// ``drain()``s waiting for every job numbered below theirs to have run.
    private var drains: [(before: Int, continuation: CheckedContinuation<Void, Never>)] = []

    package init(name: String, threads: Int = 1, niceness: Int32 = 0) {
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in
                if niceness != 0 { SystemCalls.lowerCurrentThreadPriority(niceness) }
                run()
            }
            thread.name = threads > 1 ? "\(name).\(index)" : name
            thread.start()
        }
    }

    deinit { stop() }

    package func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        queued += 1
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` after the jobs already queued have been taken, and returns its outcome.
    package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            // The body goes before the caller resumes (``Lease``).
            let lease = Lease { Result { () throws(E) -> T in try body() } }
            async { continuation.resume(returning: lease.run()) }
        }
        return try result.get()
    }

    /// Returns once every job queued before the call has run (on every thread).
    package func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            let before = queued
            if hasRun(before: before) {
                condition.unlock()
                continuation.resume()
            } else {
                drains.append((before, continuation))
                condition.unlock()
            }
        }
    }

    /// Ends the threads after the jobs already queued.
    package func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether every job numbered below `before` has run (under `condition`).
    private func hasRun(before: Int) -> Bool {
        taken >= before && !running.contains { $0 < before }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && stopping {
                condition.unlock()
                return
            }
            var job: (@Sendable () -> Void)? = jobs.removeFirst()
            let number = taken
            taken += 1
            running.insert(number)
            condition.unlock()
            job?()
            // Let go of the job, and what it captured, before a drain waiting for it resumes.
            job = nil
            condition.lock()
            running.remove(number)
            var done: [CheckedContinuation<Void, Never>] = []
            drains.removeAll { drain in
                guard hasRun(before: drain.before) else { return false }
                done.append(drain.continuation)
                return true
            }
            condition.unlock()
            done.forEach { $0.resume() }
        }
    }
}

import Foundation

/// The one way blocking work (file I/O, fsync, decoding, compression, SQLite) runs in this
/// package: on a dedicated thread, never on Swift's cooperative pool (2 threads on these machines).
///
/// A ``WorkerThread`` runs jobs one at a time, in order; it can lower its own scheduling priority
/// (nice, which Linux applies per thread), so on a busy machine the threads that keep requests
/// moving — curl's loop and the cooperative pool — run first. ``BlockingWork/run(_:_:)`` is the
/// one-off form: a fresh worker for one job, awaited.
///
/// ```swift
/// let worker = WorkerThread(name: "gifpack.process.0", niceness: 5)
/// worker.async { decodeAndStore(file) }
/// await worker.drain()
/// let summary = try await BlockingWork.run("gifpack.pack") { try assembler.finish() }
/// ```
package final class WorkerThread: @unchecked Sendable {
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

/// One blocking job on its own ``WorkerThread``, awaited; errors keep their type.
///
/// ```swift
/// let state = try await BlockingWork.run("gifpack.state") { try BuildState(path: path, source: key) }
/// let outcome = await BlockingWork.result("gifpack.install") { () throws(PackClientError) in try install() }
/// ```
package enum BlockingWork {
    package static func run<T: Sendable, E: Error>(_ name: String = "gifpack.blocking",
                                                   _ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let worker = WorkerThread(name: name)
        defer { worker.stop() }
        return try await worker.run(body)
    }

    /// Like ``run(_:_:)`` but hands back the outcome instead of throwing it.
    package static func result<T: Sendable, E: Error>(_ name: String = "gifpack.blocking",
                                                      _ body: @escaping @Sendable () throws(E) -> T) async -> Result<T, E> {
        do throws(E) { return .success(try await run(name, body)) } catch { return .failure(error) }
    }
}

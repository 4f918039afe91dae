import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A dedicated thread that runs jobs one at a time, in order, at a lower scheduling priority.
///
/// The builder's validation and compression work is CPU- and disk-heavy; it runs here rather than
/// on Swift's cooperative pool (2 threads on these machines) or Dispatch's shared threads. The
/// thread lowers its own priority (nice +5, Linux applies it per thread), so on a busy machine the
/// threads that keep requests moving — curl's loop and the cooperative pool — run first, and this
/// work fills the time they leave.
///
/// ```swift
/// let worker = WorkerThread(name: "gifpack.process.0")
/// worker.async { decodeAndStore(file) }
/// await worker.drain()
/// ```
final class WorkerThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopping = false

    init(name: String, niceness: Int32 = 5) {
        let thread = Thread { [self] in
            // On Linux the nice value is per thread: "who = 0" is the calling thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
            run()
        }
        thread.name = name
        thread.start()
    }

    deinit { stop() }

    func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Returns once every job queued before the call has run.
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            async { continuation.resume() }
        }
    }

    /// Ends the thread after the jobs already queued.
    func stop() {
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

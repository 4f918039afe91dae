import Foundation
import GifPackSystem

/// Runs one piece of blocking work on several threads at once: the calling thread and up to
/// `width - 1` threads started for the call, each running the same `body`, which takes its jobs
/// from a queue of the caller's (so the jobs, not the threads, decide the order). Returns once
/// every call of `body` has returned.
///
/// For CPU-heavy blocking work already off Swift's cooperative pool (a ``BlockingWork`` job, a
/// ``WorkerThread``): the calling thread blocks until the others are done. The extra threads are
/// not ``BlockingPool``'s, so a pool job may call this without waiting for a job of its own pool.
///
/// ```swift
/// let queue = MyJobQueue(count: entries.count)
/// ParallelWork.run(width: ParallelWork.defaultWidth, name: "gifpack.stage") {
///     while let index = queue.take() { queue.finish(index, work(entries[index])) }
/// }
/// ```
enum ParallelWork {
    /// The processor count, at least 1 and at most 4 (each thread may hold one entry in memory).
    static var defaultWidth: Int { min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4) }

    /// Calls `body` on the calling thread and on `width - 1` threads of its own (named `name.1`, …)
    /// at the same time; returns when all of them have returned and let go of `body`, and so of
    /// what it holds (a thread object keeps its closure until the thread has exited, which may be
    /// well after it said it was done: a file the body held open stayed open after the call).
    static func run(width: Int, name: String, _ body: @escaping @Sendable () -> Void) {
        let helpers = max(0, width - 1)
        guard helpers > 0 else { return body() }
        let finished = Countdown(helpers)
        for number in 1...helpers {
            let lease = Lease(body)
            let thread = Thread {
                lease.run()
                finished.arrive()
            }
            thread.name = "\(name).\(number)"
            thread.start()
        }
        body()
        finished.wait()
    }

    /// Starts `body` on a thread of its own (named `name`), beside the caller's work; the
    /// caller collects its value with ``Background/wait()``.
    static func start<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) -> Background<T> {
        let background = Background<T>()
        let lease = Lease(body)
        let thread = Thread { background.set(lease.run()) }
        thread.name = name
        thread.start()
        return background
    }

    /// The value of a body ``start(name:_:)`` runs, once it has returned.
    final class Background<T: Sendable>: @unchecked Sendable {  // @unchecked: `value` is guarded by `condition`.
        private let condition = NSCondition()
        private var value: T?

        fileprivate init() {}

        fileprivate func set(_ result: T) {
            condition.lock()
            value = result
            condition.broadcast()
            condition.unlock()
        }

        /// Blocks until the body has returned; its value.
        func wait() -> T {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let value { return value }
                condition.wait()
            }
        }
    }

    /// Waits for `count` arrivals.
    private final class Countdown: @unchecked Sendable {  // @unchecked: `remaining` is guarded by `condition`.
        private let condition = NSCondition()
        private var remaining: Int

        init(_ count: Int) { remaining = count }

        func arrive() {
            condition.lock()
            remaining -= 1
            condition.broadcast()
            condition.unlock()
        }

        func wait() {
            condition.lock()
            while remaining > 0 { condition.wait() }
            condition.unlock()
        }
    }
}

import Foundation
import GifPackHTTP
import GifPackSystem
import GifPackTransport
import Synchronization
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// Blocking work runs on a bounded pool of dedicated threads (``BlockingPool``), not on a
/// thread per call and never on the cooperative pool; curl's loop and URLSession keep their own
/// threads, so HTTP moves while every pool thread is busy.
@Suite("Blocking pool", .ownThread, .timeLimit(.minutes(3)))
struct BlockingPoolTests {
    @Test("at most width jobs run at once; the others wait in the queue, then all finish")
    func boundedConcurrency() async throws {
        let pool = BlockingPool(name: "gifpack.test-bound", width: 3)
        let gate = Gate()
        let tracker = ConcurrencyTracker()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<10 {
                group.addTask {
                    await pool.run {
                        tracker.enter()
                        gate.wait()
                        tracker.leave()
                        return index
                    }
                }
            }
            try await waitUntil { pool.load == (threads: 3, running: 3, queued: 7) }
            #expect(tracker.current == 3)
            gate.open()
            var finished: [Int] = []
            for try await index in group { finished.append(index) }
            #expect(finished.sorted() == Array(0..<10))
        }
        #expect(tracker.highest == 3)
        #expect(tracker.threads.count == 3, "the jobs ran on \(tracker.threads.count) threads")
        #expect(pool.load == (threads: 3, running: 0, queued: 0))
    }

    @Test("jobs start in the order they were queued, and each caller gets its own job's value")
    func ordering() async throws {
        let single = BlockingPool(name: "gifpack.test-order", width: 1)
        let gate = Gate()
        let order = Locked<[Int]>([])
        single.enqueue { gate.wait() }
        for index in 0..<500 {
            single.enqueue { order.withLock { $0.append(index) } }
        }
        #expect(single.load.queued >= 499, "the first job holds the only thread")
        gate.open()
        await single.run { () }
        #expect(order.withLock { $0 } == Array(0..<500))

        let pool = BlockingPool(name: "gifpack.test-pairs", width: 4)
        let pairs = await withTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<2000 {
                group.addTask { (index, await pool.run { index * 3 + 1 }) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(pairs.count == 2000)
        #expect(pairs.allSatisfy { $0.1 == $0.0 * 3 + 1 })
        #expect(pool.load.threads <= 4)
    }

    @Test("urgent jobs (a visible request's, BlockingWork.urgent) run before the others still waiting, in their own order")
    func urgentJobsGoFirst() async throws {
        let single = BlockingPool(name: "gifpack.test-urgent", width: 1)
        let gate = Gate()
        let order = Locked<[String]>([])
        single.enqueue { gate.wait() }
        try await waitUntil { single.load.running == 1 }
        for index in 0..<50 { single.enqueue { order.withLock { $0.append("prefetch \(index)") } } }
        for index in 0..<3 { single.enqueue(urgent: true) { order.withLock { $0.append("visible \(index)") } } }
        #expect(single.load.queued == 53)
        gate.open()
        await single.run { () }
        let ran = order.withLock { $0 }
        #expect(ran.prefix(3) == ["visible 0", "visible 1", "visible 2"], "\(ran.prefix(5))")
        #expect(Array(ran.dropFirst(3)) == (0..<50).map { "prefetch \($0)" })
        // The task-local marks every job of a task as urgent, down to the library's own BlockingWork calls.
        #expect(BlockingWork.$urgent.withValue(true) { BlockingWork.urgent } && !BlockingWork.urgent)
    }

    @Test("a job's captures are released once it has run, while later jobs still wait (an install's lock is not held on)")
    func aJobsCapturesGoWhenItHasRun() async throws {
        let single = BlockingPool(name: "gifpack.test-release", width: 1)
        let gate = Gate()
        weak var watched: Captured?
        do {
            let captured = Captured()
            watched = captured
            single.enqueue { withExtendedLifetime(captured) {} }
        }
        single.enqueue { gate.wait() }
        single.enqueue {}
        // The first job has run, the second holds the thread, the third waits: the queue is not empty.
        try await waitUntil { single.load.running == 1 && single.load.queued == 1 }
        #expect(watched == nil, "the first job's capture lived on in the queue")
        gate.open()
        await single.run { () }
    }

    @Test("an error reaches the caller with its type, and the thread goes on to the next job")
    func errorsThrownThrough() async throws {
        let pool = BlockingPool(name: "gifpack.test-errors", width: 1)
        do throws(Refusal) {
            _ = try await pool.run { () throws(Refusal) -> Int in throw .refused(7) }
            Issue.record("the job's error was not thrown")
        } catch {
            #expect(error == .refused(7))
        }
        #expect(await pool.run { 42 } == 42)
        let outcome = await BlockingWork.result("gifpack.test-error") { () throws(Refusal) -> Int in throw .refused(3) }
        #expect(outcome == .failure(.refused(3)))
        #expect(await BlockingWork.result { () throws(Refusal) -> Int in 5 } == .success(5))
    }

    @Test("a cancelled caller's job still runs, queued or running, and the caller gets its value")
    func cancellation() async throws {
        let pool = BlockingPool(name: "gifpack.test-cancel", width: 1)
        let (first, second) = (Gate(), Gate())
        let ran = Locked<[String]>([])
        // Running when cancelled: it is not interrupted.
        let running = testTask { () -> (Int, Bool) in
            let value = await pool.run { () -> Int in
                ran.withLock { $0.append("running") }
                first.wait()
                return 1
            }
            return (value, Task.isCancelled)
        }
        try await waitUntil { pool.load.running == 1 }
        // Queued when cancelled: it is not skipped.
        let queued = testTask { () -> (Int, Bool) in
            let value = await pool.run { () -> Int in
                ran.withLock { $0.append("queued") }
                second.wait()
                return 2
            }
            return (value, Task.isCancelled)
        }
        try await waitUntil { pool.load.queued == 1 }
        running.cancel()
        queued.cancel()
        first.open()
        second.open()
        let (one, sawFirst) = await running.value
        let (two, sawSecond) = await queued.value
        #expect(one == 1 && two == 2)
        #expect(sawFirst && sawSecond, "the callers see their cancellation after the job")
        #expect(ran.withLock { $0 } == ["running", "queued"])
    }

    @Test("thousands of BlockingWork jobs run on the shared pool's few threads, not a thread each")
    func manyMoreJobsThanThreads() async throws {
        let width = BlockingPool.shared.width
        #expect((4...16).contains(width))
        let threads = Locked<Set<String>>([])
        let sums = await withTaskGroup(of: Int.self) { group in
            for index in 0..<3000 {
                group.addTask {
                    await BlockingWork.run("gifpack.test-many") { () -> Int in
                        let id = kernelThreadID()
                        threads.withLock { _ = $0.insert(id) }
                        return index
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(sums == (0..<3000).reduce(0, +))
        let used = threads.withLock { $0.count }
        #expect(used <= width, "3000 jobs ran on \(used) threads; the pool has \(width)")
        #expect(BlockingPool.shared.load.threads <= width)
    }

    @Test("HTTP completes over curl and URLSession while every shared pool thread is blocked")
    func httpDoesNotNeedThePool() async throws {
        let root = try TemporaryDirectory()
        let body = [UInt8]((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try Data(body).write(to: URL(fileURLWithPath: root.file("blob.bin")))
        let server = try ClientStaticFileServer(root: root.path)
        defer { server.stop() }
        let curl = try HTTPClient(maxConnections: 2)
        defer { curl.shutdown() }
        let pool = BlockingPool.shared
        let gate = Gate()
        let blocked = Locked(0)
        // Whatever other tests queue meanwhile waits too, until the gate opens.
        let holders = (0..<pool.width).map { _ in
            testTask {
                await pool.run("gifpack.test-hold") {
                    blocked.withLock { $0 += 1 }; gate.wait()
                }
            }
        }
        defer { gate.open() }
        try await waitUntil { blocked.withLock { $0 } == pool.width }
        let url = server.baseURL + "/blob.bin"
        for transport in [curl as any HTTPTransport, URLSessionTransport()] {
            let response = try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 20)
            #expect(response.head.status == 200 && response.body == body, "\(transport)")
            let path = root.file("download-\(type(of: transport))")
            let download = try await transport.download(HTTPRequest(url: url), to: path, maxBytes: 1 << 20)
            #expect(download.bytesWritten == Int64(body.count), "\(transport)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(body))
        }
        #expect(blocked.withLock { $0 } == pool.width, "the pool stayed blocked throughout")
        gate.open()
        for holder in holders { await holder.value }
    }
}

/// The calling thread's kernel id (`/proc/thread-self` names `<pid>/task/<tid>`): unlike a
/// `pthread_t` or a `Thread` object, not reused by the next thread as soon as one ends.
private func kernelThreadID() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "unknown"
}

private enum Refusal: Error, Equatable {
    case refused(Int)
}

private final class Captured: Sendable {}

/// A value behind a lock that escaping closures can share.
private final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

/// Counts the jobs running at once, the most seen, and the threads they ran on.
private final class ConcurrencyTracker: Sendable {
    private struct Counts {
        var current = 0
        var highest = 0
        var threads: Set<String> = []
    }

    private let counts = Mutex(Counts())

    func enter() {
        let id = kernelThreadID()
        counts.withLock {
            $0.current += 1
            $0.highest = max($0.highest, $0.current)
            $0.threads.insert(id)
        }
    }

    func leave() { counts.withLock { $0.current -= 1 } }

    var current: Int { counts.withLock { $0.current } }
    var highest: Int { counts.withLock { $0.highest } }
    var threads: Set<String> { counts.withLock { $0.threads } }
}

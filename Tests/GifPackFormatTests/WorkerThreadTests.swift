import Foundation
import GifPackSystem
import Synchronization
import Testing
@testable import GifPackTestSupport

/// A worker with several threads takes its jobs from one queue: whichever thread is free runs the
/// next job (the build's GIF processing, where one large GIF's WebP takes many times another's),
/// and `drain()` still waits for every job queued before it, on every thread.
@Suite("Worker threads", .ownThread, .timeLimit(.minutes(2)))
struct WorkerThreadTests {
    @Test func aFreeThreadTakesTheNextJobWhileAnotherRunsALongOne() async throws {
        let worker = WorkerThread(name: "gifpack.test-worker", threads: 2)
        defer { worker.stop() }
        let long = Gate()
        let ran = Mutex<[String]>([])
        worker.async {
            long.wait()
            ran.withLock { $0.append("long") }
        }
        // Round robin would queue every other job behind the long one; these all run meanwhile.
        for index in 0..<5 { worker.async { ran.withLock { $0.append("short \(index)") } } }
        try await waitUntil { ran.withLock { $0.count } == 5 }
        #expect(ran.withLock { $0 } == (0..<5).map { "short \($0)" }, "taken in order by the free thread")

        let drained = Mutex(false)
        let draining = testTask {
            await worker.drain()
            drained.withLock { $0 = true }
        }
        // The queue is empty but the long job still runs: the drain waits for it.
        worker.async { ran.withLock { $0.append("after the drain") } }
        try await waitUntil { ran.withLock { $0.count } == 6 }
        #expect(!drained.withLock { $0 }, "drained while a job queued before it still ran")
        long.open()
        await draining.value
        #expect(ran.withLock { $0 }.contains("long"))
    }

    @Test func oneThreadRunsItsJobsInOrderAndDrainWaitsForThem() async throws {
        let worker = WorkerThread(name: "gifpack.test-serial")
        defer { worker.stop() }
        let ran = Mutex<[Int]>([])
        for index in 0..<50 { worker.async { ran.withLock { $0.append(index) } } }
        await worker.drain()
        #expect(ran.withLock { $0 } == Array(0..<50))
        #expect(await worker.run { ran.withLock { $0.count } } == 50)
    }
}

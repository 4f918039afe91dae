import Foundation
import GifPackSystem
@testable import GifPackClient
import Testing
@testable import GifPackTestSupport

/// `ParallelWork` returns, and the caller of a `BlockingPool` or `WorkerThread` job goes on, only
/// once every thread that ran the body has let go of it, and with it of whatever it holds. The
/// pack follower's body holds the reader of the downloaded `.part` file: a thread that still held
/// it after the call returned kept the file's descriptor open, so a deleted `.part` kept its disk
/// space, and a full disk stayed full for the caller's next write (the loader's lazy tier on a
/// small disk failed with ENOSPC in 2 of about 10 full runs). Without the fix, 9-68 of 600
/// `ParallelWork` calls, 8-80 of 300 pool calls and 1-3 of 600 worker-thread calls returned early
/// here.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ParallelWorkTests {
    final class Probe: @unchecked Sendable {  // @unchecked: only counted, never changed.
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    final class Weak: @unchecked Sendable {  // @unchecked: written once before it is shared, then only read.
        weak var probe: Probe?
        init(_ probe: Probe) { self.probe = probe }
    }

    /// Runs `ParallelWork.run` with a body holding a probe the test keeps only weakly.
    static func runHolding(width: Int) -> Weak {
        let probe = Probe(width)
        let kept = Weak(probe)
        let calls = GifPackSystem.Locked(0)
        ParallelWork.run(width: width, name: "gifpack.test") { [probe] in
            _ = probe.number
            calls.withLock { $0 += 1 }
        }
        #expect(calls.withLock { $0 } == width)
        return kept
    }

    static func startHolding() -> Weak {
        let probe = Probe(1)
        let kept = Weak(probe)
        let background = ParallelWork.start(name: "gifpack.test") { [probe] in probe.number }
        #expect(background.wait() == 1)
        return kept
    }

    @Test func whatTheBodyHoldsIsLetGoOnceTheCallReturns() {
        var held = 0
        for round in 0..<300 {
            if Self.runHolding(width: 2 + round % 3).probe != nil { held += 1 }
            if Self.startHolding().probe != nil { held += 1 }
        }
        #expect(held == 0, "\(held) of 600 calls returned while a thread still held the body")
    }
}

extension ParallelWorkTests {
    /// The same of the blocking pool: the caller goes on only once the worker let go of the job.
    static func poolHolding(_ pool: BlockingPool) async -> Weak {
        let probe = Probe(7)
        let kept = Weak(probe)
        let number = await pool.run { [probe] in probe.number }
        #expect(number == 7)
        return kept
    }

    @Test func whatABlockingJobHoldsIsLetGoBeforeItsCallerGoesOn() async {
        let pool = BlockingPool(name: "gifpack.test", width: 2)
        var held = 0
        for _ in 0..<300 where await Self.poolHolding(pool).probe != nil { held += 1 }
        #expect(held == 0, "\(held) of 300 calls went on while a worker still held the job")
    }
}

extension ParallelWorkTests {
    /// The same of a worker thread's job, run or drained.
    static func workerHolding(_ worker: WorkerThread) async -> (run: Weak, drained: Weak) {
        let (first, second) = (Probe(3), Probe(4))
        let kept = (Weak(first), Weak(second))
        let number = await worker.run { [first] in first.number }
        #expect(number == 3)
        worker.async { [second] in _ = second.number }
        await worker.drain()
        return kept
    }

    @Test func whatAWorkerThreadsJobHoldsIsLetGoBeforeItsCallerGoesOn() async {
        let worker = WorkerThread(name: "gifpack.test", threads: 2)
        var held = 0
        for _ in 0..<300 {
            let (run, drained) = await Self.workerHolding(worker)
            if run.probe != nil { held += 1 }
            if drained.probe != nil { held += 1 }
        }
        worker.stop()
        #expect(held == 0, "\(held) of 600 calls went on while a thread still held the job")
    }
}

extension ParallelWorkTests {
    /// `Lease`'s own example, as its doc comment writes it (the print's output aside).
    @Test func aLeaseLetsGoOfItsBodyOnceRun() {
        var probe: Probe? = Probe(5)
        let kept = Weak(probe!)
        let lease = Lease { [probe] in probe!.number }
        probe = nil
        #expect(kept.probe != nil, "the lease holds the body until it runs")
        let finished = DispatchSemaphore(value: 0)
        let answer = GifPackSystem.Locked(0)
        Thread {
            answer.withLock { $0 = lease.run() }
            finished.signal()
        }.start()
        finished.wait()
        #expect(answer.withLock { $0 } == 5)
        #expect(kept.probe == nil, "once run, the lease holds nothing")
    }
}

import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// A request waiting out a 429's cool-down in a cancelled build. The wait slept
/// in a loop with `try?`, so once cancelled each sleep threw at once and the loop spun a core until
/// the cool-down (up to 120 s) ended. Told by the sleeps begun and by the build's end, not by time.
@Suite("A cool-down in a cancelled build", .ownThread, .timeLimit(.minutes(3)))
struct CoolDownCancellationTests {
    /// One request waits out a 120 s cool-down; cancelled, it ends with `CancellationError` after the
    /// one sleep it began (the spinning wait began thousands, and returned only when the cool-down ended).
    @Test func aCancelledWaitEndsAtOnceAfterOneSleep() async throws {
        let governor = FetchGovernor(settings: FetchSettings(), requestsAlreadySent: 0, startedAt: .now)
        governor.noteRateLimited(coolDown: .seconds(120))
        let ended = Mutex<Result<Void, CancellationError>?>(nil)
        let waiter = testTask {
            let result: Result<Void, CancellationError>
            do throws(CancellationError) {
                try await governor.waitForCoolDown()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            ended.withLock { $0 = result }
        }
        try await waitUntil { governor.coolDownSleeps >= 1 }
        waiter.cancel()
        // Either it ends, or it spins: thousands of sleeps begun tell the spin without a stopwatch.
        try await waitUntil { ended.withLock { $0 != nil } || governor.coolDownSleeps > 1_000 }
        let outcome = ended.withLock { $0 }
        #expect(governor.coolDownSleeps == 1, "sleeps begun after the cancel: \(governor.coolDownSleeps - 1)")
        guard case .failure? = outcome else {
            Issue.record("the cancelled wait did not end cancelled: \(String(describing: outcome))")
            return
        }
    }

    /// A whole build: every GIF is answered 429 with `Retry-After: 120`. The early fetch's one
    /// request sets the cool-down; the fetch stage's first request waits it out when the caller
    /// cancels. The build ends cancelled, with no other request sent, instead of 120 s later.
    @Test func aBuildCancelledDuringACoolDownEndsCancelled() async throws {
        let server = try startFixture(count: 2) { $0.gifDimension = 32 }
        defer { server.stop() }
        for id in server.catalog.exercises.map(\.id) { server.setDefaultFault(.tooManyRequests(retryAfter: .seconds(120)), forExercise: id) }
        let workspace = try TemporaryDirectory()
        let manifest = try ManifestLoader().parse(
            v1Manifest(server, fetch: "  concurrency: 1\n", packs: "packs:\n  - name: all"),
            environment: [:])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)
        let planned = Mutex(false)
        let ended = Mutex<BuildReport?>(nil)
        let build = testTask {
            let report = await BuildPipeline(manifest: manifest, options: options) { event in
                if case .fetchPlanned = event { planned.withLock { $0 = true } }
            }.run()
            ended.withLock { $0 = report }
            return report
        }
        try await waitUntil { (planned.withLock { $0 } && server.stats.statusCounts[429] == 1) || ended.withLock { $0 != nil } }
        #expect(ended.withLock { $0 == nil }, "the build ended before its fetch stage: \(String(describing: ended.withLock { $0?.message }))")
        build.cancel()
        try await waitUntil { ended.withLock { $0 != nil } }
        let report = await build.value
        #expect(report.exitStatus == .failed, "\(report.message)")
        #expect(report.message == "the build was cancelled during its fetch stage; index.json was not written (the GIFs fetched stay cached)")
        #expect(server.stats.imageRequests == 1, "only the early request that set the cool-down: \(server.stats)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }
}

import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// A build run in-process (the GifPack library) and cancelled by its caller while GIFs download.
@Suite("A build its caller cancels", .ownThread, .timeLimit(.minutes(3)))
struct BuildCancellationTests {
    /// Cancelled while its first GIFs drip in: the requests in flight end, no other is sent,
    /// no index is written (once, every GIF came back "cancelled" and a pack of 30 exercises
    /// without a GIF was written with exit 3), and the next build fetches and packs all.
    ///
    /// The test cancels once the fetch stage has begun (cancelled while the last page was still
    /// being read, the build rightly says its catalog stage was cancelled). How many the early fetch has in flight when the
    /// fetch stage takes over depends on timing (one to three), so the test asserts what cancelling
    /// guarantees whatever that number: at most a window's worth were sent, each exercise once.
    @Test func aCancelledBuildSendsNothingMoreWritesNoIndexAndTheNextBuildHasEverything() async throws {
        let server = try startFixture(count: 30) { $0.gifDimension = 64 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id)
        for id in ids { server.setDefaultFault(.slowBody(bytesPerSecond: 5), forExercise: id) }
        let workspace = try TemporaryDirectory()
        // The drips wait as long as a loaded machine takes to cancel: never timed out and retried.
        let manifest = v1Manifest(
            server, fetch: "  concurrency: 3\n  request_timeout: 30m\n  low_speed_limit: 0\n",
            packs: "packs:\n  - name: all")
        let ended = Mutex(false)
        let fetching = Mutex(false)
        let build = testTask {
            defer { ended.withLock { $0 = true } }
            return try await runBuild(manifest: manifest, workspace: workspace) { event in
                if case .stageStarted(.fetch) = event { fetching.withLock { $0 = true } }
            }
        }
        // The fetch stage has begun (the catalog is read and planned) and a GIF's drip is under way.
        try await waitUntil { (fetching.withLock { $0 } && server.stats.inFlight >= 1) || ended.withLock { $0 } }
        guard !ended.withLock({ $0 }) else {
            let report = try await build.value
            Issue.record("the build ended before a GIF request was in flight: \(report.exitStatus) \(report.message)")
            return
        }
        build.cancel()
        let report = try await build.value
        #expect(report.exitStatus == .failed, "\(report.message)")
        #expect(report.message == "the build was cancelled during its fetch stage; index.json was not written (the GIFs fetched stay cached)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        // The server records a request when its answer ends: those cut short, and no other.
        try await waitUntil { server.stats.inFlight == 0 }
        let stats = server.stats
        #expect(
            (1...3).contains(stats.imageRequests) && stats.requestsByExercise.count == stats.imageRequests
                && stats.requestsByExercise.values.allSatisfy { $0 == 1 }, "\(stats)")

        for id in ids { server.setDefaultFault(nil, forExercise: id) }
        server.resetStats()
        let again = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(again.exitStatus == .success, "\(again.message)")
        #expect(again.gifs.valid == 30 && server.stats.imageRequests == 30, "\(server.stats)")
    }

    /// Cancelled while the catalog's pages arrive: the build says its catalog stage was cancelled
    /// (not that a page failed, which reads like a broken source) and writes nothing.
    @Test func aBuildCancelledWhileTheCatalogArrivesSaysSo() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .endless(paddingBytes: 0) }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let ended = Mutex(false)
        let build = testTask {
            defer { ended.withLock { $0 = true } }
            return try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        }
        try await waitUntil { server.stats.listRequests >= 2 || ended.withLock { $0 } }
        build.cancel()
        let report = try await build.value
        #expect(report.exitStatus == .failed, "\(report.message)")
        #expect(report.message == "the build was cancelled during its catalog stage; index.json was not written (the GIFs fetched stay cached)")
        try await waitUntil { server.stats.inFlight == 0 }
        #expect(server.stats.imageRequests <= 3, "\(server.stats)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }
}

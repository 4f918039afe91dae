import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// GIF requests while the list still arrives: they start with the first pages' image
/// ids, take only the slots no list page needs, and until the list is whole and checked they are
/// never more than the list requests sent. Told by the fixture's request log (which answers came
/// first) with the last pages held unanswered, not by time.
@Suite("Fetching GIFs while the list arrives", .ownThread, .timeLimit(.minutes(5)))
struct EarlyFetchTests {
    /// v1, whose announced total asks for pages 10, 20 and 30 at once: with page 30 held, two
    /// slots are free for GIFs.
    private func earlyManifest(_ server: FixtureServer, fetch: String = "", packs: String = "packs:\n  - name: all") -> String {
        // A held page waits as long as a loaded machine needs, never timed out and asked again.
        v1Manifest(server, fetch: "  concurrency: 3\n  request_timeout: 30m\n  low_speed_limit: 0\n" + fetch, packs: packs)
    }

    /// Runs a build while list pages from `heldFrom` on are held; `whileHeld` runs once the build
    /// has sent `imageRequests` GIF requests (a failure there still releases the pages).
    private func build(
        _ manifest: String, server: FixtureServer, workspace: TemporaryDirectory, heldFrom offset: Int,
        imageRequests: Int = 1, whileHeld: () async throws -> Void = {}
    ) async throws -> BuildReport {
        server.holdListPages(fromOffset: offset)
        async let report = runBuild(manifest: manifest, workspace: workspace)
        do {
            // A long deadline: the full suite's other builds can hold this one's start for a while.
            try await waitUntil(deadline: .seconds(200)) { server.stats.imageRequests >= imageRequests }
            try await whileHeld()
        } catch {
            let stats = server.stats
            Issue.record("while list pages from \(offset) were held: \(stats.listRequests) list and \(stats.imageRequests) image requests")
            server.holdListPages(fromOffset: nil)
            _ = try await report
            throw error
        }
        server.holdListPages(fromOffset: nil)
        return try await report
    }

    /// The first GIF request goes out while the last list page is still unanswered, and the build
    /// made so is the same, byte for byte, as one whose pages all came at once.
    @Test func aGIFRequestIsSentBeforeTheLastListPageIsAnswered() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await build(earlyManifest(server), server: server, workspace: workspace, heldFrom: 30)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.gifs.valid == 40)
        let log = server.requestLog
        let lastList = try #require(log.lastIndex { $0.exerciseID == nil })
        let firstImage = try #require(log.firstIndex { $0.exerciseID != nil })
        #expect(firstImage < lastList, "the first GIF was answered after the last list page: \(log.map { $0.exerciseID ?? "list" })")
        #expect(server.stats.listRequests == 4, "pages 0 to 30, no more")
        #expect(server.stats.requestsByExercise.values.allSatisfy { $0 == 1 }, "each GIF asked for once")

        // Every page at once, into another workspace: the same index and packs.
        server.resetStats()
        let again = try TemporaryDirectory()
        let plain = try await runBuild(manifest: earlyManifest(server), workspace: again)
        #expect(plain.exitStatus == .success, "\(plain.message)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: workspace.file("dist")).filter { path in
            var directory: ObjCBool = false
            return path != "report.json" && FileManager.default.fileExists(atPath: workspace.file("dist/\(path)"), isDirectory: &directory)
                && !directory.boolValue
        }.sorted()
        #expect(files.contains("index.json") && files.contains { $0.hasSuffix(".tar.zst") })
        for file in files {
            #expect(try fileBytes(workspace.file("dist/\(file)")) == fileBytes(again.file("dist/\(file)")), "\(file) differs")
        }
    }

    /// A pack whose selector chooses nothing stops the build once the list is whole; until then
    /// the GIF requests sent were never more than the list requests (here 4 pages: 4 GIFs).
    @Test func aBuildStoppedByAnEmptySelectorSpentNoMoreGIFRequestsThanListRequests() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let packs = "packs:\n  - name: all\n  - name: legs\n    selector:\n      bodyPart: [legs]"
        let workspace = try TemporaryDirectory()
        let report = try await build(
            earlyManifest(server, packs: packs), server: server, workspace: workspace, heldFrom: 30,
            imageRequests: 4
        ) {
            // The allowance is spent: nothing more goes out while the last page is held.
            let spent = try await holdsThroughout(.milliseconds(300)) { server.stats.imageRequests == 4 }
            #expect(spent, "\(server.stats)")
            #expect(server.stats.listRequests == 3, "page 30 is held")
        }
        #expect(report.exitStatus == .usage, "\(report.message)")
        #expect(report.message.contains("pack \"legs\" selects no exercise"), "\(report.message)")
        #expect(server.stats.imageRequests == 4 && server.stats.listRequests == 4, "\(server.stats)")
        // The message says what was spent (it used to say that no GIF was requested).
        #expect(
            report.message.contains("; 4 GIF requests were sent while the list arrived (what they fetched stays cached) and no pack or index was written"),
            "\(report.message)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    /// A catalog that lost more than `max_removed` allows: the GIFs asked for again (conditionally)
    /// while its pages arrived were no more than its list requests, and no pack or index was written.
    @Test func aBuildStoppedByMaxRemovedSpentNoMoreGIFRequestsThanListRequests() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = earlyManifest(server, fetch: "  refresh_after: 0")
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        let indexBefore = try fileBytes(workspace.file("dist/index.json"))

        server.listOnly(first: 20)
        server.resetStats()
        // Pages 0 and 10 (the total says 20): page 10 held, one slot for GIFs, two list requests.
        let report = try await build(manifest, server: server, workspace: workspace, heldFrom: 10, imageRequests: 2) {
            let spent = try await holdsThroughout(.milliseconds(300)) { server.stats.imageRequests == 2 }
            #expect(spent, "\(server.stats)")
        }
        #expect(report.exitStatus == .catalogShrank, "\(report.message)")
        #expect(server.stats.imageRequests == 2 && server.stats.listRequests == 2, "\(server.stats)")
        #expect(server.stats.statusCounts[304] == 2, "conditional requests for GIFs the cache holds: \(server.stats)")
        #expect(
            report.message.contains("; 2 GIF requests were sent while the list arrived (what they fetched stays cached) and no pack or index was written"),
            "\(report.message)")
        #expect(try fileBytes(workspace.file("dist/index.json")) == indexBefore)
    }

    /// A v1 total the pages contradict (25 said, 40 held) stops the build once the list is whole;
    /// the message counts the GIF requests sent while it arrived (it said none were).
    @Test func aContradictoryCatalogSaysHowManyGIFRequestsItSent() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        server.setV1ReportedTotal(25)
        let workspace = try TemporaryDirectory()
        let report = try await build(earlyManifest(server), server: server, workspace: workspace, heldFrom: 30)
        #expect(report.exitStatus == .failed, "\(report.message)")
        #expect(report.message.contains("metadata.totalExercises is 25"), "\(report.message)")
        try await waitUntil { server.stats.inFlight == 0 }
        let sent = server.stats.imageRequests
        #expect(sent >= 1 && sent <= server.stats.listRequests, "\(server.stats)")
        #expect(
            report.message.contains("refusing a catalog that contradicts itself (\(sent) GIF request\(sent == 1 ? " was" : "s were") sent while the list arrived"),
            "\(sent) sent: \(report.message)")
    }

    /// One window across the hand-over. When the list is whole three early GIF
    /// requests are held in flight; the fetch stage plans beside them, and when one is answered its
    /// slot goes to the next GIF at once while the other two are still held. The fetch stage used
    /// to wait for every early request before sending its own, so the window ran below 3 there.
    @Test func aSlotAnEarlyRequestFreesIsFilledWhileTheOtherEarlyRequestsAreInFlight() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        // The list's order: the early fetch asks for the first page's GIFs in it.
        let ids = server.catalog.v1Exercises.map(\.exerciseId)
        server.holdImages(ids)
        let workspace = try TemporaryDirectory()
        let manifest = try ManifestLoader().parse(earlyManifest(server), environment: [:])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)
        let planned = Mutex(false)
        let toRequest = Mutex<Int?>(nil)
        let build = testTask {
            await BuildPipeline(manifest: manifest, options: options) { event in
                if case .fetchPlanned(_, let count) = event {
                    toRequest.withLock { $0 = count }
                    planned.withLock { $0 = true }
                }
            }.run()
        }
        do {
            // The list is in (pages 0 to 30) and the fetch stage planned, three early requests held.
            try await waitUntil(deadline: .seconds(200)) {
                planned.withLock { $0 } && server.stats.listRequests == 4 && server.stats.inFlight == 3
            }
            #expect(server.stats.imageRequests == 0, "\(server.stats)")
            server.releaseImages([ids[0]])
            // The first early request is answered; the next GIF takes its slot beside the two still held.
            try await waitUntil { server.stats.imageRequests == 1 && server.stats.inFlight == 3 }
            #expect(server.stats.requestsByExercise == [ids[0]: 1], "\(server.stats)")
        } catch {
            Issue.record("planned: \(planned.withLock { $0 }), \(server.stats)")
            server.releaseImages(nil)
            _ = await build.value
            throw error
        }
        server.releaseImages(nil)
        let report = await build.value
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.gifs.valid == 40)
        // The plan's count of requests includes those the early fetch sent or holds: a first build asks for every GIF.
        #expect(toRequest.withLock { $0 } == 40)
        #expect(
            server.stats.requestsByExercise.count == 40 && server.stats.requestsByExercise.values.allSatisfy { $0 == 1 },
            "each GIF asked for once: \(server.stats)")
    }
}

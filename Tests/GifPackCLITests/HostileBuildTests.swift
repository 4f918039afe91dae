import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackCLI
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The builder against a damaged cache and runs that stop early.
@Suite("Hostile builds", .timeLimit(.minutes(5)))
struct HostileBuildTests {
    private func verify(_ dist: String) async throws -> ProcessResult {
        try await run(productPath("gifpack"), ["verify", dist])
    }

    @Test func aCorruptedCachedGIFIsNeverPackedAndTheNextRunHeals() async throws {
        let server = try startFixture(count: 12) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        // refresh_after 0: every GIF is asked for conditionally, and a 304 reuses the cached blob.
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0", maxMissing: "0")
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let ids = server.catalog.exercises.map(\.id).sorted()
        let victim = try #require(readIndex(workspace.file("dist/index.json")).packs.first?.exercises.first { $0.id == ids[2] }?.gif)

        // Flip one byte in the middle of the cached blob and drop every cached frame.
        let blob = CacheLayout(root: workspace.file("cache")).blobPath(sha256: victim)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: blob)))
        bytes[bytes.count / 2] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: blob))
        try FileManager.default.removeItem(atPath: workspace.file("cache/frames"))
        // Another GIF changes: the pack needs a new version, assembled from the cache.
        server.replaceGIF(id: ids[7], with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 2, colors: 4, seed: 77))

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        let afterSecond = try await verify(workspace.file("dist"))
        #expect(afterSecond.status == 0, "a corrupted GIF was packed: \(afterSecond.output) \(afterSecond.error)")
        // The damaged blob was dropped and fetched again in the same run; the pack holds the true bytes.
        #expect(second.exitStatus == .success, "\(second.message)")
        #expect(second.damagedBlobs == [victim])
        #expect(second.message.contains("1 damaged cached GIF(s) were downloaded again"), "\(second.message)")
        #expect(second.packs.first?.outcome == "published")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.first?.version == 2)
        #expect(index.packs.first?.exercises.first { $0.id == ids[2] }?.gif == victim)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: blob)) == Data(server.catalog.gifBytes(id: ids[2]) ?? []),
            "the cache holds the true bytes again")

        // Healed: the next run finds nothing to do and nothing damaged.
        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.exitStatus == .success && third.damagedBlobs.isEmpty, "\(third.message)")
        #expect(third.message.contains("nothing changed"), "\(third.message)")
        #expect(try await verify(workspace.file("dist")).status == 0)
    }

    @Test func aGIFDamagedAgainAfterItsNewDownloadFailsTheBuildAndWritesNoIndex() async throws {
        let server = try startFixture(count: 6) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0", maxMissing: "0")
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        let ids = server.catalog.exercises.map(\.id).sorted()
        let victim = try #require(readIndex(workspace.file("dist/index.json")).packs.first?.exercises.first { $0.id == ids[1] }?.gif)
        let blob = CacheLayout(root: workspace.file("cache")).blobPath(sha256: victim)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: blob)))
        bytes[bytes.count / 2] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: blob))
        try FileManager.default.removeItem(atPath: workspace.file("cache/frames"))
        server.replaceGIF(id: ids[4], with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 2, colors: 4, seed: 78))
        // The server now answers the victim's full download with a GIF that fails validation.
        server.setDefaultFault(.corruptFrame, forExercise: ids[1])

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .failed, "\(second.message)")
        #expect(second.message.contains(victim) && second.message.contains("max_missing"), "\(second.message)")
        #expect(try readIndex(workspace.file("dist/index.json")).packs.first?.version == 1, "the index was not changed")
        #expect(try await verify(workspace.file("dist")).status == 0)
        #expect(!FileManager.default.fileExists(atPath: blob), "the damaged blob is gone")
    }

    @Test func aBudgetStopSummarisesTheExercisesItNeverAttempted() async throws {
        let server = try startFixture(count: 60)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try ManifestLoader().parse(
            rapidAPIManifest(server: server, fetch: "  max_requests: 8"),
            environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)
        let lines = Mutex<[String]>([])
        let report = await BuildPipeline(manifest: manifest, options: options) { event in
            if let entry = BuildEventLog.entry(for: event) { lines.withLock { $0.append(entry.message) } }
        }.run()
        #expect(report.stopReason == .requestBudgetSpent(limit: 8))
        let summary = try #require(report.notAttempted)
        let ids = server.catalog.exercises.map(\.id).sorted()
        #expect(summary.count == report.gifs.rejectedByReason[RejectionReason.notAttempted.code])
        #expect(summary.count >= 50, "60 wanted, at most 8 requests: \(summary.count)")
        #expect(summary.examples.count == 5 && summary.examples == summary.examples.sorted())
        #expect(summary.examples.allSatisfy(ids.contains))
        #expect(!report.rejections.contains { $0.reason == .notAttempted }, "not listed one by one")
        #expect(report.message.contains("\(summary.count) exercise(s) not attempted (e.g. \(summary.examples[0])"), "\(report.message)")
        let mentions = lines.withLock { $0.filter { $0.contains("not-attempted") || $0.contains("not attempted") } }
        #expect(mentions.count <= 2, "one log line per unattempted exercise: \(mentions.count)")
        let written = try String(contentsOfFile: workspace.file("dist/report.json"), encoding: .utf8)
        #expect(written.components(separatedBy: RejectionReason.notAttempted.code).count <= 3)
    }

    @Test func aCorruptStateIsMovedAsideRebuiltFromTheIndexAndTheBlobsAndTheBuildGoesOn() async throws {
        let server = try startFixture(count: 8)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, maxMissing: "0")
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let statePath = workspace.file("cache/state.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: statePath + suffix) }
        try Data(String(repeating: "this is not a database; ", count: 400).utf8).write(to: URL(fileURLWithPath: statePath))
        server.resetStats()

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .success, "\(second.message)")
        let recovery = try #require(second.stateRecovery)
        #expect(recovery.movedTo.hasPrefix(statePath + ".corrupt-"))
        #expect(FileManager.default.fileExists(atPath: recovery.movedTo), "the damaged file is kept for inspection")
        #expect(recovery.rebuiltPacks == 1 && recovery.rebuiltGIFs == 8, "\(recovery)")
        #expect(second.message.contains("state.sqlite") && second.message.contains(recovery.movedTo), "\(second.message)")
        // Rebuilt from the blobs and the index: nothing fetched again, nothing written again.
        #expect(server.stats.imageRequests == 0)
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        let written = try String(contentsOfFile: workspace.file("dist/report.json"), encoding: .utf8)
        #expect(written.contains("stateRecovery"))

        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.exitStatus == .success && third.stateRecovery == nil, "\(third.message)")
    }

    /// Every file under `directory` with the SHA-256 of its bytes.
    static func files(under directory: String) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String]) ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: "\(directory)/\(name)", isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[name] = sha256Hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)"))))
        }
        return files
    }

    @Test func aDryRunReportsACorruptStateAndWhatABuildWouldRebuildWithoutMovingAnything() async throws {
        let server = try startFixture(count: 8)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifestText = rapidAPIManifest(server: server, maxMissing: "0")
        #expect(try await runBuild(manifest: manifestText, workspace: workspace).exitStatus == .success)
        let cache = workspace.file("cache")
        let statePath = "\(cache)/state.sqlite"
        let manifest = try ManifestLoader().parse(manifestText, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(outputDirectory: workspace.file("dist"), cacheDirectory: cache)

        // A sound state: read, not changed (no migration, no journal files left beside it).
        let sound = try Self.files(under: cache)
        let soundPlan = try await DryRun(manifest: manifest, options: options).plan()
        #expect(soundPlan.stateRecovery == nil && soundPlan.skippedFresh == 8, "\(soundPlan)")
        let afterSound = try Self.files(under: cache)
        #expect(afterSound == sound, "\(afterSound.filter { sound[$0.key] != $0.value }.keys.sorted()) \(sound.filter { afterSound[$0.key] == nil }.keys.sorted())")

        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: statePath + suffix) }
        try Data(String(repeating: "this is not a database; ", count: 400).utf8).write(to: URL(fileURLWithPath: statePath))
        let before = try Self.files(under: cache)
        let outputBefore = try Self.files(under: workspace.file("dist"))
        server.resetStats()

        // The library: the recovery a build would make, worked out in memory; the plan made from it
        // (every GIF rebuilt and fresh: no image request, where an empty state would ask for all 8).
        let plan = try await DryRun(manifest: manifest, options: options).plan()
        let recovery = try #require(plan.stateRecovery)
        #expect(recovery.movedTo.hasPrefix(statePath + ".corrupt-"))
        #expect(recovery.rebuiltPacks == 1 && recovery.rebuiltGIFs == 8, "\(recovery)")
        #expect(plan.fullRequests == 0 && plan.skippedFresh == 8, "\(plan)")

        // The command line says so, exits 0, and moves nothing either.
        let file = try workspace.write(manifestText, to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        let dry = try await run(
            productPath("gifpack"), ["build", "-m", file, "--out", workspace.file("dist"), "--cache", cache, "--dry-run"],
            environment: environment)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(
            dry.output.contains("state: the state database is damaged") && dry.output.contains("would move it aside to \(statePath).corrupt-")
                && dry.output.contains("(1 pack(s), 8 GIF(s))") && dry.output.contains("nothing was moved"), "\(dry.output)")
        #expect(try Self.files(under: cache) == before, "a dry run moves, creates and changes nothing in the cache")
        #expect(try Self.files(under: workspace.file("dist")) == outputBefore)
        #expect(server.stats.imageRequests == 0)

        // The real build then does what the dry run said.
        let built = try await runBuild(manifest: manifestText, workspace: workspace)
        #expect(built.stateRecovery?.rebuiltGIFs == 8 && server.stats.imageRequests == 0, "\(built.message)")
    }

    /// A real full disk: the cache lives on a small tmpfs mounted for the test (root only; the
    /// suite runs as root here, and mount(8) is the only way to get a genuine ENOSPC).
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullCacheDiskStopsTheBuildAtTheFirstENOSPC() async throws {
        let server = try startFixture(count: 40) {
            $0.gifDimension = 96; $0.duplicateEvery = 0; $0.colorsRange = 8...16
        }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let mountPoint = workspace.file("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let total = server.catalog.exercises.compactMap { server.catalog.gifBytes(id: $0.id)?.count }.reduce(0, +)
        // Room for the state and about a third of the GIFs (each is kept as a blob and a frame).
        let size = (256 * 1024 + total / 3) / 4096 * 4096
        let mounted = try await run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount: \(mounted.error)")
        // Unmounted as soon as the build is done (off the cooperative pool: a defer cannot await).
        let report: BuildReport
        do {
            report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace, cache: "small/cache")
        } catch {
            _ = try? await run("/bin/umount", [mountPoint])
            throw error
        }
        _ = try? await run("/bin/umount", [mountPoint])
        guard case .diskFull? = report.stopReason else {
            Issue.record("expected a disk-full stop, got \(String(describing: report.stopReason)): \(report.message)")
            return
        }
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("disk is full"), "\(report.message)")
        let stored = report.gifs.downloaded
        #expect(
            server.stats.imageRequests <= stored + 3 + 3 + GIFProcessor.maxBacklog,
            "requests went on after the disk was full: \(server.stats.imageRequests) sent, \(stored) stored")
        #expect((report.notAttempted?.count ?? 0) > 0)
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")), "no index was written")
    }
}

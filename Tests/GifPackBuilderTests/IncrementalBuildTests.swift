import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Incremental, crash-safe builds", .ownThread, .timeLimit(.minutes(5)))
struct IncrementalBuildTests {
    func server(count: Int, latency: Int = 0) throws -> FixtureServer {
        try startFixture(count: count) { $0.latencyMilliseconds = latency }
    }

    /// The index exists, and every pack it names exists with the recorded size and SHA-256 (a
    /// missing index throws: it is a failure, never a pass).
    func expectIndexVerifies(_ dist: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let index = try readIndex("\(dist)/index.json")
        for pack in index.packs {
            let data = try? Data(contentsOf: URL(fileURLWithPath: "\(dist)/\(pack.file)"))
            #expect(data != nil, "\(pack.file) is missing", sourceLocation: sourceLocation)
            if let data {
                #expect(
                    Int64(data.count) == pack.bytes && sha256Hex([UInt8](data)) == pack.sha256,
                    "\(pack.file) does not match the index", sourceLocation: sourceLocation)
            }
        }
    }

    func snapshot(_ dist: String) throws -> [String: String] {
        var files: [String: String] = [:]
        for file in try allFiles(under: dist) where !file.hasSuffix("report.json") {
            files[file] = sha256Hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        }
        return files
    }

    @Test func aSecondBuildDownloadsNothingAndLeavesDistByteIdentical() async throws {
        let server = try server(count: 15)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let first = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(first.exitStatus == .success)
        let before = try snapshot(workspace.file("dist"))
        server.resetStats()

        // Within refresh_after: no image request at all.
        let second = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(second.exitStatus == .success)
        #expect(server.stats.imageRequests == 0)
        #expect(second.gifs.skippedFresh == 15)
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        #expect(try snapshot(workspace.file("dist")) == before)

        // With refresh_after 0: conditional requests, every one answered 304, no body downloaded.
        server.resetStats()
        let third = try await runBuild(manifest: rapidAPIManifest(server: server, fetch: "  refresh_after: 0"), workspace: workspace)
        #expect(server.stats.imageRequests == 15)
        #expect(server.stats.notModified == 15)
        #expect(third.gifs.downloaded == 0)
        #expect(try snapshot(workspace.file("dist")) == before)
    }

    @Test func oneChangedGIFMakesANewVersionOfOnlyThePacksHoldingIt() async throws {
        let server = try server(count: 10)
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let packs = """
            packs:
              - name: first-half
                selector:
                  ids: [\(ids[0..<5].map { "\"\($0)\"" }.joined(separator: ", "))]
              - name: second-half
                selector:
                  ids: [\(ids[5...].map { "\"\($0)\"" }.joined(separator: ", "))]
            """
        let manifest = rapidAPIManifest(server: server, packs: packs, fetch: "  refresh_after: 0")
        let workspace = try TemporaryDirectory()
        _ = try await runBuild(manifest: manifest, workspace: workspace)
        server.replaceGIF(id: ids[7], with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 2, colors: 4, seed: 77))

        let report = try await runBuild(manifest: manifest, workspace: workspace)

        #expect(report.packs.map { "\($0.name) v\($0.version) \($0.outcome)" } == ["first-half v1 unchanged", "second-half v2 published"])
        #expect(report.gifs.downloaded == 1)
        #expect(report.gifs.notModified == 9)
        try expectIndexVerifies(workspace.file("dist"))
    }

    @Test func catalogChangesAreReportedAndARemovedExerciseLeavesThePack() async throws {
        let server = try server(count: 8)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let ids = server.catalog.exercises.map(\.id).sorted()
        let all = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(all.catalogChanges?.hadPrevious == false)
        // Narrow the pack with a selector: the pack loses exercises, so a new version appears.
        let fewer = rapidAPIManifest(server: server, packs: "packs:\n  - name: all\n    selector:\n      ids: [\"\(ids[0])\", \"\(ids[1])\"]")
        let report = try await runBuild(manifest: fewer, workspace: workspace)
        #expect(report.packs.first?.version == 2)
        #expect(try readIndex(workspace.file("dist/index.json")).packs.first?.exercises.map(\.id) == [ids[0], ids[1]])
        #expect(report.catalogChanges?.hadPrevious == true)
        #expect(report.catalogChanges?.added == [] && report.catalogChanges?.removed == [])
    }

    @Test(arguments: CrashPoint.allCases)
    func aKilledBuildLeavesAVerifiableIndexAndTheNextRunFinishesWithoutRefetching(_ point: CrashPoint) async throws {
        let server = try server(count: 24, latency: 5)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifestPath = try workspace.write(rapidAPIManifest(server: server, fetch: "  refresh_after: 0"), to: "manifest.yaml")
        let arguments = ["build", "--manifest", manifestPath, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "--quiet"]
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["SOURCE_DATE_EPOCH"] = "1700000000"

        // A first complete build, so there is an index to protect; then a changed GIF so the
        // next build has to write a new version.
        let setup = try await run(productPath("gifpack"), arguments, environment: environment)
        #expect(setup.status == 0, "\(setup.error)")
        let before = try snapshot(workspace.file("dist"))
        for (offset, exercise) in server.catalog.exercises.sorted(by: { $0.id < $1.id }).enumerated() where offset % 2 == 0 {
            server.replaceGIF(
                id: exercise.id,
                with: try GIFSynthesizer.animatedGIF(
                    width: 30, height: 30, frames: 2, colors: 4,
                    seed: UInt64(500 + offset)))
        }
        server.resetStats()

        var crashing = environment
        crashing["GIFPACK_CRASH_AT"] = point.rawValue
        let crashed = try await run(productPath("gifpack"), arguments, environment: crashing)
        #expect(crashed.status == 128 + 9 || crashed.status == 9, "expected SIGKILL at \(point.rawValue), got \(crashed.status)")
        try expectIndexVerifies(workspace.file("dist"))
        #expect(
            try snapshot(workspace.file("dist")).filter { $0.key.hasSuffix("index.json") } == before.filter { $0.key.hasSuffix("index.json") },
            "the output's index changed although the run was killed before replacing it")
        // The killed process's last requests may still be in the server (read, waiting out the
        // latency, or queued): they are counted only once every connection of it was handled.
        #expect(await onAThreadOfItsOwn { server.waitUntilIdle(timeout: 30) }, "the server still holds connections of the killed run")
        let requestsBeforeCrash = server.stats.requestsByExercise

        let finished = try await run(productPath("gifpack"), arguments, environment: environment)
        #expect(finished.status == 0, "\(finished.error)")
        try expectIndexVerifies(workspace.file("dist"))
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.first?.version == 2)
        // GIFs the killed run had stored and recorded were not downloaded again: at most one more
        // request each (a conditional one), and changed GIFs are downloaded at most twice in all.
        for (id, count) in server.stats.requestsByExercise {
            #expect(count <= (requestsBeforeCrash[id] ?? 0) + 1)
        }
        let gifBodies = server.stats.statusCounts[200, default: 0] - server.stats.listRequests
        #expect(
            gifBodies <= 12 + 3 + GIFProcessor.maxBacklog,
            "changed GIFs are downloaded once, plus at most those in flight or awaiting storage at the kill")
    }

    @Test func aDamagedCachedFrameIsCompressedAgain() async throws {
        let server = try server(count: 5)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0")
        _ = try await runBuild(manifest: manifest, workspace: workspace)
        let frames = try allFiles(under: workspace.file("cache/frames")).sorted()
        #expect(frames.count == 5)
        for frame in frames {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: frame))
            try handle.truncate(atOffset: 20)
            try handle.close()
        }
        server.replaceGIF(
            id: server.catalog.exercises[0].id,
            with: try GIFSynthesizer.animatedGIF(width: 16, height: 16, frames: 2, colors: 2, seed: 3))
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.packs.first?.version == 2)
        try expectIndexVerifies(workspace.file("dist"))
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        #expect(try await run("/usr/bin/zstd", ["-q", "-t", workspace.file("dist/\(pack.file)")]).status == 0)
    }

    @Test func aConcurrentRunExitsWithTheLockStatus() async throws {
        let server = try server(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: workspace.file("dist"), withIntermediateDirectories: true)
        let holder = try BuildLock(directory: workspace.file("dist"))
        // Locks enough to make /proc/locks longer than one read (a busy host): the holder is still found.
        let crowd = try (0..<120).map { number -> BuildLock in
            try FileManager.default.createDirectory(atPath: workspace.file("crowd/\(number)"), withIntermediateDirectories: true)
            return try BuildLock(directory: workspace.file("crowd/\(number)"))
        }
        let manifestPath = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        let result = try await run(
            productPath("gifpack"),
            [
                "build", "--manifest", manifestPath, "--out", workspace.file("dist"),
                "--cache", workspace.file("cache")
            ], environment: environment)
        withExtendedLifetime((holder, crowd)) {}
        #expect(result.status == ExitStatus.locked.rawValue)
        #expect(result.error.contains("pid \(getpid())"), "\(result.error)")
        #expect(server.stats.totalRequests == 0)
    }

    @Test func oneDirectoryForOutputAndCacheIsLockedOnce() async throws {
        let server = try server(count: 2)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace, out: "both", cache: "both")
        #expect(report.exitStatus == .success, "\(report.message)")
    }

    @Test func pruningKeepsExactlyKVersions() async throws {
        let server = try server(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0") + "\noutput:\n  keep_versions: 2\n"
        let id = server.catalog.exercises[0].id
        for round in 1...5 {
            server.replaceGIF(id: id, with: try GIFSynthesizer.animatedGIF(width: 20, height: 20, frames: 2, colors: 2, seed: UInt64(round)))
            let report = try await runBuild(manifest: manifest, workspace: workspace)
            #expect(report.packs.first?.version == round)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: workspace.file("dist/packs")).sorted()
        // The posters pack follows its pack (its poster of the changed GIF changes too).
        let unhashed = files.map { $0.replacingOccurrences(of: #"-[0-9a-f]{8}\.tar\.zst$"#, with: "", options: .regularExpression) }
        #expect(unhashed == ["all-posters-v4", "all-posters-v5", "all-v4", "all-v5"], "\(files)")
        try expectIndexVerifies(workspace.file("dist"))
        // Blobs of replaced GIFs are gone; the current ones stay.
        #expect(try allFiles(under: workspace.file("cache/blobs")).count == 4)
    }

    @Test func aDryRunSendsNoImageRequest() async throws {
        let server = try server(count: 9)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let text = rapidAPIManifest(server: server, fetch: "  refresh_after: 0")
        let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"))
        let before = try await DryRun(manifest: manifest, options: options).plan()
        #expect(before.fullRequests == 9 && before.conditionalRequests == 0)
        #expect(server.stats.imageRequests == 0)
        _ = try await runBuild(manifest: text, workspace: workspace, epoch: 0)
        server.resetStats()
        let after = try await DryRun(manifest: manifest, options: options).plan()
        #expect(after.fullRequests == 0 && after.conditionalRequests == 9)
        #expect(server.stats.imageRequests == 0)
    }
}

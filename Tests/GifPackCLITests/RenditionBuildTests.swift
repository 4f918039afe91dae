import ExerciseDBFixture
import Foundation
@testable import GifPack
import GifPackClient
import GifPackGIF
import GifPackZstd
import Testing
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures
@testable import GifPackTestSupport
import GifPackIndexReader
@testable import GifPackTestServers

/// Several resolutions in one build against the fixture server over loopback: one
/// catalog, each GIF once per resolution, the first resolution for every exercise before the next,
/// the plan's ceiling never packed under a higher resolution, and an index whose `packs[]` a
/// client of format 1.2 installs as before.
@Suite("Renditions: several resolutions in one build", .timeLimit(.minutes(5)))
struct RenditionBuildTests {
    /// A fixture whose GIFs are as large as the resolution asked for (the real API's sizes:
    /// 180 px at 180, 360 px at 360), with few frames.
    static func fixture(count: Int, _ configure: (inout FixtureConfiguration) -> Void = { _ in }) throws -> FixtureServer {
        try startFixture(count: count) {
            $0.gifDimension = 180
            $0.framesRange = 2...3
            configure(&$0)
        }
    }

    static func manifest(_ server: FixtureServer, resolutions: String = "resolutions: [180, 360]", packs: String = "") -> String {
        rapidAPIManifest(server: server, packs: packs).replacingOccurrences(of: "resolution: 180", with: resolutions)
    }

    /// Requests: the list pages once, then exercises × resolutions; every GIF is the size of its
    /// rendition; a rebuild sends the list pages only.
    @Test func twoResolutionsInOneRunFetchTheCatalogOnceAndEachGIFOncePerResolution() async throws {
        let server = try Self.fixture(count: 6)
        defer { server.stop() }
        // One resolution alone, for the list requests a catalog costs.
        let single = try TemporaryDirectory()
        #expect(try await runBuild(manifest: rapidAPIManifest(server: server), workspace: single).exitStatus == .success)
        let listRequests = server.stats.listRequests
        server.resetStats()

        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(server.stats.listRequests == listRequests, "one catalog for both resolutions")
        #expect(server.stats.imageRequests == 6 * 2)
        #expect(server.stats.totalRequests == listRequests + 12)
        #expect(report.renditions?.map(\.resolution) == [180, 360])
        #expect(report.renditions?.map(\.gifs.downloaded) == [6, 6])
        #expect(report.renditions?.map(\.packs) == [1, 1])
        #expect(report.gifs.downloaded == 6, "gifs holds the first resolution's counts")

        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.formatVersion == FormatVersion(major: 1, minor: 3))
        #expect(index.source.resolution == 180 && index.source.resolutions == [180, 360])
        #expect(index.packs.map(\.name) == ["all"] && index.packs[0].resolution == 180)
        #expect(index.packs[0].posters != nil)
        let rendition = try #require(index.renditionPacks?.first)
        #expect(index.renditionPacks?.map(\.name) == ["all.360"] && rendition.resolution == 360 && rendition.posters == nil)
        #expect(rendition.file.hasPrefix("packs/all.360-v1-"))
        let side = server.configuration.gifDimension
        for (pack, expected) in [(index.packs[0], side), (rendition, side * 2)] {
            #expect(pack.exercises.allSatisfy { $0.gif != nil })
            for gif in pack.gifs {
                let bytes = try packedGIF(gif, in: workspace.file("dist/\(pack.file)"))
                #expect(try GIFInspector.inspect(bytes: bytes).width == expected, "\(pack.name) \(gif.sha256)")
            }
        }
        let exercise = server.catalog.exercises[0].id
        let at360 = try #require(rendition.gifEntry(forExercise: exercise))
        #expect(try packedGIF(at360, in: workspace.file("dist/\(rendition.file)")) == server.catalog.gifBytes(id: exercise, resolution: 360))

        server.resetStats()
        let again = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(again.exitStatus == .success, "\(again.message)")
        #expect(server.stats.imageRequests == 0 && server.stats.totalRequests == server.stats.listRequests, "list pages only")
        #expect(try fileBytes(workspace.file("dist/index.json")) == index.encodedBytes())
    }

    /// A quota that runs out in the second resolution: the first is whole (it went first) and is
    /// written, as its packs alone (no half 360 px pack); what the second fetched is kept, the
    /// next run asks only for the rest and adds the 360 px pack, the 180 px pack as it was. The
    /// summary shows each resolution's counts.
    @Test func aQuotaStopInTheSecondResolutionWritesTheFirstAndResumesWithoutFetchingAgain() async throws {
        let server = try Self.fixture(count: 6) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        server.setQuota(6 + 3)
        let workspace = try TemporaryDirectory()
        let stopped = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(stopped.exitStatus == .quotaExhausted, "\(stopped.message)")
        #expect(stopped.renditions?.map(\.gifs.downloaded) == [6, 3], "every 180 before any 360")
        #expect(
            stopped.message.contains("wrote 180 px, fetched whole (1 new pack version(s) of 1); 360 px not written"),
            "\(stopped.message)")
        #expect(!stopped.message.contains("no pack or index was written"))
        let first = try readIndex(workspace.file("dist/index.json"))
        #expect(first.renditionPacks == nil && first.packs.map(\.name) == ["all"] && first.packs[0].resolution == 180)
        #expect(first.packs[0].exercises.count == 6 && first.packs[0].exercises.allSatisfy { $0.gif != nil })
        #expect(first.source.resolutions == [180, 360])
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.file("dist/packs")).allSatisfy { !$0.contains(".360") })

        server.setQuota(nil)
        server.resetStats()
        let resumed = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(resumed.exitStatus == .success, "\(resumed.message)")
        #expect(server.stats.imageRequests == 3, "only the 360 px GIFs the first run did not get")
        #expect(resumed.renditions?.map(\.gifs.downloaded) == [0, 3])
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs[0].file == first.packs[0].file && index.packs[0].sha256 == first.packs[0].sha256)
        #expect(index.renditionPacks?.first?.exercises.allSatisfy { $0.gif != nil } == true)
    }

    /// A stop in the second resolution when the output's index already has a 360 px pack: the
    /// first resolution alone would take that rendition away from apps, so nothing is written and
    /// the index stays as it is, byte for byte.
    @Test func aQuotaStopNeverTakesAwayARenditionTheOutputsIndexHas() async throws {
        let server = try Self.fixture(count: 6) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: Self.manifest(server), workspace: workspace).exitStatus == .success)
        let indexBefore = try fileBytes(workspace.file("dist/index.json"))
        #expect(try readIndex(workspace.file("dist/index.json")).renditionPacks?.map(\.name) == ["all.360"])
        server.setQuota(6 + 3)
        // A new cache: every GIF is asked for again, and the quota runs out in the 360 px ones.
        let stopped = try await runBuild(manifest: Self.manifest(server), workspace: workspace, cache: "cache-2")
        #expect(stopped.exitStatus == .quotaExhausted, "\(stopped.message)")
        #expect(stopped.renditions?.map(\.gifs.downloaded) == [6, 3])
        #expect(stopped.message.contains("no pack or index was written"), "\(stopped.message)")
        #expect(try fileBytes(workspace.file("dist/index.json")) == indexBefore)
    }

    /// What an operator sees of that stop from `gifpack build`: exit 5, a summary line per
    /// resolution and the last line saying what was written; with JSON logs, a summary record
    /// saying so (`published`, the field's historical name).
    @Test func theCommandLineShowsEachResolutionsCountsAndWhatTheStopWrote() async throws {
        let server = try Self.fixture(count: 6) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(Self.manifest(server), to: "manifest.yaml")
        let environment = ["GIFPACK_TEST_KEY": testAPIKey, "SOURCE_DATE_EPOCH": "1700000000"]
        func build(_ name: String, _ extra: [String]) async throws -> ProcessResult {
            server.setQuota(6 + 3)
            try FileManager.default.createDirectory(atPath: workspace.file(name), withIntermediateDirectories: true)
            return try await gifpackCLI(
                [
                    "build", "--manifest", manifest, "--out", workspace.file("\(name)/dist"),
                    "--cache", workspace.file("\(name)/cache"), "--progress", "off"
                ] + extra,
                environment: environment)
        }
        let text = try await build("text", [])
        #expect(text.status == 5, "\(text.error)")
        #expect(text.error.contains("\n  180 px: 6 wanted, 6 valid: 6 downloaded ("), "\(text.error)")
        #expect(text.error.contains("\n  360 px: 6 wanted, 3 valid: 3 downloaded ("), "\(text.error)")
        #expect(text.error.contains("; 3 missing; 0 pack(s)\n"), "\(text.error)")
        #expect(text.error.contains("wrote 180 px, fetched whole (1 new pack version(s) of 1); 360 px not written"))

        let json = try await build("json", ["--log-format", "json"])
        #expect(json.status == 5, "\(json.error)")
        let records = json.error.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let summary = try #require(records.first { $0["event"] as? String == "summary" }, "\(json.error)")
        #expect((summary["published"] as? NSNumber)?.boolValue == true)
        #expect(summary["exit_status"] as? Int == 5)
    }

    /// A BASIC key asking for 360 gets 180 px GIFs, still 200: the build writes 180 only, says
    /// so in one line naming the plan's limit, and exits 3 (0 with --allow-missing-renditions).
    @Test func aBasicKeyAskingFor360WritesTheFirstResolutionOnlyAndNamesThePlanLimit() async throws {
        let server = try Self.fixture(count: 5) { $0.planMaxResolution = FixturePlan.basic.maxResolution }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .partial, "\(report.message)")
        #expect(!report.message.contains("\n"))
        #expect(
            report.message.contains("360 px: the API served 5 of 5 GIFs at 180 px, not the 360 px asked for, the limit of its plan (BASIC serves 180 px only"),
            "\(report.message)")
        #expect(report.message.contains("no 360 px pack was made"))
        #expect(report.renditions?.last?.planCeiling == 5 && report.renditions?.last?.packs == 0)
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.renditionPacks == nil && index.packs.map(\.name) == ["all"])
        #expect(index.formatVersion == .withRenditions && index.source.resolutions == [180, 360])
        #expect(index.packs[0].exercises.allSatisfy { $0.gif != nil })

        let manifest = try ManifestLoader().parse(Self.manifest(server), environment: ["GIFPACK_TEST_KEY": testAPIKey])
        var options = BuildOptions(outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"))
        options.allowMissingRenditions = true
        let allowed = await BuildPipeline(manifest: manifest, options: options).run()
        #expect(allowed.exitStatus == .success, "\(allowed.message)")
        #expect(allowed.message.contains("BASIC serves 180 px only"))
    }

    /// An API serving 720 px GIFs for a 360 px request is said to have done
    /// so (the size asked for and the size got), not blamed on the plan's limit or a smaller size.
    @Test func aLargerSizeThanAskedIsNamedAsServedNotBlamedOnThePlan() async throws {
        let server = try Self.fixture(count: 3) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let large = server.catalog.exercises[0].id
        server.replaceGIF(id: large, with: try GIFSynthesizer.animatedGIF(width: 720, height: 720, frames: 2, colors: 4, seed: 720))
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .partial, "\(report.message)")
        #expect(
            report.message.contains(
                "360 px: the API served 1 of 3 GIFs at 720 px, not the 360 px asked for; "
                    + "those exercises keep their other renditions"), "\(report.message)")
        #expect(!report.message.contains("limit of its plan") && !report.message.contains("smaller"), "\(report.message)")
        #expect(report.renditions?.last?.gifs.otherSizesServed == [720])
        #expect(report.rejections.contains { $0.exerciseID == large && $0.detail == "served 720×720, not 360 px" }, "\(report.rejections)")
    }

    /// One exercise served below 360 (its GIF is the same bytes at every resolution): it has no
    /// 360 px rendition and keeps its 180 px one; the others have both.
    @Test func anExerciseWhoseHigherRenditionIsMissingKeepsItsLowerOne() async throws {
        let server = try Self.fixture(count: 4) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let low = server.catalog.exercises[1].id
        server.replaceGIF(id: low, with: try #require(server.catalog.gifBytes(id: low, resolution: 180)))
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .partial, "\(report.message)")
        #expect(report.message.contains("360 px: the API served 1 of 4 GIFs at 180 px, not the 360 px asked for"), "\(report.message)")
        #expect(report.message.contains("those exercises keep their other renditions"))
        let index = try readIndex(workspace.file("dist/index.json"))
        let rendition = try #require(index.renditionPacks?.first)
        #expect(rendition.exercises.first { $0.id == low }?.gif == nil)
        #expect(rendition.exercises.filter { $0.gif != nil }.count == 3)
        #expect(index.packs[0].exercises.allSatisfy { $0.gif != nil })
    }

    /// One exercise's 360 px request fails (a 404; its 180 px GIF is fresh from the last run, so
    /// not asked for again): it has no 360 px rendition, keeps its 180 px one, and the build says
    /// so and exits 3.
    @Test func anExerciseWhoseHigherRenditionFailsToFetchKeepsItsLowerOne() async throws {
        let server = try Self.fixture(count: 4) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace).exitStatus == .success)
        let failing = server.catalog.exercises[2].id
        server.setDefaultFault(.status(404), forExercise: failing)
        server.resetStats()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .partial, "\(report.message)")
        #expect(server.stats.imageRequests == 4, "the 360 px GIFs only")
        #expect(
            report.message.contains("1 exercise(s) have no 360 px rendition; those exercises keep their other renditions"),
            "\(report.message)")
        #expect(report.renditions?.last?.gifs.rejectedByReason["http-404"] == 1)
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs[0].exercises.allSatisfy { $0.gif != nil })
        let rendition = try #require(index.renditionPacks?.first)
        #expect(rendition.exercises.first { $0.id == failing }?.gif == nil)
        #expect(rendition.exercises.filter { $0.gif != nil }.count == 3)
    }

    /// A manifest of today (`resolution: 180`) and the state database its build wrote (the
    /// schema has keyed GIFs by exercise and resolution since its first version, so nothing
    /// migrates): adding 360 fetches the 360 px GIFs only, and the first resolution's pack keeps
    /// its name, version and bytes.
    @Test func theOldManifestKeyAndItsStateStillWorkWhenAResolutionIsAdded() async throws {
        let server = try Self.fixture(count: 5)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace).exitStatus == .success)
        let before = try readIndex(workspace.file("dist/index.json"))
        #expect(before.formatVersion == .withoutRenditions && before.renditionPacks == nil && before.packs[0].resolution == nil)

        server.resetStats()
        let report = try await runBuild(manifest: Self.manifest(server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(server.stats.imageRequests == 5, "the 180 px GIFs come from the state")
        let after = try readIndex(workspace.file("dist/index.json"))
        #expect(after.packs[0].file == before.packs[0].file && after.packs[0].sha256 == before.packs[0].sha256)
        #expect(after.renditionPacks?.map(\.name) == ["all.360"])
    }

    /// A pack may narrow the source's resolutions; a value the source does not list names the key.
    @Test func aPackMayNarrowTheResolutions() async throws {
        let server = try Self.fixture(count: 4)
        defer { server.stop() }
        let packs = "packs:\n  - name: all\n  - name: sharp\n    resolutions: [360]"
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.manifest(server, packs: packs), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.map(\.name) == ["all"])
        #expect(index.renditionPacks?.map(\.name) == ["all.360", "sharp.360"])
        #expect(server.stats.imageRequests == 4 * 2, "a GIF wanted by two packs at one resolution is fetched once")
        let bad = Self.manifest(server, packs: "packs:\n  - name: sharp\n    resolutions: [720]")
        #expect(throws: ManifestError.invalidValue(path: "packs[0].resolutions[0]", reason: "720 px is not one of source.resolutions (180 px, 360 px)")) {
            try ManifestLoader().parse(bad, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        }
    }

    /// `--dry-run` tells the requests each resolution needs, before any image request.
    @Test func theDryRunCountsTheRequestsOfEachResolution() async throws {
        let server = try Self.fixture(count: 5)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace).exitStatus == .success)
        server.resetStats()
        let manifest = try ManifestLoader().parse(Self.manifest(server), environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let plan = try await DryRun(
            manifest: manifest,
            options: BuildOptions(
                outputDirectory: workspace.file("dist"),
                cacheDirectory: workspace.file("cache"))
        ).plan()
        #expect(server.stats.imageRequests == 0)
        #expect(plan.renditions?.map(\.resolution) == [180, 360])
        #expect(plan.renditions?.map(\.fullRequests) == [0, 5])
        #expect(plan.renditions?.map(\.skippedFresh) == [5, 0])
        #expect(plan.imageRequests == 5)
    }

    /// A client that asks for no size reads `packs[]` as a client of format 1.2 does: from an index
    /// with renditions it installs the first resolution exactly as before and never asks for a
    /// rendition pack. (This tree's client knows renditions; the test below runs an earlier
    /// release's binary, whose decoder ignores the keys it does not know.)
    @Test func aClientOfTheEarlierFormatInstallsTheFirstResolutionFromTheNewIndex() async throws {
        let server = try Self.fixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: Self.manifest(server), workspace: workspace).exitStatus == .success)
        let files = try ClientStaticFileServer(root: workspace.file("dist"))
        defer { files.stop() }
        let cache = workspace.file("app/gifs")
        let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(files.baseURL + "/index.json"))
        #expect(report.exercises == 6)
        for exercise in server.catalog.exercises {
            #expect(try fileBytes("\(cache)/\(exercise.id).gif") == server.catalog.gifBytes(id: exercise.id, resolution: 180))
        }
        #expect(!files.requests.contains { $0.path.contains("all.360") }, "\(files.requests.map(\.path))")
    }

    /// The same with a `gifpack` binary of the previous release (`GIFPACK_PREVIOUS_GIFPACK`: a
    /// path, e.g. built from the last release tag or main before renditions): its own decoder and
    /// installer, not this tree's. Skipped, visibly, when the variable is not set.
    @Test(.enabled(if: Self.previousGifpack != nil, "set GIFPACK_PREVIOUS_GIFPACK to an earlier release's gifpack binary"))
    func thePreviousReleasesGifpackInstallsTheFirstResolutionFromTheNewIndex() async throws {
        let binary = try #require(Self.previousGifpack)
        let server = try Self.fixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: Self.manifest(server), workspace: workspace).exitStatus == .success)
        let files = try ClientStaticFileServer(root: workspace.file("dist"))
        defer { files.stop() }
        let cache = workspace.file("old-app/gifs")
        let result = try await runCapturing(binary, ["install", "--index", files.baseURL + "/index.json", "--cache", cache])
        #expect(result.status == 0, "\(String(decoding: result.error, as: UTF8.self))")
        for exercise in server.catalog.exercises {
            #expect(try fileBytes("\(cache)/\(exercise.id).gif") == server.catalog.gifBytes(id: exercise.id, resolution: 180))
        }
        #expect(!files.requests.contains { $0.path.contains("all.360") }, "\(files.requests.map(\.path))")
    }

    static var previousGifpack: String? {
        guard let path = ProcessInfo.processInfo.environment["GIFPACK_PREVIOUS_GIFPACK"], !path.isEmpty,
            FileManager.default.isExecutableFile(atPath: path)
        else { return nil }
        return path
    }
}

/// The bytes of one GIF of a pack file: its zstd frame decompressed, the tar header skipped.
private func packedGIF(_ gif: GIFEntry, in packPath: String) throws -> [UInt8] {
    let bytes = try fileBytes(packPath)
    let start = Int(gif.location.frameOffset)
    let frame = Array(bytes[start..<start + Int(gif.location.frameLength)])
    let entry = try ZstdDecoder.decompress(frame, maxOutput: 1 << 24)
    return Array(entry[512..<512 + Int(gif.location.size)])
}

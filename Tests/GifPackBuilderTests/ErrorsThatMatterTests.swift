import ExerciseDBFixture
import Foundation
import GRDB
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// Failures that change what a build does are reported and stop the build deliberately; none is
/// swallowed into a default that spends quota, drops GIFs, or overwrites the pack files written before.
@Suite("Errors that matter are not swallowed", .timeLimit(.minutes(5)))
struct ErrorsThatMatterTests {
    /// Replaces the state's `gif` table by one the queries cannot read (as a damaged or foreign
    /// database would be); the other tables keep working.
    static func breakGIFTable(_ path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)  // the finished build's connection may still be closing
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "ALTER TABLE gif RENAME TO gif_damaged; CREATE TABLE gif (unrelated TEXT)")
        }
    }

    @Test func anUnreadableStateStopsTheBuildBeforeAnyGIFIsRequested() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let indexBefore = try fileBytes(workspace.file("dist/index.json"))
        try Self.breakGIFTable(workspace.file("cache/state.sqlite"))
        server.resetStats()

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .failed)
        #expect(second.message.contains("cannot read the build state"), "\(second.message)")
        #expect(second.stateErrors.count == 1)
        #expect(second.stateErrors.first?.contains("planning fetches") == true, "\(second.stateErrors)")
        #expect(server.stats.imageRequests == 0, "no GIF is requested in full because the state could not be read")
        #expect(try fileBytes(workspace.file("dist/index.json")) == indexBefore)
        let written = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(written.stateErrors == second.stateErrors, "report.json carries the state error too")
    }

    @Test(.computes) func lastKnownGoodThatCannotBeLookedUpStopsTheBuild() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.file("cache"))
        try layout.prepare()
        let state = try BuildState(path: layout.statePath, source: "test")
        try Self.breakGIFTable(layout.statePath)
        let manifest = try offlineManifest()
        let pipeline = BuildPipeline(
            manifest: manifest,
            options: BuildOptions(
                outputDirectory: workspace.file("dist"),
                cacheDirectory: layout.root, sourceDateEpoch: 0))
        let exercise = try Exercise(
            id: "0001", name: "a", bodyParts: [], equipment: [], targets: [],
            imageURL: "http://127.0.0.1:9/0001.gif", raw: .null)
        let results = FetchResults([
            "0001": .rejected(FetchRejection(exerciseID: "0001", url: exercise.imageURL, reason: .httpStatus(500), detail: "d", status: 500))
        ])
        #expect(throws: StateUnreadable.self) {
            try pipeline.lastKnownGood(
                for: results, wanted: [exercise], state: state, store: BlobStore(layout: layout),
                resolution: pipeline.manifest.source.resolution)
        }
        do {
            _ = try pipeline.lastKnownGood(
                for: results, wanted: [exercise], state: state, store: BlobStore(layout: layout),
                resolution: pipeline.manifest.source.resolution)
        } catch {
            #expect(error.step == .lookingUpLastKnownGood)
            #expect(error.description.contains("no pack or index was written"))
        }
    }

    @Test func aDamagedOutputIndexStopsTheBuildInsteadOfRestartingAtVersionOne() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        // The pack and its posters pack (format 1.2).
        let packFiles = try FileSystem.list(workspace.file("dist/packs")).sorted()
        try #require(packFiles.count == 2 && packFiles[0].hasPrefix("all-posters-v1-") && packFiles[1].hasPrefix("all-v1-"), "\(packFiles)")
        let packPath = workspace.file("dist/packs/\(packFiles[1])")
        let packBefore = try fileBytes(packPath)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: workspace.file("dist/index.json")))
        let id = server.catalog.exercises[0].id
        server.replaceGIF(id: id, with: try GIFSynthesizer.animatedGIF(width: 20, height: 20, frames: 2, colors: 4, seed: 99))

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .failed)
        #expect(second.message.contains("index.json exists but cannot be read"), "\(second.message)")
        #expect(try fileBytes(packPath) == packBefore, "the version 1 written before is never overwritten")
        #expect(try FileSystem.list(workspace.file("dist/packs")).sorted() == packFiles)
    }

    @Test(.computes) func aMissingOutputIndexIsAFirstBuildAndAnUnreadableOneIsAnError() throws {
        let workspace = try TemporaryDirectory()
        #expect(try BuilderIndexReader.read(workspace.file("index.json")) == nil)
        try FileManager.default.createDirectory(atPath: workspace.file("index.json"), withIntermediateDirectories: false)
        #expect(throws: (any Error).self) { try BuilderIndexReader.read(workspace.file("index.json")) }
        try FileManager.default.removeItem(atPath: workspace.file("index.json"))
        try FileManager.default.createSymbolicLink(atPath: workspace.file("index.json"), withDestinationPath: workspace.file("none"))
        #expect(throws: (any Error).self, "a dangling link is not a missing index") { try BuilderIndexReader.read(workspace.file("index.json")) }
    }

    @Test func aReportFileThatCannotBeWrittenIsReported() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        // A directory where report.json belongs, in an output directory of gifpack's: the atomic rename over it fails.
        try FileManager.default.createDirectory(atPath: workspace.file("dist/report.json/blocker"), withIntermediateDirectories: true)
        _ = try workspace.write("", to: "dist/\(DirectoryClaim.Role.output.marker)")
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.stateErrors.contains { $0.contains("report.json was not written") }, "\(report.stateErrors)")
    }

    @Test(.computes) func aSinkThatWasNotHashingHasNoDigestNotAnEmptyOne() throws {
        let workspace = try TemporaryDirectory()
        let sink = try FileDescriptorSink(creating: workspace.file("plain"))
        try sink.write([1, 2, 3])
        #expect(throws: PackWriteError.notHashed(path: workspace.file("plain"))) { try sink.sha256Hex() }
        let hashing = try FileDescriptorSink(creating: workspace.file("hashed"), hashing: true)
        try hashing.write([1, 2, 3])
        #expect(try hashing.sha256Hex() == sha256Hex([1, 2, 3]))
    }
}

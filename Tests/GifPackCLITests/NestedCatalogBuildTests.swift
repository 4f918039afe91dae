import Foundation
import GifPack
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures
import GifPackIndexReader

@Suite("Builder: deeply nested catalog records", .timeLimit(.minutes(5)))
struct NestedCatalogBuildTests {
    @Test func aCatalogNested500LevelsFailsFastWithTheReason() async throws {
        let server = try startFixture(count: 16) { $0.recordNesting = 500 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("nested deeper than 60 levels at byte"), "\(report.message)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")), "an index was written")
    }

    @Test func aCatalogAtTheNestingLimitGivesAPackEveryReaderAccepts() async throws {
        // A RapidAPI page is an array of records: 1 + 1 (the record) + 58 = 60 levels, the builder's limit.
        let server = try startFixture(count: 6) { $0.recordNesting = 58 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let index = PackIndexSource(workspace.file("dist/index.json"))
        let installed = try await PackInstaller(cacheDirectory: workspace.file("cache-gifs")).install(from: index)
        #expect(installed.exercises == 6)
        #expect(PackVerifier.verifyDirectory(workspace.file("dist")).isOK)
    }
}

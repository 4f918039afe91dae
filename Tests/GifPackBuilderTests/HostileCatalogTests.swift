import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// A hostile or broken list route: the key echoed back, a catalog without end, a page served again.
@Suite("Hostile catalogs", .timeLimit(.minutes(5)))
struct HostileCatalogTests {
    private func environment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["SOURCE_DATE_EPOCH"] = "1700000000"
        return environment
    }

    /// Every byte of every file under `directory`, packs decompressed, as text.
    private func everything(under directory: String) async throws -> [(String, String)] {
        var files: [(String, String)] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            let path = "\(directory)/\(relative)"
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            files.append((relative, String(decoding: bytes, as: UTF8.self)))
            if path.hasSuffix(".tar.zst") {
                let unpacked = try await run("/usr/bin/zstd", ["-dc", path])
                #expect(unpacked.status == 0, "\(unpacked.error)")
                files.append((relative + " (decompressed)", unpacked.output))
            }
        }
        return files
    }

    private func runCLI(
        _ server: FixtureServer, _ workspace: TemporaryDirectory, logFormat: String,
        fetch: String = ""
    ) async throws -> ProcessResult {
        let manifest = try workspace.write(rapidAPIManifest(server: server, fetch: fetch), to: "manifest-\(logFormat).yaml")
        return try await run(
            productPath("gifpack"),
            [
                "build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"),
                "--log-format", logFormat, "--verbose", "--metrics-file", workspace.file("metrics-\(logFormat).prom"),
                "--summary-file", workspace.file("summary-\(logFormat).md")
            ], environment: environment())
    }

    @Test func aKeyEchoedInACatalogErrorBodyIsRedactedEverywhere() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .echoKeyInErrorBody(status: 400) }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        for format in ["text", "json"] {
            let result = try await runCLI(server, workspace, logFormat: format)
            #expect(result.status == 1, "\(result.error)")
            let said = result.output + result.error
            #expect(said.contains("bad key \(SecretRedactor.replacement)"), "the echo is shown, redacted: \(said)")
            #expect(!said.contains(testAPIKey), "\(format) logs: \(said)")
        }
        let report = try String(contentsOfFile: workspace.file("dist/report.json"), encoding: .utf8)
        #expect(report.contains("bad key \(SecretRedactor.replacement)"))
        for (name, text) in try await everything(under: workspace.path) {
            #expect(!text.contains(testAPIKey), "\(name) holds the key")
        }
    }

    @Test func aRecordEchoingTheKeyIsPackedRedacted() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .echoKeyInRecord }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let result = try await runCLI(server, workspace, logFormat: "json")
        #expect(result.status == 0, "\(result.error)")
        #expect(!(result.output + result.error).contains(testAPIKey))
        let files = try await everything(under: workspace.file("dist"))
        // Packs, not their posters packs (format 1.2), hold the exercise records.
        let catalogs = files.filter { $0.0.hasSuffix("(decompressed)") && !$0.0.contains("-posters-") }
        #expect(!catalogs.isEmpty)
        for (_, text) in catalogs {
            #expect(text.contains(#""note":"echo: <redacted>""#), "the field is kept, its key redacted")
        }
        for (name, text) in files + (try await everything(under: workspace.path)) {
            #expect(!text.contains(testAPIKey), "\(name) holds the key")
        }
        // Deterministic: a second build from scratch gives the same bytes.
        let again = try TemporaryDirectory()
        let second = try await runCLI(server, again, logFormat: "json")
        #expect(second.status == 0)
        let first = try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: again.file("dist/index.json"))) == first)
    }

    @Test func anEndlessCatalogStopsAtMaxCatalogBytesOverAllPages() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .endless(paddingBytes: 4000) }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        // Each page of 10 records is about 45 KB, well under the bound; the catalog is not.
        let report = try await runBuild(
            manifest: rapidAPIManifest(server: server, fetch: "  max_catalog_bytes: 400KB"),
            workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("max_catalog_bytes"), "\(report.message)")
        #expect(server.stats.listRequests <= 14, "stopped within a few pages of the bound: \(server.stats.listRequests)")
        #expect(server.stats.imageRequests == 0)
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    @Test func anEndlessCatalogStopsAtMaxCatalogRecords() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .endless(paddingBytes: 0) }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(
            manifest: rapidAPIManifest(server: server, fetch: "  max_catalog_records: 55"),
            workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("max_catalog_records"), "\(report.message)")
        #expect(server.stats.listRequests <= 9, "\(server.stats.listRequests) list requests")
        #expect(server.stats.imageRequests == 0)
    }

    /// On a rebuild the pages past the last catalog's size (12) are asked for one
    /// at a time, which left two slots of the window to the early fetch: it asked for the made-up
    /// exercises' GIFs, one per list request (17 of them). On a rebuild only revalidations of GIFs
    /// the cache holds go early, so a list of made-up exercises sends no GIF request.
    @Test func anEndlessCatalogOnARebuildSendsNoGIFRequest() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  max_catalog_records: 170")
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")

        server.setListFault(.endless(paddingBytes: 0))
        server.resetStats()
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("max_catalog_records"), "\(report.message)")
        #expect(server.stats.listRequests >= 17, "\(server.stats.listRequests) list requests")
        #expect(server.stats.imageRequests == 0, "GIF requests for made-up exercises: \(server.stats.requestsByExercise.keys.sorted())")
    }

    @Test func aRepeatedPageIsCaughtAsSoonAsItRepeats() async throws {
        let server = try startFixture(count: 40) { $0.listFault = .repeatFirstPage }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("same page"), "\(report.message)")
        #expect(server.stats.listRequests <= 4, "the first page and the few in flight: \(server.stats.listRequests)")
        #expect(server.stats.imageRequests == 0)
    }
}

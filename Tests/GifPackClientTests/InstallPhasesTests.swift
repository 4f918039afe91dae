import Foundation
@testable import GifPackClient
import GifPackFormat
import GifPackIndexReader
import GifPackSystem
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The install's phase clock: ``InstallReport/phases`` says where an install's
/// wall time went, so a fixed cost can be found from what the install reports (make bench prints
/// it). Asserted: which phases an install went through (a phase it did not enter holds 0, one it
/// entered more), and that the phases add up within the total — never how long any of them took.
@Suite("Client: an install's phases", .ownThread, .timeLimit(.minutes(5)))
struct InstallPhasesTests {
    /// Every phase is at least 0 and together they stay within the total.
    static func expectConsistent(_ phases: InstallPhases, _ context: String) {
        #expect(phases.named.allSatisfy { $0.seconds >= 0 }, "\(context): \(phases)")
        let sum = phases.named.reduce(0) { $0 + $1.seconds }
        #expect(sum <= phases.total + 1e-9, "\(context): the phases add up to \(sum) s, beyond the total \(phases.total) s")
        #expect(abs(sum + phases.other - phases.total) < 1e-6, "\(context): \(phases)")
    }

    @Test func aFirstInstallGoesThroughEveryPhaseAndAnUnchangedOneOnlyThroughTheIndex() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try await makeDist(manifest: rapidAPIManifest(server: server), workspace: workspace)
        let files = try ClientStaticFileServer(root: workspace.file("dist"))
        defer { files.stop() }
        let installer = PackInstaller(cacheDirectory: workspace.file("app/gifs"))
        let source = PackIndexSource(files.baseURL + "/index.json")

        let first = try await installer.install(from: source, client: URLSessionTransport())
        #expect(first.gifsWritten > 0 && !first.isUnchanged)
        Self.expectConsistent(first.phases, "first install")
        // The index fetched, the pack planned, downloaded, its GIFs checked and written, made durable, switched in.
        let entered = first.phases.named.filter { $0.seconds > 0 }.map(\.name)
        #expect(entered == ["index", "planning", "transfer", "decode", "fileWrites", "sync", "switch"], "\(first.phases)")

        // Nothing to do: the index answered (a 304), no phase beyond it entered.
        let again = try await installer.install(from: source, client: URLSessionTransport())
        #expect(again.isUnchanged)
        Self.expectConsistent(again.phases, "unchanged install")
        #expect(again.phases.index > 0)
        #expect(
            [again.phases.transfer, again.phases.decode, again.phases.fileWrites, again.phases.sync, again.phases.switch]
                .allSatisfy { $0 == 0 }, "\(again.phases)")
    }

    @Test func aLocalInstallGoesThroughEveryPhaseAndTheCLIPrintsThem() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await PackInstaller(cacheDirectory: workspace.file("lib")).install(from: PackIndexSource(built.indexPath))
        Self.expectConsistent(report.phases, "local install")
        // A local index's pack is read in place (its "transfer" opens it and checks its size); the rest as over HTTP.
        #expect(report.fetches.map(\.method) == [.local])
        #expect(report.phases.named.allSatisfy { $0.seconds > 0 }, "\(report.phases)")

        let cli = try await ClientCommandTests.gifpack(["install", "--index", built.indexPath, "--cache", workspace.file("cli")])
        #expect(cli.status == 0, "\(cli.error)")
        let line = try #require(ClientCommandTests.text(cli.output).split(separator: "\n").first { $0.hasPrefix("phases s: ") })
        for name in ["index", "planning", "transfer", "decode", "fileWrites", "sync", "switch", "other"] {
            #expect(line.contains("\(name) "), "\(line)")
        }
        #expect(line.contains("; total "), "\(line)")
    }
}

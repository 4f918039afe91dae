import Foundation
@testable import GifPackClient
import GifPackSystem
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// No write that is thrown away: at the end of an install the one `syncfs` used to write the
/// downloaded pack too (deleted only after the switch: about as many bytes again as the GIFs). The
/// download is now truncated and removed before the sync, so its dirty pages are dropped unwritten.
///
/// Told by what is on disk at the install's commit point (the `.switch` checkpoint comes after the
/// sync): no download is left in `<cache>.d/downloads/` by then. How many bytes the kernel writes is
/// not asserted: under load, its own writeback (after 30 s) may write a download's pages before any
/// install could drop them, so that count measures the machine as much as the install (the
/// CHANGELOG gives it for a quiet machine).
@Suite("Client: what an install writes to the disk", .ownThread, .timeLimit(.minutes(5)))
struct InstallWriteTests {
    @Test func theDownloadedPackIsGoneBeforeTheSyncAndTheSwitch() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try await makeDist(manifest: rapidAPIManifest(server: server), workspace: workspace)
        let files = try ClientStaticFileServer(root: workspace.file("dist"))
        defer { files.stop() }
        let cache = workspace.file("app/gifs")
        let downloads = "\(cache).d/downloads"
        let seen = Locked<[InstallStage: [String]]>([:])
        var installer = PackInstaller(cacheDirectory: cache)
        installer.stageHook = { stage in
            guard stage == .verify || stage == .switch else { return }
            let names = DirectoryListing.names(downloads)
            seen.withLock { $0[stage] = names }
        }
        let report = try await installer.install(from: PackIndexSource(files.baseURL + "/index.json"), client: URLSessionTransport())
        #expect(report.generation == 1)
        let listings = seen.withLock { $0 }
        // The pack was downloaded (the check sees it) …
        #expect(listings[.verify]?.contains { $0.hasSuffix(".tar.zst") } == true, "\(listings)")
        // … and is gone once the staged generation was made durable, before the switch.
        #expect(listings[.switch] == [], "\(listings)")
        #expect(DirectoryListing.names(downloads).isEmpty)
    }
}

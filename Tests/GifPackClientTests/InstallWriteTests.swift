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

    /// `cancelled_write_bytes` of the calling thread (`/proc/thread-self/io`): bytes of dirty pages
    /// dropped by a truncation before the kernel wrote them.
    static func cancelledWriteBytes() throws -> Int64 {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("cancelled_write_bytes:") })
        return try #require(Int64(line.split(separator: " ").last ?? ""))
    }

    /// Each file an install writes (GIFs, while the pack downloads and while it is staged) has its
    /// pages handed to the disk as soon as it is closed, so the one sync at the end finds them
    /// written (on a 56 MB pack: 0.03-0.06 s of sync down to 0.001 s). Told by truncating the file
    /// right after: pages still dirty would be dropped and counted as cancelled writes, pages
    /// handed to the disk are not.
    ///
    /// A file written the plain way is the control, before and after: the count works on this file
    /// system (a tmpfs would fail it rather than pass quietly), and nothing else wrote the pages in
    /// between. Other tests' installs call `syncfs` on the same file system, which writes every
    /// dirty page there; a round one of them lands in says nothing either way, so it is run again
    /// (at most 20 rounds; one whose controls both held is needed, and every such round must pass).
    @Test func aFileAnInstallWritesIsHandedToTheDiskAsItIsClosed() throws {
        let workspace = try TemporaryDirectory()
        let bytes = [UInt8]((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let size = Int64(bytes.count)
        func cancelledByTruncating(_ path: String) throws -> Int64 {
            let before = try Self.cancelledWriteBytes()
            SystemCalls.close(try FileOps.openRegular(path, [.writeOnly, .truncate]))
            return try Self.cancelledWriteBytes() - before
        }
        func plainControl(_ name: String) throws -> Int64 {
            let path = workspace.file(name)
            let file = try NewFile(path: path)
            try file.append(bytes)
            try file.finish(sync: false)
            return try cancelledByTruncating(path)
        }
        var heldRounds: [Int64] = []
        var controls: [(Int64, Int64)] = []
        for round in 0..<20 where heldRounds.count < 3 {
            let before = try plainControl("plain-\(round)-a.gif")
            let installed = workspace.file("installed-\(round).gif")
            try FileOps.writeNew(installed, bytes)
            let cancelled = try cancelledByTruncating(installed)
            let after = try plainControl("plain-\(round)-b.gif")
            controls.append((before, after))
            if before >= size && after >= size { heldRounds.append(cancelled) }
        }
        #expect(!heldRounds.isEmpty, "no round's controls kept their pages dirty (cancelled bytes: \(controls))")
        for cancelled in heldRounds {
            #expect(cancelled < size / 4, "\(cancelled) of \(size) bytes were still dirty")
        }
    }
}

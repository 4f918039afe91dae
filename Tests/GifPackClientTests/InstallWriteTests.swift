import Foundation
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// Issue 45, item 2: no write that is thrown away. At the end of an install the one `syncfs` also
/// wrote the downloaded pack, deleted only after the switch (about as many bytes again as the GIFs).
/// The download is now deleted before the sync, its dirty pages dropped unwritten. Told by the
/// kernel's own count of what the `gifpack install` process had written to the disk
/// (`/proc/<pid>/io`: `write_bytes`, less the `cancelled_write_bytes` of pages dropped before
/// they were written), not by time.
@Suite("Client: what an install writes to the disk", .timeLimit(.minutes(5)))
struct InstallWriteTests {
    /// The counters of `/proc/self/io` the test reads, when this kernel keeps them.
    static var ioAccounting: Bool {
        (try? String(contentsOfFile: "/proc/self/io", encoding: .utf8))?.contains("cancelled_write_bytes") == true
    }

    /// One counter from the text of a `/proc/<pid>/io`.
    static func counter(_ name: String, in text: String) -> Int64? {
        text.split(separator: "\n").lazy.compactMap { line -> Int64? in
            guard line.hasPrefix(name + ": ") else { return nil }
            return Int64(line.dropFirst(name.count + 2))
        }.first
    }

    /// A pack of a few megabytes over HTTP: what reaches the disk is its GIFs once plus the
    /// generation's small files, not the pack as well.
    @Test(.enabled(if: ioAccounting)) func anInstallWritesTheGIFsOnceAndNotThePackItDownloaded() async throws {
        let server = try startFixture(count: 28) {
            $0.gifDimension = 160
            $0.framesRange = 4...8
            $0.colorsRange = 64...256
        }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try await buildDist(manifest: rapidAPIManifest(server: server), workspace: workspace)
        let index = try readIndex(workspace.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        let gifBytes = Dictionary(pack.gifs.map { ($0.sha256, $0.location.size) }, uniquingKeysWith: { first, _ in first }).values.reduce(0, +)
        #expect(pack.bytes > 2_000_000, "a pack large enough to tell apart from the generation's small files: \(pack.bytes) bytes")
        let files = try ClientStaticFileServer(root: workspace.file("dist"))
        defer { files.stop() }
        let cache = workspace.file("app/gifs")

        // The shell reaps `gifpack install`, then reads its own counters, which now hold the child's.
        let script = #""$0" install --index "$1" --cache "$2"; status=$?; cat /proc/$$/io; exit $status"#
        let result = try await run("/bin/sh", ["-c", script, productPath("gifpack"), files.baseURL + "/index.json", cache])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("ok: generation 1"), "\(result.output)")
        let written = try #require(Self.counter("write_bytes", in: result.output))
        let cancelled = try #require(Self.counter("cancelled_write_bytes", in: result.output))
        let net = written - cancelled
        // The GIFs reach the disk (the count works) …
        #expect(net >= gifBytes, "written \(written), cancelled \(cancelled): less than the GIFs' \(gifBytes) bytes")
        // … and the pack does not: before, `net` was the GIFs plus the whole pack.
        #expect(net < gifBytes + pack.bytes / 4,
                "written \(written), cancelled \(cancelled): \(net - gifBytes) bytes beyond the GIFs' \(gifBytes) (the pack: \(pack.bytes))")
        #expect(!FileManager.default.fileExists(atPath: "\(cache).d/downloads/\(pack.file)"))
    }
}

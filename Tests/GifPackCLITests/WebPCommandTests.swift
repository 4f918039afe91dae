import ExerciseDBFixture
import Foundation
import GifPackClient
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// Serves each exercise a smooth picture (a moving grey ramp, 64x64, 4 frames), which a WebP holds
/// in fewer bytes than the GIF: the fixture's own random-pixel GIFs are kept as GIFs.
func serveSmoothGIFs(_ server: FixtureServer) throws {
    let greys = (0..<256).map { (UInt8($0), UInt8($0), UInt8($0)) }
    for (number, exercise) in server.catalog.exercises.enumerated() {
        let frames = (0..<4).map { frame in
            TestFrame(width: 64, height: 64, indices: (0..<(64 * 64)).map { UInt8(truncatingIfNeeded: ($0 % 64) * 3 + frame * 8 + number) })
        }
        server.replaceGIF(id: exercise.id, with: try writeTestGIF(width: 64, height: 64, palette: greys, frames: frames, loopCount: 0))
    }
}

/// `gifpack verify` and `gifpack inspect` on an output with WebP renditions
/// (format 1.4, `formatPacks[]`), the real binary on a real build.
@Suite("WebP renditions through verify and inspect", .timeLimit(.minutes(5)))
struct WebPCommandTests {
    @Test func verifyChecksTheWebPPacksAndInspectNamesEachEntrysFormat() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        try serveSmoothGIFs(server)
        let workspace = try TemporaryDirectory()
        try await makeDist(manifest: rapidAPIManifest(server: server, packs: "output:\n  formats: [gif, webp]"), workspace: workspace)
        let index = try readIndex(workspace.file("dist/index.json"))
        let webpPack = try #require(index.formatPacks?.first)
        #expect(webpPack.gifs.allSatisfy { $0.format == .webp } && webpPack.gifs.count == index.packs[0].gifs.count)

        // The GIF pack, its posters pack and the WebP pack.
        let verify = try await run(productPath("gifpack"), ["verify", workspace.file("dist")])
        #expect(verify.status == 0 && verify.output.contains("ok: verified 3 pack(s)"), "\(verify.output)\(verify.error)")

        let inspect = try await run(productPath("gifpack"), ["inspect", workspace.file("dist/\(webpPack.file)")])
        #expect(inspect.status == 0, "\(inspect.error)")
        #expect(inspect.output.contains("format") && inspect.output.components(separatedBy: " webp\n").count == 5, "\(inspect.output)")
        #expect(
            inspect.output.contains("in pack all.180.webp at 180 px") && inspect.output.contains("(4 WebP, the others GIF)"),
            "\(inspect.output)")

        // A WebP pack's entry damaged on disk: verify names it.
        let path = workspace.file("dist/\(webpPack.file)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let entry = webpPack.gifs[0].location
        bytes[Int(entry.frameOffset + entry.frameLength / 2)] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try await run(productPath("gifpack"), ["verify", workspace.file("dist")])
        #expect(damaged.status == 1 && damaged.output.contains("all.180.webp"), "\(damaged.output)")
    }
}

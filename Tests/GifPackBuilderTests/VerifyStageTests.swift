import ExerciseDBFixture
import Foundation
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The verify stage: every frame a pack is assembled from is checked before the first pack is
/// written, so a damaged cached GIF is replaced before the pack stage starts and nothing flows back
/// from packing to fetching.
@Suite("Verify before packing", .timeLimit(.minutes(3)))
struct VerifyStageTests {
    @Test func aDamagedGIFOfALaterPackIsDownloadedAgainBeforeAnyPackIsFinished() async throws {
        let server = try startFixture(count: 12) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let ids = server.catalog.exercises.map(\.id).sorted()
        // The first pack never holds the damaged GIF; the second does, and needs a new version.
        let packs = """
            packs:
              - name: first
                selector:
                  ids: [\(ids[0]), \(ids[1])]
              - name: second
                selector:
                  ids: [\(ids[5]), \(ids[6])]
            """
        let text = rapidAPIManifest(server: server, packs: packs, fetch: "  refresh_after: 0", maxMissing: "0")
        let first = try await runBuild(manifest: text, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let victim = try #require(readIndex(workspace.file("dist/index.json")).packs.last?.exercises.first { $0.id == ids[6] }?.gif)
        let blob = CacheLayout(root: workspace.file("cache")).blobPath(sha256: victim)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: blob)))
        bytes[bytes.count / 2] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: blob))
        try FileManager.default.removeItem(atPath: workspace.file("cache/frames"))
        server.replaceGIF(id: ids[5], with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 2, colors: 4, seed: 79))

        // What happened, in order: the victim's full downloads and the packs finished.
        let events = Mutex<[String]>([])
        let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)
        let second = await BuildPipeline(manifest: manifest, options: options) { event in
            switch event {
            case .attempt(let attempt) where attempt.exerciseID == ids[6] && attempt.outcome == .downloaded:
                events.withLock { $0.append("download \(attempt.exerciseID)") }
            case .packFinished(let pack): events.withLock { $0.append("pack \(pack.name)") }
            default: break
            }
        }.run()
        #expect(second.exitStatus == .success, "\(second.message)")
        #expect(second.damagedBlobs == [victim])
        #expect(
            events.withLock { $0 } == ["download \(ids[6])", "pack first", "pack second"],
            "the damaged GIF is downloaded again before any pack is finished")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.map(\.version) == [1, 2])
        #expect(index.packs.last?.exercises.first { $0.id == ids[6] }?.gif == victim)
        #expect(try Data(contentsOf: URL(fileURLWithPath: blob)) == Data(server.catalog.gifBytes(id: ids[6]) ?? []))
        #expect(try await run(productPath("gifpack"), ["verify", workspace.file("dist")]).status == 0)
    }
}

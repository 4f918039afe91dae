import Foundation
import GifPackIndexReader
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The builder reads every index — its output's, the one a publish uploads, the one a target
/// serves, the one clients are served — with the client's reader: an index an app refuses, the
/// builder refuses too, for the same reason.
@Suite("The builder reads indexes as clients do", .timeLimit(.minutes(3)))
struct BuilderIndexReadingTests {
    @Test func everyBuilderSiteRefusesAnIndexTheClientsReaderRefuses() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        try #require(first.exitStatus == .success, "\(first.message)")
        let dist = workspace.file("dist")
        let indexPath = dist + "/index.json"
        // The builder's reader gives what the client's gives, read as it is decoded.
        #expect(try BuilderIndexReader.read(indexPath) == PackIndexSource.loadFile(indexPath, limits: BuilderIndexReader.limits))
        #expect(try BuilderIndexReader.read(workspace.file("none.json")) == nil)

        // The same index listing its pack twice: well-formed JSON of the format's shape, which the format's rules refuse.
        var index = try PackIndex.decode(from: Data(contentsOf: URL(fileURLWithPath: indexPath)))
        index.packs.append(index.packs[0])
        let bytes = index.encodedBytes()
        #expect(try PackIndex.decode(bytes: bytes) == index, "the model decodes it")
        try FileSystem.writeAtomically(bytes, to: indexPath)
        let refusal = "the index lists this pack name twice"

        // The client's reader.
        let client = #expect(throws: PackClientError.self) { try PackIndexSource.loadFile(indexPath) }
        #expect(client?.description.contains(refusal) == true, "\(String(describing: client))")
        // A target's live index, before a publish replaces it.
        if case .unreadable(let why) = Publisher.readIndex(bytes) {
            #expect(why.contains(refusal), "\(why)")
        } else {
            Issue.record("publish: a live index the reader refuses was read")
        }
        // What a publish uploads.
        await #expect { _ = try await PublishSource.load(dist) } throws: { "\($0)".contains(refusal) }
        // Rebuilding a damaged state from the output's index.
        let state = try BuildState(inMemorySource: "test")
        var recovery = StateRecovery(reason: "test", movedTo: workspace.file("state.sqlite.corrupt"))
        #expect {
            try StateOpener.rebuild(
                &recovery, state: state, indexPath: indexPath, catalog: [], layout: CacheLayout(root: workspace.file("cache")),
                resolution: .pixels(180), fetch: FetchSettings())
        } throws: { "\($0)".contains(refusal) }
        #expect(recovery.rebuiltPacks == 0)
        // The public-read check, served the same index.
        let files = try ClientStaticFileServer(root: dist)
        defer { files.stop() }
        let problem = await PublicReadCheck(publicURL: files.baseURL + "/", outputDirectory: dist).run()
        #expect(problem?.contains(refusal) == true, "\(String(describing: problem))")
        // A build over this output stops before it changes anything.
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .failed)
        #expect(second.message.contains("index.json exists but cannot be read") && second.message.contains(refusal), "\(second.message)")
        #expect(try FileSystem.readAll(indexPath) == bytes, "left as it was")
    }
}

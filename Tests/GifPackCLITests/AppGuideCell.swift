// docs/apps.md's cell block, compiled here and run against nginx by AppGuideCellTests (below).
// The lines between the two markers are the docs' block, byte for byte (AppGuideSketchTests
// compares them).
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

// BEGIN docs/apps.md: CellContent
import Foundation
import GifPackClient

/// What a list cell shows for its GIF, decided from the loader's answer or error.
enum CellContent: Equatable {
    /// Not asked yet, or on its way: the placeholder.
    case loading
    /// The GIF: play it.
    case gif(LoadedGIF)
    /// Keep the placeholder: the exercise has no GIF (`reason` nil), or retrying now will not bring
    /// it (the server refused, the bytes were not trusted, …: `reason` is the error's message).
    case placeholder(reason: String?)
    /// Keep the placeholder with an "offline" badge; load again when the network is back.
    case offline
    /// Keep the placeholder; the disk is full (say so once, not in every cell).
    case noSpace

    /// Loads the cell's GIF. A cancelled load (the cell scrolled away) keeps `current`.
    static func load(_ exerciseID: String, from loader: GIFLoader, current: CellContent = .loading) async -> CellContent {
        do {
            guard let gif = try await loader.gif(for: exerciseID) else { return .placeholder(reason: nil) }
            return .gif(gif)
        } catch {
            switch GIFLoadFailure(error) {
            case .cancelled: return current
            case .offline: return .offline
            case .noSpace: return .noSpace
            case .serverRefused, .notTrusted, .other: return .placeholder(reason: error.localizedDescription)
            }
        }
    }
}
// END docs/apps.md: CellContent

/// The guide's cell code against nginx: a GIF, a server that is gone, an index that is not there.
@Suite("App guide: the cell's content from the loader's answers and failures", .tags(.nginx), .timeLimit(.minutes(3)))
struct AppGuideCellTests {
    @Test func aCellShowsTheGIFOrSaysWhyNot() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 4)
        defer {
            webSite.nginx.stop()
            webSite.dists.server.stop()
        }
        let loader = try GIFLoader(
            indexURL: URL(string: webSite.nginx.baseURL + "/index.json")!,
            cacheFolder: URL(fileURLWithPath: webSite.dists.workspace.file("app/gifs")))
        let id = try #require(webSite.dists.server.catalog.exercises.map(\.id).sorted().first)
        guard case .gif(let gif) = await CellContent.load(id, from: loader) else { Issue.record("no GIF for \(id)"); return }
        #expect(gif.data.starts(with: Array("GIF8".utf8)))

        let gone = try GIFLoader(
            indexURL: URL(string: "http://127.0.0.1:\(try LoopbackPort.free())/index.json")!,
            cacheFolder: URL(fileURLWithPath: webSite.dists.workspace.file("app/gone")))
        #expect(await CellContent.load(id, from: gone) == .offline)

        let missing = try GIFLoader(
            indexURL: URL(string: webSite.nginx.baseURL + "/missing/index.json")!,
            cacheFolder: URL(fileURLWithPath: webSite.dists.workspace.file("app/missing")))
        guard case .placeholder(let reason?) = await CellContent.load(id, from: missing) else { Issue.record("not a placeholder"); return }
        #expect(reason.contains("HTTP status 404") && reason.contains("/missing/index.json"), "\(reason)")
    }
}

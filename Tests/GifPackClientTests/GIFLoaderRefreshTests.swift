import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The loader's daily refresh, its placeholders and its cancellation, against nginx.
@Suite("Client: the loader's refresh, placeholders and cancellation, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct GIFLoaderRefreshTests {
    typealias Served = GIFLoaderTests.Served

    /// Records what a refresh reports.
    final class Steps: @unchecked Sendable {  // @unchecked: `steps` is read and written under `lock`.
        private let lock = NSLock()
        private var steps: [RefreshProgress] = []
        func add(_ step: RefreshProgress) { lock.withLock { steps.append(step) } }
        var all: [RefreshProgress] { lock.withLock { steps } }
    }

    @Test(
        "the daily check is one conditional request with 0 body bytes and writes nothing; two refreshes share one",
        arguments: ["URLSession", "curl"])
    func dailyCheckAndCoalescing(transportName: String) async throws {
        let served = try await Served.make(limitRate: 16384)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), transport: transport)

        // Two refreshes at once (a view's task and a background refresh): one install.
        var mark = try await served.nginx.mark()
        let steps = Steps()
        async let first = loader.refresh { steps.add($0) }
        try await waitUntil { steps.all.contains { $0.stage == .checking } }
        let second = try await loader.refresh()
        let report = try await first
        #expect(report.generation == second.generation && !report.isUnchanged)
        let lines = try await served.nginx.log(since: mark)
        #expect(lines.filter { $0.path.hasPrefix("/index.json") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.path == served.packFile }.count == 1, "\(lines)")
        #expect(steps.all.first?.stage == .checking && steps.all.last?.stage == .installed)

        // The daily check: one request, a 304, no body, nothing written.
        let installed = served.folder("app").appendingPathComponent("installed").path
        let before = try treeSnapshot(installed)
        mark = try await served.nginx.mark()
        let quiet = Steps()
        let again = try await loader.refresh { quiet.add($0) }
        #expect(again.isUnchanged && quiet.all.map(\.stage) == [.checking, .upToDate])
        let check = try await served.nginx.log(since: mark)
        #expect(check.count == 1 && check.first?.status == 304 && check.first?.bodyBytes == 0, "\(check)")
        #expect(try treeSnapshot(installed) == before)
    }

    @Test("placeholders and GIFs of every installed exercise after a relaunch with the server down")
    func placeholdersOfflineAfterRelaunch() async throws {
        let served = try await Served.make()
        let index = try served.dists.index()
        var configuration = GIFLoader.Configuration()
        configuration.withPosters = true
        let folder = served.folder("app")
        _ = try await GIFLoader(indexURL: served.indexURL, cacheFolder: folder, configuration: configuration).refresh()
        served.stop()

        let relaunched = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, configuration: configuration)
        let all = try await relaunched.placeholders()
        let withGIFs = served.dists.ids.filter { index.placeholder(forExercise: $0) != nil }
        #expect(!withGIFs.isEmpty && Set(all.keys) == Set(withGIFs))
        var loaded = Set<String>()
        for id in withGIFs {
            let expected = try #require(index.placeholder(forExercise: id))
            let placeholder = try #require(try await relaunched.placeholder(for: id))
            #expect(placeholder.averageColor == expected.averageColor && placeholder.blurHash == expected.blurHash)
            #expect(placeholder.width == expected.width && placeholder.gifSHA256 == expected.gifSHA256)
            #expect(placeholder.posterURL.map { FileManager.default.fileExists(atPath: $0.path) } == true, "\(id)")
            let gif = try #require(try await relaunched.gif(for: id))
            // A GIF two exercises share is read from disk once, then served from memory.
            #expect(gif.tier == (loaded.insert(gif.sha256).inserted ? .installed : .memory), "\(id)")
            #expect(gif.data == Data(served.dists.served(id)) && gif.fileURL != nil)
        }
        #expect(try await relaunched.placeholder(for: "not-installed") == nil)
    }

    @Test(
        "a cancelled GIF request or refresh ends with CancellationError and leaves the caches as they were",
        arguments: ["URLSession", "curl"])
    func cancellation(transportName: String) async throws {
        let served = try await Served.make(limitRate: 2048)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), transport: transport)
        let id = try #require(served.distinct.first)

        // A GIF, cancelled while its frame is in transfer.
        _ = try await loader.lazy.index()
        let request = testTask { try await loader.gif(for: id) }
        let hash = try #require(try served.dists.index().packs.first?.exercises.first { $0.id == id }?.gif)
        try await waitUntil { loader.state.ticket(hash) != nil }
        request.cancel()
        await #expect(throws: CancellationError.self) { _ = try await request.value }
        await loader.settle()
        let lazyGIFs = served.folder("app").appendingPathComponent("lazy/gifs").path
        #expect(DirectoryListing.names(lazyGIFs).isEmpty, "\(DirectoryListing.names(lazyGIFs))")
        #expect(loader.memory.contents.hashes.isEmpty)

        // A refresh, cancelled while the index or the pack is in transfer: nothing installed.
        let installed = served.folder("app").appendingPathComponent("installed").path
        let steps = Steps()
        let refresh = testTask { try await loader.refresh { steps.add($0) } }
        try await waitUntil { steps.all.contains { $0.stage == .checking } }
        refresh.cancel()
        await #expect(throws: CancellationError.self) { _ = try await refresh.value }
        await loader.settle()
        #expect(try treeSnapshot(installed) == ["link -> none"])
        #expect(try await loader.placeholders().isEmpty)
    }
}

import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The app's loader (``GIFLoader``) against nginx, with both transports where
/// HTTP is involved.
@Suite("Client: the app's GIF loader, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct GIFLoaderTests {
    /// A built and published fixture (64 px GIFs) served by nginx, and a fresh cache folder.
    struct Served {
        let dists: UpgradeDist
        let nginx: NginxServer
        var indexURL: URL { URL(string: nginx.baseURL + "/index.json")! }
        func folder(_ name: String) -> URL { URL(fileURLWithPath: dists.workspace.file(name), isDirectory: true) }
        func stop() {
            nginx.stop()
            dists.server.stop()
        }

        static func make(count: Int = 20, limitRate: Int? = nil) async throws -> Served {
            let webSite = try await UpgradeDist.servedByNginx(count: count, nginx: { $0.limitRate = limitRate })
            return Served(dists: webSite.dists, nginx: webSite.nginx)
        }

        /// Ids with distinct GIFs.
        var distinct: [String] { LazyGIFCacheTests.distinctGIFs(dists) }
        var packFile: String { (try? dists.index().packs.first?.file).flatMap { $0 }.map { "/\($0)" } ?? "" }
        func rangeRequests(since mark: Int) async throws -> [NginxServer.LogLine] {
            try await nginx.log(since: mark).filter { $0.path.hasPrefix("/packs/") && $0.range != nil }
        }
        /// The frame range the index gives exercise `id`.
        func range(_ id: String) throws -> String {
            let location = try #require(try dists.index().packs.first?.gifEntry(forExercise: id)).location
            return "bytes=\(location.frameOffset)-\(location.frameOffset + location.frameLength - 1)"
        }
    }

    static func transports() throws -> [(name: String, transport: any HTTPTransport)] {
        [("URLSession", URLSessionTransport()), ("curl", try HTTPClient(maxConnections: 4))]
    }

    @Test("a cache folder that is not a file URL, or is relative, is refused with a clear error")
    func refusesBadFolders() throws {
        let index = URL(string: "https://cdn.example.com/gifpack/index.json")!
        let web = URL(string: "https://cdn.example.com/caches/gifs")!
        #expect(throws: GIFLoaderError.cacheFolderNotAFileURL(web.absoluteString)) { try GIFLoader(indexURL: index, cacheFolder: web) }
        let relative = URL(fileURLWithPath: "Caches/gifs")
        #expect(throws: GIFLoaderError.cacheFolderRelative("Caches/gifs")) { try GIFLoader(indexURL: index, cacheFolder: relative) }
        // A common mistake: a path made from a URL's absoluteString is relative ("file:/…").
        let mistaken = URL(fileURLWithPath: URL(fileURLWithPath: "/tmp/gifs").absoluteString)
        do {
            _ = try GIFLoader(indexURL: index, cacheFolder: mistaken)
            Issue.record("a folder path made from an absoluteString was accepted")
        } catch {
            // The message names the path it was given: a file URL's text, not an absolute path.
            #expect(error.description.contains("must be an absolute path, not file:"), "\(error)")
        }
        let ftp = URL(string: "ftp://cdn.example.com/index.json")!
        #expect(throws: GIFLoaderError.unsupportedIndexURL(ftp.absoluteString)) {
            try GIFLoader(indexURL: ftp, cacheFolder: URL(fileURLWithPath: "/tmp/gifs"))
        }
        #expect(GIFLoaderError.cacheFolderRelative("Caches/gifs").description.contains("absolute path"))
        #expect(try GIFLoader(indexURL: index, cacheFolder: URL(fileURLWithPath: "/tmp/gifs/")).cacheFolder.path == "/tmp/gifs")
    }

    @Test("the memory tier evicts the least recently used by bytes and by count")
    func memoryTierEvicts() {
        let byCost = MemoryTier(costLimit: 250, countLimit: 10)
        for (name, size) in [("a", 100), ("b", 100)] { byCost.insert(name, data: Data(count: size), fileURL: nil) }
        _ = byCost.gif("a")  // a is now the most recent
        byCost.insert("c", data: Data(count: 100), fileURL: nil)
        #expect(byCost.contents.hashes == ["a", "c"] && byCost.contents.bytes == 200)
        byCost.insert("huge", data: Data(count: 251), fileURL: nil)
        #expect(byCost.contents.hashes == ["a", "c"])
        let byCount = MemoryTier(costLimit: 1 << 20, countLimit: 2)
        for name in ["a", "b", "c"] { byCount.insert(name, data: Data(count: 10), fileURL: nil) }
        #expect(byCount.contents.hashes == ["b", "c"])
        byCount.removeAll()
        #expect(byCount.contents.hashes.isEmpty && byCount.contents.bytes == 0)
    }

    @Test("tiers in order: network by one range, memory, lazy cache after eviction and after a memory warning; each answer says its tier")
    func tiersInOrder() async throws {
        let served = try await Served.make()
        defer { served.stop() }
        let ids = Array(served.distinct.prefix(3))
        var configuration = GIFLoader.Configuration()
        configuration.memoryCountLimit = 2
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), configuration: configuration)
        var mark = try await served.nginx.mark()
        let first = try #require(try await loader.gif(for: ids[0]))
        #expect(first.tier == .network && first.data == Data(served.dists.served(ids[0])))
        #expect(first.fileURL.map { (try? Data(contentsOf: $0)) == first.data } == true)
        #expect(try await served.rangeRequests(since: mark).map(\.range) == [try served.range(ids[0])])
        mark = try await served.nginx.mark()
        #expect(try await loader.gif(for: ids[0])?.tier == .memory)
        #expect(try await loader.gif(sha256: first.sha256)?.tier == .memory)
        _ = try await loader.gif(for: ids[1])
        _ = try await loader.gif(for: ids[2])  // count limit 2: ids[0] leaves memory
        #expect(try await loader.gif(for: ids[0])?.tier == .lazyCache)
        #expect(try await loader.gif(for: ids[2])?.tier == .memory)
        NotificationCenter.default.post(name: MemoryWarningObserver.name, object: nil)
        #expect(loader.memory.contents.hashes.isEmpty)
        #expect(try await loader.gif(for: ids[2])?.tier == .lazyCache)
        #expect(try await served.rangeRequests(since: mark).map(\.range) == [try served.range(ids[1]), try served.range(ids[2])])
    }

    @Test("twenty callers asking for one GIF at once cause one range request", arguments: ["URLSession", "curl"])
    func twentyCallersOneRequest(transportName: String) async throws {
        let served = try await Served.make()
        defer { served.stop() }
        let transport = try #require(try Self.transports().first { $0.name == transportName }).transport
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), transport: transport)
        let id = try #require(served.distinct.first)
        let mark = try await served.nginx.mark()
        let answers = try await withThrowingTaskGroup(of: LoadedGIF?.self) { group in
            for _ in 0..<20 { group.addTask { try await loader.gif(for: id) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 20 && answers.allSatisfy { $0?.data == Data(served.dists.served(id)) })
        let lines = try await served.nginx.log(since: mark)
        #expect(lines.filter { $0.path.hasPrefix("/packs/") }.count == 1, "\(lines)")
        #expect(lines.filter { $0.path.hasPrefix("/index.json") }.count == 1, "\(lines)")
    }

    @Test("visible requests go before waiting prefetches, and move up a prefetch they join; a cancelled prefetch's requests stop")
    func visibleBeforePrefetchAndCancel() async throws {
        let served = try await Served.make(limitRate: 1024)
        defer { served.stop() }
        let ids = Array(served.distinct.prefix(12))
        var configuration = GIFLoader.Configuration()
        configuration.maxConcurrentFetches = 1
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), configuration: configuration)
        _ = try await loader.gif(for: ids[0])  // the index, loaded once
        var mark = try await served.nginx.mark()
        let prefetched = Array(ids[1...4])
        let handle = loader.prefetch(prefetched)
        try await waitUntil { await loader.gate.waiting.prefetches == 3 }
        let visible = try #require(try await loader.gif(for: ids[5]))
        #expect(visible.tier == .network)
        await handle.finished()
        let order = try await served.rangeRequests(since: mark).map(\.range)
        let ranges = try prefetched.map(served.range)
        let visibleAt = try #require(order.firstIndex(of: try served.range(ids[5])))
        #expect(Set(order) == Set(ranges + [try served.range(ids[5])]), "\(order)")
        // Asked while one prefetch ran and three waited (in whichever order their tasks reached the
        // gate): at most one more prefetch could start before it, so two or more come after it.
        #expect(visibleAt <= 2 && order.count - visibleAt - 1 >= 2, "\(order)")

        // A visible request for the last prefetch in the queue moves that fetch up, before the others waiting.
        mark = try await served.nginx.mark()
        let queued = loader.prefetch(Array(ids[8...11]))
        try await waitUntil { await loader.gate.waiting.prefetches == 3 }
        let last = try #require(await loader.gate.waitingPrefetches.last)
        let lastHash = try #require(loader.state.hash(ofTicket: last))
        let lastID = try #require(ids[8...11].first { id in (try? served.dists.index().packs.first?.exercises.first { $0.id == id }?.gif) == lastHash })
        #expect(try await loader.gif(for: lastID)?.tier == .network)
        await queued.finished()
        let moved = try await served.rangeRequests(since: mark).map(\.range)
        let movedAt = try #require(moved.firstIndex(of: try served.range(lastID)))
        #expect(moved.count == 4 && movedAt <= 2, "\(moved)")

        // A prefetch cancelled while its first GIF is in transfer: the others are never asked for.
        mark = try await served.nginx.mark()
        let cancelled = loader.prefetch([ids[6], ids[7]])
        try await waitUntil { await loader.gate.waiting.prefetches == 1 }
        cancelled.cancel()
        await cancelled.finished()
        await loader.settle()
        let asked = try await served.rangeRequests(since: mark).map(\.range)
        #expect(asked.count <= 1, "\(asked)")
        // Nothing of the cancelled prefetch reached the caches: both come from the network now.
        #expect(try await loader.gif(for: ids[6])?.tier == .network)
        #expect(try await loader.gif(for: ids[7])?.tier == .network)
    }
}

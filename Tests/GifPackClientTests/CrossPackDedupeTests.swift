import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// Issue 34: one GIF in several packs is fetched once per install, against nginx.
@Suite("Client: a GIF several packs list is fetched once per install, against nginx", .serialized, .timeLimit(.minutes(5)))
struct CrossPackDedupeTests {
    /// Three packs: `all`, `front` (ids 0..<12) and `middle` (ids 6..<18): ids 6..<12 are in all three.
    static func packs(_ ids: [String]) -> String {
        func list(_ slice: ArraySlice<String>) -> String { slice.map { "\"\($0)\"" }.joined(separator: ", ") }
        return """
        packs:
          - name: all
          - name: front
            selector:
              ids: [\(list(ids[0..<12]))]
          - name: middle
            selector:
              ids: [\(list(ids[6..<18]))]
        """
    }

    @Test("a first install of overlapping packs fetches each GIF once, an upgrade fetches a GIF of three packs once; both install what whole packs do",
          arguments: ["URLSession", "curl"])
    func overlappingPacks(transportName: String) async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 30, packs: Self.packs)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let client = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let dedupeCache = dists.workspace.file("dedupe/gifs")
        let wholeCache = dists.workspace.file("whole/gifs")
        let dedupe = PackInstaller(cacheDirectory: dedupeCache)
        var whole = PackInstaller(cacheDirectory: wholeCache)
        whole.sparseUpgrades.isEnabled = false
        let v1 = try dists.index()
        #expect(v1.packs.map(\.name) == ["all", "front", "middle"])
        let shared = dists.ids[8]
        #expect(v1.packs.allSatisfy { $0.gifEntry(forExercise: shared) != nil })

        // First install: `all` whole, then only the other packs' catalog frames (their GIFs came with `all`).
        var mark = try await nginx.mark()
        let first = try await dedupe.install(from: PackIndexSource(url), client: client)
        var lines = try await nginx.log(since: mark)
        #expect(first.fetches.map(\.method) == [.wholePack, .sparse, .sparse], "\(first.fetches)")
        #expect(first.fetches.map { $0.framesFetched ?? -1 } == [-1, 0, 0], "\(first.fetches)")
        for pack in v1.packs where pack.name != "all" {
            let fetched = lines.filter { $0.path == "/\(pack.file)" }.reduce(Int64(0)) { $0 + $1.bodyBytes }
            #expect(fetched == pack.catalog.frameLength, "\(pack.name): \(fetched) bytes for a catalog frame of \(pack.catalog.frameLength)")
        }
        let dedupedBytes = lines.filter { $0.path.hasPrefix("/packs/") }.reduce(Int64(0)) { $0 + $1.bodyBytes }
        mark = try await nginx.mark()
        _ = try await whole.install(from: PackIndexSource(url), client: client)
        lines = try await nginx.log(since: mark)
        let wholeBytes = lines.filter { $0.path.hasPrefix("/packs/") }.reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(wholeBytes == v1.packs.reduce(Int64(0)) { $0 + $1.bytes })
        #expect(dedupedBytes < wholeBytes, "\(dedupedBytes) bytes against \(wholeBytes) for whole packs")
        #expect(try cacheContents(dedupeCache) == cacheContents(wholeCache))

        // v2: the GIF of an exercise in all three packs changes; its frame is fetched once.
        dists.server.replaceGIF(id: shared, with: try UpgradeDist.newGIF(seed: 5))
        try await dists.build()
        try dists.publish()
        let v2 = try dists.index()
        let newHash = try #require(v2.packs.first?.gifEntry(forExercise: shared)?.sha256)
        mark = try await nginx.mark()
        let upgrade = try await dedupe.install(from: PackIndexSource(url), client: client)
        lines = try await nginx.log(since: mark)
        #expect(upgrade.fetches.map(\.method) == [.sparse, .sparse, .sparse], "\(upgrade.fetches)")
        #expect(upgrade.fetches.reduce(0) { $0 + ($1.framesFetched ?? 0) } == 1, "\(upgrade.fetches)")
        // The one range that brought the new frame: no other request covers it in any pack.
        var covering = 0
        for pack in v2.packs {
            let frame = try #require(pack.gifs.first { $0.sha256 == newHash }).location
            for line in lines where line.path == "/\(pack.file)" {
                guard let range = line.range?.dropFirst("bytes=".count).split(separator: "-"), range.count == 2,
                      let low = Int64(range[0]), let high = Int64(range[1]) else { continue }
                if low <= frame.frameOffset && frame.frameOffset + frame.frameLength - 1 <= high { covering += 1 }
            }
        }
        #expect(covering == 1, "\(lines)")
        _ = try await whole.install(from: PackIndexSource(url), client: client)
        #expect(try cacheContents(dedupeCache) == cacheContents(wholeCache))
        #expect(try fileBytes("\(dedupeCache)/\(shared).gif") == dists.served(shared))
        #expect(DirectoryListing.names("\(dedupeCache).d/downloads").isEmpty)
    }
}

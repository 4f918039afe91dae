import Foundation
@testable import GifPackClient
import GifPackFormat
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// One GIF (or poster) in several packs is fetched once per install, against nginx.
@Suite("Client: a GIF several packs list is fetched once per install, against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
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

    @Test(
        "a first install of overlapping packs fetches each GIF once, an upgrade fetches a GIF of three packs once; both install what whole packs do",
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
                    let low = Int64(range[0]), let high = Int64(range[1])
                else { continue }
                if low <= frame.frameOffset && frame.frameOffset + frame.frameLength - 1 <= high { covering += 1 }
            }
        }
        #expect(covering == 1, "\(lines)")
        _ = try await whole.install(from: PackIndexSource(url), client: client)
        #expect(try cacheContents(dedupeCache) == cacheContents(wholeCache))
        #expect(try fileBytes("\(dedupeCache)/\(shared).gif") == dists.served(shared))
        #expect(DirectoryListing.names("\(dedupeCache).d/downloads").isEmpty)
    }

    /// Builds the three packs with posters (``PosterInstallTests/sizes``) and publishes them.
    static func buildWithPosters(_ dists: UpgradeDist) async throws {
        let output = "\noutput:\n  posters: [\(PosterInstallTests.sizes.map(String.init).joined(separator: ", "))]"
        let manifest = rapidAPIManifest(server: dists.server, packs: dists.packs + output, fetch: "  refresh_after: 0", pageSize: 50)
        try await makeDist(manifest: manifest, workspace: dists.workspace, allowingPartial: true)
        try dists.publish()
    }

    /// Poster path → how many requests of `lines` brought its frame, over every posters pack of
    /// `index` (a 200 brings every frame of its file, a 206 those inside its range); only the paths
    /// in `paths` (nil: every poster).
    static func posterFetchCounts(_ lines: [NginxServer.LogLine], index: PackIndex, paths: Set<String>? = nil) -> [String: Int] {
        var counts: [String: Int] = [:]
        for posters in index.packs.compactMap(\.posters) {
            for location in posters.posters where paths?.contains(location.path) ?? true {
                let covering = lines.filter { line in
                    guard line.path == "/\(posters.file)" else { return false }
                    if line.status == 200 { return true }
                    guard let range = line.range.flatMap(PosterRangeTests.bounds) else { return false }
                    return range.lowerBound <= location.frameOffset && location.frameOffset + location.frameLength - 1 <= range.upperBound
                }.count
                counts[location.path, default: 0] += covering
            }
        }
        return counts
    }

    @Test(
        "posters several packs list are fetched once, on a first install and an upgrade; the posters are those each pack installs alone",
        arguments: ["URLSession", "curl"])
    func overlappingPosters(transportName: String) async throws {
        let dists = try await UpgradeDist.make(count: 30, packs: Self.packs)
        defer { dists.server.stop() }
        try await Self.buildWithPosters(dists)
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let client = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        func installer(_ name: String, sparse: Bool = true) -> PackInstaller {
            var installer = PackInstaller(cacheDirectory: dists.workspace.file("\(name)/gifs"))
            installer.withPosters = true
            installer.sparseUpgrades.isEnabled = sparse
            return installer
        }
        let dedupe = installer("dedupe")
        let whole = installer("whole", sparse: false)
        let v1 = try dists.index()
        let postersPacks = v1.packs.compactMap(\.posters)
        #expect(postersPacks.map(\.name) == ["all-posters", "front-posters", "middle-posters"])

        // First install: every poster's frame comes once, with `all-posters`; the others cost their catalog frames.
        var mark = try await nginx.mark()
        let first = try await dedupe.install(from: PackIndexSource(url), client: client)
        var lines = try await nginx.log(since: mark)
        let counts = Self.posterFetchCounts(lines, index: v1)
        #expect(
            counts.count == postersPacks[0].posters.count && counts.values.allSatisfy { $0 == 1 },
            "\(counts.filter { $0.value != 1 }): \(lines)")
        let posterFetches = first.fetches.filter { $0.pack.hasSuffix("-posters") }
        #expect(posterFetches.map(\.method) == [.wholePack, .sparse, .sparse], "\(posterFetches)")
        for posters in postersPacks.dropFirst() {
            let fetched = lines.filter { $0.path == "/\(posters.file)" }.reduce(Int64(0)) { $0 + $1.bodyBytes }
            #expect(fetched == posters.catalog.frameLength, "\(posters.name): \(fetched) bytes for a catalog frame of \(posters.catalog.frameLength)")
        }
        _ = try await whole.install(from: PackIndexSource(url), client: client)
        #expect(try cacheContents(dedupe.cacheDirectory) == cacheContents(whole.cacheDirectory))
        // Each pack installed alone installs the same posters.
        let installed = try cacheContents(dedupe.cacheDirectory)
        for pack in v1.packs {
            let alone = installer("alone-\(pack.name)")
            _ = try await alone.install(from: PackIndexSource(url), packs: [pack.name], client: client)
            let posters = try cacheContents(alone.cacheDirectory).filter { $0.key.hasPrefix("posters/") }
            #expect(posters.count == pack.exercises.count * PosterInstallTests.sizes.count, "\(pack.name)")
            #expect(posters.allSatisfy { installed[$0.key] == $0.value }, "\(pack.name)")
        }

        // v2: the GIF of an exercise in all three packs changes; each of its new posters is fetched once.
        let shared = dists.ids[8]
        dists.server.replaceGIF(id: shared, with: try UpgradeDist.newGIF(seed: 7))
        try await Self.buildWithPosters(dists)
        let v2 = try dists.index()
        let newHash = try #require(v2.packs.first?.gifEntry(forExercise: shared)?.sha256)
        let newPosters = Set(PosterInstallTests.sizes.map { PosterPackDescription.path(size: $0, sha256: newHash) })
        #expect(v2.packs.allSatisfy { pack in pack.posters?.posters.contains { newPosters.contains($0.path) } == true })
        mark = try await nginx.mark()
        let upgrade = try await dedupe.install(from: PackIndexSource(url), client: client)
        lines = try await nginx.log(since: mark)
        let upgradeCounts = Self.posterFetchCounts(lines, index: v2, paths: newPosters)
        #expect(upgradeCounts.count == newPosters.count && upgradeCounts.values.allSatisfy { $0 == 1 }, "\(upgradeCounts): \(lines)")
        let upgradeFetches = upgrade.fetches.filter { $0.pack.hasSuffix("-posters") }
        #expect(upgradeFetches.map(\.method) == [.sparse, .sparse, .sparse], "\(upgradeFetches)")
        #expect(upgradeFetches.reduce(0) { $0 + ($1.framesFetched ?? 0) } == newPosters.count, "\(upgradeFetches)")
        _ = try await whole.install(from: PackIndexSource(url), client: client)
        #expect(try cacheContents(dedupe.cacheDirectory) == cacheContents(whole.cacheDirectory))
        #expect(DirectoryListing.names("\(dedupe.cacheDirectory).d/downloads").isEmpty)
    }
}

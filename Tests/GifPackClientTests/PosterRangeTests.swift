import Foundation
@testable import GifPackClient
import GifPackFormat
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// Posters by range: an upgrade with posters fetches the posters pack's catalog frame and
/// the new posters' frames by single-range requests, like a pack's GIFs, over real HTTP from nginx
/// (its access log gives the bytes and requests), and installs what a whole download installs.
@Suite("Client: posters by range on an upgrade, against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(10)))
struct PosterRangeTests {
    /// A fixture built and published with posters (``PosterInstallTests/sizes``) and nginx serving
    /// it (the client suites' one set-up, ``UpgradeDist/servedByNginx(count:noGIF:packs:nginx:publishing:)``).
    enum Site {
        static func start(count: Int, ignoreRanges: Bool = false) async throws -> ServedUpgradeDist {
            try await UpgradeDist.servedByNginx(
                count: count, nginx: { $0.ranges = !ignoreRanges },
                publishing: PosterInstallTests.buildAndPublish)
        }
    }

    /// The posters of the GIFs `v2` has and `v1` has not, sorted by offset.
    static func newPosters(_ v2: PackDescription, since v1: PackDescription) throws -> [EntryLocation] {
        let posters = try #require(v2.posters)
        let hashes = Set(v2.gifs.map(\.sha256)).subtracting(v1.gifs.map(\.sha256))
        return posters.posters.filter { location in
            hashes.contains { location.path.hasSuffix("/\($0).gif") }
        }.sorted { $0.frameOffset < $1.frameOffset }
    }

    @Test func aOneGIFUpgradeFetchesOnlyTheNewPosterFramesAndTheCatalogFrame() async throws {
        let site = try await Site.start(count: 100)
        defer { site.stop() }
        var sparse = site.installer("sparse")
        // No coalescing: every byte fetched must belong to a needed frame.
        sparse.sparseUpgrades.coalesceGap = 1
        let whole = site.installer("whole", sparse: false)
        let first = try await sparse.install(from: PackIndexSource(site.url))
        #expect(first.fetches.first { $0.pack == "all-posters" }?.fallbackReason?.contains("no previous generation") == true)
        _ = try await whole.install(from: PackIndexSource(site.url))
        let v1 = try #require(try site.dists.index().packs.first)

        let v2 = try await site.upgrade(position: 42, seed: 21)
        let posters = try #require(v2.posters)
        #expect(posters.file != v1.posters?.file)
        let wanted = try Self.newPosters(v2, since: v1)
        #expect(wanted.count == PosterInstallTests.sizes.count)

        let mark = try await site.nginx.mark()
        let report = try await sparse.install(from: PackIndexSource(site.url))
        let lines = try await site.nginx.log(since: mark)

        let fetch = try #require(report.fetches.first { $0.pack == posters.name })
        #expect(fetch.method == .sparse && fetch.fallbackReason == nil, "\(fetch)")
        #expect(fetch.framesFetched == wanted.count && fetch.wholePackBytes == posters.bytes)
        let posterLines = lines.filter { $0.path == "/\(posters.file)" }
        #expect(!posterLines.isEmpty && posterLines.allSatisfy { $0.status == 206 && $0.range?.contains(",") == false }, "\(lines)")
        // Exactly the catalog's frame and the new posters' frames, each asked for once.
        let frames = [posters.catalog] + wanted
        let asked = Set(posterLines.compactMap(\.range))
        for frame in frames {
            let covered = asked.contains { range in
                Self.bounds(range).map { $0.lowerBound <= frame.frameOffset && frame.frameOffset + frame.frameLength - 1 <= $0.upperBound } ?? false
            }
            #expect(covered, "\(frame.path) not fetched: \(posterLines)")
        }
        let needed = frames.reduce(Int64(0)) { $0 + $1.frameLength }
        let fetched = posterLines.reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(fetched == needed, "posters: fetched \(fetched) bytes in \(posterLines.count) requests, needed \(needed): \(posterLines)")
        #expect(fetch.bytesFetched == fetched && fetch.requests == posterLines.count)
        #expect(report.postersWritten == wanted.count && report.postersReused > 0)
        #expect(report.bytesDownloaded == report.fetches.reduce(0) { $0 + $1.bytesFetched })

        // The same upgrade by whole downloads installs byte-identical files.
        let wholeReport = try await whole.install(from: PackIndexSource(site.url))
        #expect(wholeReport.fetches.first { $0.pack == posters.name }?.method == .wholePack)
        #expect(try cacheContents(sparse.cacheDirectory) == cacheContents(whole.cacheDirectory))
        #expect(DirectoryListing.names("\(sparse.cacheDirectory).d/downloads").isEmpty)
        let total = lines.reduce(Int64(0)) { $0 + $1.bodyBytes }
        print(
            "PosterRangeTests one-GIF upgrade with posters: \(total) bytes in \(lines.count) requests "
                + "(posters pack: \(fetched) bytes in \(posterLines.count) requests, whole \(posters.bytes)): "
                + lines.map(\.description).joined(separator: "; "))
    }

    /// A CDN whose edges do not all honour Range, for the posters pack: its catalog's range gets a
    /// 206, a later range a 200 while others are in flight. The whole posters pack is fetched
    /// instead, with either transport.
    @Test func aPostersRangeAnswered200MidUpgradeFallsBackToTheWholePostersPackWithBothTransports() async throws {
        let site = try await Site.start(count: 30)
        defer { site.stop() }
        let curl = try HTTPClient()
        defer { curl.shutdown() }
        let transports: [(name: String, client: any HTTPTransport)] = [("curl", curl), ("URLSession", URLSessionTransport())]
        let installers = transports.map { transport in
            var installer = site.installer("mixed-\(transport.name)")
            installer.sparseUpgrades.coalesceGap = 1
            return installer
        }
        for (transport, installer) in zip(transports, installers) {
            _ = try await installer.install(from: PackIndexSource(site.url), client: transport.client)
        }
        let v1 = try #require(try site.dists.index().packs.first?.posters)
        for (seed, position) in [4, 13, 25].enumerated() {
            site.dists.server.replaceGIF(id: site.dists.ids[position], with: try UpgradeDist.newGIF(seed: 50 + UInt64(seed)))
        }
        try await PosterInstallTests.buildAndPublish(site.dists)
        let posters = try #require(try site.dists.index().packs.first?.posters)
        let plan = SparseUpgradePlanner.plan(
            posters: posters, available: Set(posters.posters.map(\.path)).intersection(v1.posters.map(\.path)),
            settings: installers[0].sparseUpgrades)
        try #require(plan.ranges.count >= 3 && plan.isCheaperThanWholePack, "\(plan.ranges.map(\.bytes))")

        for (transport, installer) in zip(transports, installers) {
            let edge = try ClientStaticFileServer(root: site.dists.site)
            defer { edge.stop() }
            edge.honourOnlyTheFirstRange(path: "/\(posters.file)")
            let report = try await installer.install(from: PackIndexSource(edge.baseURL + "/index.json"), client: transport.client)

            let fetch = try #require(report.fetches.first { $0.pack == posters.name })
            #expect(fetch.method == .wholePack && fetch.fallbackReason?.contains("ignores Range") == true, "\(transport.name): \(fetch)")
            let ranges = edge.requests.filter { $0.path == "/\(posters.file)" }.map(\.range)
            // The edge records a request when its own thread has read the head: a frame's range sent
            // beside the one answered 200 can be recorded after the whole download (seen once under load).
            #expect(
                ranges.count >= 3 && ranges.first??.hasPrefix("bytes=0-") == true && ranges.filter { $0 == nil }.count == 1,
                "\(transport.name): \(ranges)")
            #expect(report.fetches.first { $0.pack != posters.name }?.method == .sparse)
            let whole = site.installer("whole-\(transport.name)", sparse: false)
            _ = try await whole.install(from: PackIndexSource(edge.baseURL + "/index.json"), client: transport.client)
            // The same GIFs and posters as a first install by whole downloads (the manifests differ in their generation).
            func files(_ cache: String) throws -> [String: String] { try cacheContents(cache).filter { $0.key != InstallManifest.fileName } }
            #expect(try files(installer.cacheDirectory) == files(whole.cacheDirectory), "\(transport.name)")
        }
    }

    @Test func aServerThatIgnoresRangesGetsTheWholePostersPack() async throws {
        let site = try await Site.start(count: 30, ignoreRanges: true)
        defer { site.stop() }
        let sparse = site.installer("sparse")
        let whole = site.installer("whole", sparse: false)
        _ = try await sparse.install(from: PackIndexSource(site.url))
        _ = try await whole.install(from: PackIndexSource(site.url))
        let v2 = try await site.upgrade(position: 7, seed: 22)
        let posters = try #require(v2.posters)

        let mark = try await site.nginx.mark()
        let report = try await sparse.install(from: PackIndexSource(site.url))
        let lines = try await site.nginx.log(since: mark)

        let fetch = try #require(report.fetches.first { $0.pack == posters.name })
        #expect(fetch.method == .wholePack && fetch.fallbackReason?.contains("ignores Range") == true, "\(fetch)")
        let posterLines = lines.filter { $0.path == "/\(posters.file)" }
        #expect(posterLines.first?.range != nil && posterLines.first?.status == 200, "\(posterLines)")
        #expect(posterLines.last?.range == nil && posterLines.last?.bodyBytes == posters.bytes, "\(posterLines)")
        _ = try await whole.install(from: PackIndexSource(site.url))
        #expect(try cacheContents(sparse.cacheDirectory) == cacheContents(whole.cacheDirectory))
    }

    @Test func aTamperedPosterFrameOrCatalogFrameIsRefusedAndTheCacheStaysAsItWas() async throws {
        let site = try await Site.start(count: 30)
        defer { site.stop() }
        let installer = site.installer("refusing")
        _ = try await installer.install(from: PackIndexSource(site.url))
        let v1 = try #require(try site.dists.index().packs.first)
        let snapshot = try treeSnapshot(installer.cacheDirectory)
        let v2 = try await site.upgrade(position: 5, seed: 23)
        let posters = try #require(v2.posters)
        let victim = try #require(try Self.newPosters(v2, since: v1).first)
        let file = "\(site.dists.site)/\(posters.file)"
        let good = try fileBytes(file)

        for frame in [victim, posters.catalog] {
            var bad = good
            bad[Int(frame.frameOffset + frame.frameLength / 2)] ^= 0x55
            try Data(bad).write(to: URL(fileURLWithPath: file))
            let mark = try await site.nginx.mark()
            let error = await #expect(throws: PackClientError.self) { _ = try await installer.install(from: PackIndexSource(site.url)) }
            let lines = try await site.nginx.log(since: mark)
            guard case .rejected(let rejection)? = error else {
                Issue.record("not a refusal: \(String(describing: error))")
                continue
            }
            #expect(rejection.pack == posters.name && rejection.entry == frame.path, "\(rejection)")
            #expect(lines.filter { $0.path == "/\(posters.file)" }.allSatisfy { $0.status == 206 }, "fetched by range: \(lines)")
            #expect(try treeSnapshot(installer.cacheDirectory) == snapshot)
            #expect(DirectoryListing.names("\(installer.cacheDirectory).d/downloads").isEmpty)
        }

        // Once the server is right again the upgrade goes through by range.
        try Data(good).write(to: URL(fileURLWithPath: file))
        let report = try await installer.install(from: PackIndexSource(site.url))
        #expect(report.fetches.first { $0.pack == posters.name }?.method == .sparse)
        let reader = try PosterPackReader(path: file, posters: posters)
        let cache = try InstalledCache(directory: installer.cacheDirectory)
        let changed = site.dists.ids[5]
        let hash = sha256Hex(site.dists.served(changed))
        for size in PosterInstallTests.sizes {
            #expect(
                try fileBytes(try #require(cache.posterPath(forExercise: changed, size: size)))
                    == reader.poster(size: size, gifSHA256: hash))
        }
    }

    @Test func postersTheCacheHoldsThatTheNewCatalogGivesOtherwiseFallBackToTheWholePack() async throws {
        let site = try await Site.start(count: 20)
        defer { site.stop() }
        let sparse = site.installer("sparse")
        let whole = site.installer("whole", sparse: false)
        _ = try await sparse.install(from: PackIndexSource(site.url))
        _ = try await whole.install(from: PackIndexSource(site.url))

        // As if the installed poster of an unchanged GIF had been made by another builder: other
        // bytes of the same length, recorded under their own SHA-256.
        let directory = URL(fileURLWithPath: sparse.cacheDirectory).resolvingSymlinksInPath().path
        var manifest = try #require(try InstallManifest.read(directory: directory))
        let kept = site.dists.ids[1]
        let hash = try #require(manifest.exercises[kept] ?? nil)
        let key = InstallManifest.posterKey(size: PosterInstallTests.sizes[0], gifSHA256: hash)
        let posterFile = try #require(try InstalledCache(directory: sparse.cacheDirectory).posterPath(forExercise: kept, size: PosterInstallTests.sizes[0]))
        var other = try fileBytes(posterFile)
        other[other.count - 2] ^= 0x55
        try Data(other).write(to: URL(fileURLWithPath: posterFile))
        manifest.posters?[key] = sha256Hex(other)
        try Data(try manifest.encoded()).write(to: URL(fileURLWithPath: "\(directory)/\(InstallManifest.fileName)"))

        let v2 = try await site.upgrade(position: 9, seed: 24)
        let posters = try #require(v2.posters)
        let report = try await sparse.install(from: PackIndexSource(site.url))
        let fetch = try #require(report.fetches.first { $0.pack == posters.name })
        #expect(fetch.method == .wholePack && fetch.fallbackReason?.contains("differ from the new posters pack's") == true, "\(fetch)")
        #expect(fetch.bytesFetched > posters.bytes, "the ranges fetched first count too")
        _ = try await whole.install(from: PackIndexSource(site.url))
        #expect(try cacheContents(sparse.cacheDirectory) == cacheContents(whole.cacheDirectory))
    }

    @Test func thePostersPlanTakesTheCatalogAndTheMissingPostersAndWeighsTheWholeFile() async {
        func hash(_ n: Int) -> String { String(repeating: String(n), count: 64) }
        func poster(_ n: Int, at offset: Int64) -> EntryLocation {
            EntryLocation(path: PosterPackDescription.path(size: 80, sha256: hash(n)), size: 900, frameOffset: offset, frameLength: 600)
        }
        let posters = PosterPackDescription(
            name: "all-posters", version: 2, file: "packs/all-posters-v2.tar.zst", bytes: 20_000, sha256: hash(0),
            entryCount: 4, uncompressedBytes: 40_000, contentDigest: hash(9), sizes: [80],
            catalog: EntryLocation(path: "catalog.json", size: 500, frameOffset: 0, frameLength: 300),
            posters: [poster(1, at: 300), poster(2, at: 900), poster(3, at: 10_000)])
        var settings = SparseUpgradeSettings()
        settings.coalesceGap = 100
        settings.requestOverheadBytes = 10
        let held = poster(2, at: 900).path

        let plan = SparseUpgradePlanner.plan(posters: posters, available: [held], settings: settings)
        #expect(plan.pack == "all-posters" && plan.fetchedGIFs.isEmpty && plan.reusedFrames == 1)
        #expect(plan.fetchedPaths == [poster(1, at: 300).path, poster(3, at: 10_000).path])
        #expect(plan.ranges.map(\.bytes) == [0...899, 10_000...10_599], "the catalog and the adjacent poster in one range")
        #expect(plan.frameBytes == 1500 && plan.estimatedCost == 1520 && plan.isCheaperThanWholePack)
        settings.requestOverheadBytes = 10_000
        #expect(!SparseUpgradePlanner.plan(posters: posters, available: [held], settings: settings).isCheaperThanWholePack)
    }

    /// `bytes=a-b` → a...b.
    static func bounds(_ range: String) -> ClosedRange<Int64>? {
        guard range.hasPrefix("bytes=") else { return nil }
        let parts = range.dropFirst(6).split(separator: "-")
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first <= last else { return nil }
        return first...last
    }
}

extension ServedUpgradeDist {
    /// An installer with posters; `sparse: false` always downloads whole files.
    fileprivate func installer(_ name: String, sparse: Bool = true) -> PackInstaller {
        var installer = PackInstaller(cacheDirectory: dists.workspace.file("\(name)/gifs"))
        installer.withPosters = true
        installer.sparseUpgrades.isEnabled = sparse
        return installer
    }

    /// v2: the GIF of `ids[position]` replaced by a new one, built with posters and published (the
    /// index gets a later mtime than the one it replaces: ``UpgradeDist/publish()``); returns the
    /// new pack's description.
    fileprivate func upgrade(position: Int, seed: UInt64) async throws -> PackDescription {
        dists.server.replaceGIF(id: dists.ids[position], with: try UpgradeDist.newGIF(seed: seed))
        try await PosterInstallTests.buildAndPublish(dists)
        return try #require(try dists.index().packs.first)
    }
}

import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackFormat
import GifPackIndexReader

@Suite("Client: sparse upgrades by byte range, against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
struct SparseUpgradeTests {
    @Test func anUpgradeAfterOnePercentChangedFetchesOnlyTheNewFramesAndMatchesAWholeInstall() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 100)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let sparseCache = dists.workspace.file("sparse/gifs")
        let wholeCache = dists.workspace.file("whole/gifs")
        let sparse = PackInstaller(cacheDirectory: sparseCache)
        var whole = PackInstaller(cacheDirectory: wholeCache)
        whole.sparseUpgrades.isEnabled = false

        let first = try await sparse.install(from: PackIndexSource(url))
        #expect(first.fetches.map(\.method) == [.wholePack])
        #expect(first.fetches.first?.fallbackReason?.contains("no previous generation") == true)
        _ = try await whole.install(from: PackIndexSource(url))
        let v1 = try #require(try dists.index().packs.first)

        // v2: one GIF in a hundred changes.
        let changed = dists.ids[42]
        dists.server.replaceGIF(id: changed, with: try UpgradeDist.newGIF(seed: 1))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)
        #expect(v2.version == 2)
        let newHashes = Set(v2.gifs.map(\.sha256)).subtracting(v1.gifs.map(\.sha256))
        #expect(newHashes.count == 1)

        let mark = try await nginx.mark()
        let report = try await sparse.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)

        let fetch = try #require(report.fetches.first)
        #expect(fetch.method == .sparse && fetch.framesFetched == 1 && fetch.fallbackReason == nil)
        #expect(report.changed == [changed])
        let newFrames = v2.gifs.filter { newHashes.contains($0.sha256) }.reduce(Int64(0)) { $0 + $1.location.frameLength }
        let ideal = dists.indexBytes + v2.catalog.frameLength + newFrames
        let fetched = lines.reduce(Int64(0)) { $0 + $1.bodyBytes }
        #expect(Double(fetched) <= 1.05 * Double(ideal), "fetched \(fetched) bytes for \(ideal): \(lines)")
        #expect(lines.count <= newHashes.count + 2, "\(lines)")
        let ranges = lines.filter { $0.path == "/\(v2.file)" }
        #expect(!ranges.isEmpty && ranges.allSatisfy { $0.status == 206 && $0.range != nil && $0.range?.contains(",") == false })
        #expect(fetch.bytesFetched == ranges.reduce(0) { $0 + $1.bodyBytes })
        #expect(fetch.wholePackBytes == v2.bytes && fetch.bytesFetched * 10 < v2.bytes)
        #expect(report.bytesDownloaded == fetch.bytesFetched)

        // The same upgrade by whole download installs byte-identical files.
        let wholeReport = try await whole.install(from: PackIndexSource(url))
        #expect(wholeReport.fetches.map(\.method) == [.wholePack] && wholeReport.fetches.first?.fallbackReason == nil)
        #expect(try cacheContents(sparseCache) == cacheContents(wholeCache))
        #expect(try fileBytes("\(sparseCache)/\(changed).gif") == dists.served(changed))
        #expect(DirectoryListing.names("\(sparseCache).d/downloads").isEmpty)
    }

    @Test func anExerciseWhoseGIFMovedToAHashTheCacheHoldsCostsNoGIFBytes() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 30)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let cache = dists.workspace.file("moved")
        let installer = PackInstaller(cacheDirectory: cache)
        _ = try await installer.install(from: PackIndexSource(url))

        // v2: exercise a now shows exercise b's GIF, which the cache already holds.
        let ids = dists.ids
        let a = ids[3]
        let b = try #require(ids.first { dists.served($0) != dists.served(a) && !dists.served($0).isEmpty })
        dists.server.replaceGIF(id: a, with: dists.served(b))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)

        let mark = try await nginx.mark()
        let report = try await installer.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)

        #expect(report.fetches.first?.method == .sparse && report.fetches.first?.framesFetched == 0)
        #expect(report.changed == [a] && report.gifsWritten == 0)
        let packRequests = lines.filter { $0.path == "/\(v2.file)" }
        #expect(packRequests.count == 1 && lines.count == 2, "\(lines)")
        #expect(packRequests.first?.range == "bytes=0-\(v2.catalog.frameLength - 1)")
        #expect(packRequests.first?.bodyBytes == v2.catalog.frameLength)
        #expect(try fileBytes("\(cache)/\(a).gif") == dists.served(b))
    }

    @Test func aServerThatIgnoresRangeGetsWholePackDownloadsThroughTheCommandLine() async throws {
        let dists = try await UpgradeDist.make(count: 30)
        defer { dists.server.stop() }
        try dists.publish()
        let nginx = try await NginxServer.start(root: dists.site, ignoreRanges: true)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let cache = dists.workspace.file("norange")

        let first = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache])
        #expect(first.status == 0, "\(first.error)")
        #expect(ClientCommandTests.text(first.output).contains("whole pack") && ClientCommandTests.text(first.output).contains("no previous generation"))

        let changed = dists.ids[7]
        dists.server.replaceGIF(id: changed, with: try UpgradeDist.newGIF(seed: 2))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)
        let mark = try await nginx.mark()
        let second = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache])
        let lines = try await nginx.log(since: mark)

        #expect(second.status == 0, "\(second.error)")
        let output = ClientCommandTests.text(second.output)
        #expect(output.contains("fetch all v2: whole pack") && output.contains("not sparse: the server ignores Range requests"), "\(output)")
        let packRequests = lines.filter { $0.path == "/\(v2.file)" }
        #expect(packRequests.first?.range != nil && packRequests.first?.status == 200)
        #expect(packRequests.last?.range == nil && packRequests.last?.status == 200 && packRequests.last?.bodyBytes == v2.bytes)
        for id in dists.ids where !dists.served(id).isEmpty {
            #expect(try fileBytes("\(cache)/\(id).gif") == dists.served(id), "\(id)")
        }
    }

    @Test func aPlanCostlierThanTheWholePackFallsBackToIt() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 12)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        var installer = PackInstaller(cacheDirectory: dists.workspace.file("costly"))
        _ = try await installer.install(from: PackIndexSource(url))
        dists.server.replaceGIF(id: dists.ids[1], with: try UpgradeDist.newGIF(seed: 3))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)

        installer.sparseUpgrades.requestOverheadBytes = v2.bytes
        let mark = try await nginx.mark()
        let report = try await installer.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)

        #expect(report.fetches.first?.method == .wholePack)
        #expect(report.fetches.first?.fallbackReason?.contains("costs more than the whole pack") == true)
        #expect(lines.filter { $0.path == "/\(v2.file)" }.map(\.range) == [nil])
    }

    @Test func aRangeCutShortIsAskedForAgain() async throws {
        let dists = try await UpgradeDist.make(count: 30)
        defer { dists.server.stop() }
        try dists.publish()
        let files = try ClientStaticFileServer(root: dists.site)
        defer { files.stop() }
        let url = files.baseURL + "/index.json"
        let cache = dists.workspace.file("dropped")
        let installer = PackInstaller(cacheDirectory: cache)
        _ = try await installer.install(from: PackIndexSource(url))
        let changed = dists.ids[11]
        dists.server.replaceGIF(id: changed, with: try UpgradeDist.newGIF(seed: 4))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)
        files.cutShort(path: "/\(v2.file)", afterBytes: 100, times: 1)

        let report = try await installer.install(from: PackIndexSource(url))

        let ranges = files.requests.filter { $0.path == "/\(v2.file)" }.map(\.range)
        #expect(ranges.count >= 2 && ranges[0] == ranges[1] && ranges[0]?.hasPrefix("bytes=0-") == true, "\(ranges)")
        #expect(report.fetches.first?.method == .sparse)
        #expect((report.fetches.first?.requests ?? 0) == ranges.count)
        #expect(try fileBytes("\(cache)/\(changed).gif") == dists.served(changed))
    }

    /// A CDN whose edges do not all honour Range: the first range (the catalog's) gets its 206, a
    /// later one a 200 while the others are still in flight. That is the documented fallback, the
    /// whole pack, with either transport, never "the request was cancelled".
    @Test func aRangeAnswered200MidUpgradeFallsBackToTheWholePackWithBothTransports() async throws {
        let dists = try await UpgradeDist.make(count: 30)
        defer { dists.server.stop() }
        try dists.publish()
        let curl = try HTTPClient()
        defer { curl.shutdown() }
        let transports: [(name: String, client: any HTTPTransport)] = [("curl", curl), ("URLSession", URLSessionTransport())]
        let installers = transports.map { transport in
            var installer = PackInstaller(cacheDirectory: dists.workspace.file("mixed-\(transport.name)/gifs"))
            installer.sparseUpgrades.coalesceGap = 1  // every frame not touching another in a range of its own
            return installer
        }
        let v1Server = try ClientStaticFileServer(root: dists.site)
        for (transport, installer) in zip(transports, installers) {
            _ = try await installer.install(from: PackIndexSource(v1Server.baseURL + "/index.json"), client: transport.client)
        }
        v1Server.stop()
        let v1 = try #require(try dists.index().packs.first)
        for (seed, position) in [2, 9, 16, 23, 28].enumerated() {
            dists.server.replaceGIF(id: dists.ids[position], with: try UpgradeDist.newGIF(seed: 40 + UInt64(seed)))
        }
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)
        let plan = SparseUpgradePlanner.plan(
            pack: v2, available: Set(v2.gifs.map(\.sha256)).intersection(v1.gifs.map(\.sha256)),
            settings: installers[0].sparseUpgrades)
        // The catalog's range, the one answered 200, and at least one more in flight meanwhile.
        try #require(plan.ranges.count >= 3 && plan.isCheaperThanWholePack, "\(plan.ranges.map(\.bytes))")

        for (transport, installer) in zip(transports, installers) {
            let edge = try ClientStaticFileServer(root: dists.site)
            defer { edge.stop() }
            edge.honourOnlyTheFirstRange(path: "/\(v2.file)")
            let report = try await installer.install(from: PackIndexSource(edge.baseURL + "/index.json"), client: transport.client)

            let fetch = try #require(report.fetches.first)
            #expect(fetch.method == .wholePack && fetch.fallbackReason?.contains("ignores Range") == true, "\(transport.name): \(fetch)")
            // One request for the whole pack, after the ranges (a range still in flight when the
            // fallback starts may be logged after it).
            let ranges = edge.requests.filter { $0.path == "/\(v2.file)" }.map(\.range)
            let whole = ranges.firstIndex { $0 == nil }
            #expect(
                ranges.count >= 3 && ranges.first??.hasPrefix("bytes=0-") == true && ranges.dropFirst().first! != nil
                    && ranges.filter { $0 == nil }.count == 1 && (whole ?? 0) >= 2, "\(transport.name): \(ranges)")
            for id in dists.ids where !dists.served(id).isEmpty {
                #expect(try fileBytes("\(installer.cacheDirectory)/\(id).gif") == dists.served(id), "\(transport.name) \(id)")
            }
            #expect(!DirectoryListing.names(installer.downloadDirectory).contains { $0.hasSuffix(".sparse") })
        }
    }

    @Test func badRangeAnswersAndABadFrameAreRefusedLeavingTheCacheAsItWas() async throws {
        let dists = try await UpgradeDist.make(count: 30)
        defer { dists.server.stop() }
        try dists.publish()
        let files = try ClientStaticFileServer(root: dists.site)
        defer { files.stop() }
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let cache = dists.workspace.file("refusing")
        let installer = PackInstaller(cacheDirectory: cache)
        _ = try await installer.install(from: PackIndexSource(nginx.baseURL + "/index.json"))
        let snapshot = try treeSnapshot(cache)
        let changed = dists.ids[5]
        dists.server.replaceGIF(id: changed, with: try UpgradeDist.newGIF(seed: 5))
        try await dists.build()
        try dists.publish()
        let v2 = try #require(try dists.index().packs.first)
        let packPath = "\(dists.site)/\(v2.file)"
        let good = try fileBytes(packPath)

        func refusal(_ url: String) async -> String {
            do {
                _ = try await installer.install(from: PackIndexSource(url))
                return "installed"
            } catch {
                return "\(error)"
            }
        }

        // A 206 for other bytes than those asked for.
        files.shiftRanges(path: "/\(v2.file)")
        let shifted = await refusal(files.baseURL + "/index.json")
        #expect(shifted.contains("Content-Range") && shifted.contains("not the bytes asked for"), "\(shifted)")
        #expect(try treeSnapshot(cache) == snapshot)

        // The pack on the server is not the one the index describes (a 416 is judged in
        // rangeAnswersAreJudgedByStatusContentRangeSizeAndETag and met by the lazy cache's test).
        for wrong in [good + [1, 2, 3], Array(good.prefix(good.count / 2))] {
            try Data(wrong).write(to: URL(fileURLWithPath: packPath))
            let changedPack = await refusal(nginx.baseURL + "/index.json")
            #expect(
                changedPack.contains("holds \(wrong.count) bytes, the index says \(good.count)") && changedPack.contains("index changed"),
                "\(changedPack)")
            #expect(try treeSnapshot(cache) == snapshot)
        }

        // A frame that fails its check.
        let index = try dists.index()
        let victim = try #require(index.packs.first?.gifs.first { $0.sha256 == sha256Hex(dists.served(changed)) })
        var bad = good
        bad[Int(victim.location.frameOffset + victim.location.frameLength / 2)] ^= 0x55
        try Data(bad).write(to: URL(fileURLWithPath: packPath))
        let corrupt = await refusal(nginx.baseURL + "/index.json")
        #expect(corrupt.contains("refused") && corrupt.contains(victim.location.path), "\(corrupt)")
        #expect(try treeSnapshot(cache) == snapshot)
        #expect(DirectoryListing.names("\(cache).d/downloads").isEmpty)

        // Once the server is right again the upgrade goes through.
        try Data(good).write(to: URL(fileURLWithPath: packPath))
        let report = try await installer.install(from: PackIndexSource(nginx.baseURL + "/index.json"))
        #expect(report.fetches.first?.method == .sparse)
        #expect(try fileBytes("\(cache)/\(changed).gif") == dists.served(changed))
    }

    @Test(.computes) func thePlannerCoalescesCloseFramesAndWeighsTheWholePack() {
        func hash(_ n: Int) -> String { String(repeating: String(n), count: 64) }
        func gif(_ n: Int, at offset: Int64) -> GIFEntry {
            GIFEntry(sha256: hash(n), location: EntryLocation(path: "gifs/\(hash(n)).gif", size: 40, frameOffset: offset, frameLength: 50))
        }
        let pack = PackDescription(
            name: "all", version: 2, file: "packs/all-v2.tar.zst", bytes: 10_000, sha256: hash(0), entryCount: 5,
            uncompressedBytes: 20_000, contentDigest: hash(9),
            catalog: EntryLocation(path: "catalog.json", size: 300, frameOffset: 0, frameLength: 100),
            gifs: [gif(1, at: 100), gif(2, at: 150), gif(3, at: 1000), gif(4, at: 5000)], exercises: [])
        var settings = SparseUpgradeSettings()
        settings.coalesceGap = 100
        settings.requestOverheadBytes = 10

        let plan = SparseUpgradePlanner.plan(pack: pack, available: [hash(2)], settings: settings)
        #expect(plan.ranges.map(\.bytes) == [0...149, 1000...1049, 5000...5049])
        #expect(plan.ranges[0].entries.map(\.frameOffset) == [0, 100])
        #expect(plan.fetchedGIFs == [hash(1), hash(3), hash(4)] && plan.reusedGIFs == 1)
        #expect(plan.frameBytes == 250 && plan.bytes == 250 && plan.estimatedCost == 280 && plan.isCheaperThanWholePack)

        settings.coalesceGap = 1000
        let merged = SparseUpgradePlanner.plan(pack: pack, available: [hash(2)], settings: settings)
        #expect(merged.ranges.map(\.bytes) == [0...1049, 5000...5049])
        #expect(merged.bytes == 1100 && merged.frameBytes == 250)

        settings.requestOverheadBytes = 5000
        #expect(!SparseUpgradePlanner.plan(pack: pack, available: [], settings: settings).isCheaperThanWholePack)
        #expect(SparseUpgradePlanner.plan(pack: pack, available: Set((1...4).map(hash)), settings: settings).ranges.map(\.bytes) == [0...99])
    }

    @Test(.computes) func rangeAnswersAreJudgedByStatusContentRangeSizeAndETag() {
        let pack = PackDescription(
            name: "all", version: 1, file: "packs/all-v1.tar.zst", bytes: 1000, sha256: String(repeating: "a", count: 64),
            entryCount: 1, uncompressedBytes: 2000, contentDigest: String(repeating: "b", count: 64),
            catalog: EntryLocation(path: "catalog.json", size: 10, frameOffset: 0, frameLength: 100), gifs: [], exercises: [])
        func head(_ status: Int, _ fields: [(String, String)]) -> HTTPResponseHead {
            HTTPResponseHead(status: status, httpVersion: "1.1", headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }))
        }
        func judge(_ head: HTTPResponseHead, body: Int64 = 100, etag: String? = nil) -> RangeAnswer {
            RangeAnswer.judge(head, bodyBytes: body, asked: 100...199, pack: pack, url: "u", etag: etag)
        }
        func reason(_ answer: RangeAnswer) -> String {
            if case .refused(let error) = answer { return error.description }
            return "not refused"
        }
        #expect(judge(head(206, [("Content-Range", "bytes 100-199/1000"), ("ETag", "\"x\"")])) == .partial(etag: "\"x\""))
        #expect(judge(head(200, [])) == .rangeIgnored)
        #expect(reason(judge(head(206, [("Content-Range", "bytes 101-200/1000")]))).contains("not the bytes asked for"))
        #expect(reason(judge(head(206, [("Content-Range", "bytes 100-199/1001")]))).contains("the index says 1000"))
        #expect(reason(judge(head(206, []))).contains("no valid Content-Range"))
        #expect(reason(judge(head(206, [("Content-Range", "bytes 100-199/1000")]), body: 99)).contains("carried 99 bytes"))
        #expect(reason(judge(head(206, [("Content-Range", "bytes 100-199/1000"), ("ETag", "\"y\"")]), etag: "\"x\"")).contains("changed while"))
        #expect(reason(judge(head(412, []))).contains("If-Match failed"))
        #expect(reason(judge(head(416, [("Content-Range", "bytes */900")]))).contains("it holds 900 bytes"))
        #expect(RangeAnswer.ifMatch("W/\"x\"") == nil && RangeAnswer.ifMatch("\"x\"") == "\"x\"")
    }

    @Test(.computes) func contentRangeFieldsParseStrictly() {
        #expect(HTTPContentRange("bytes 0-99/1000") == HTTPContentRange(range: 0...99, completeLength: 1000))
        #expect(HTTPContentRange("bytes 5-5/*") == HTTPContentRange(range: 5...5, completeLength: nil))
        #expect(HTTPContentRange("bytes */1000") == HTTPContentRange(range: nil, completeLength: 1000))
        #expect(HTTPContentRange("bytes 0-99/1000")?.description == "bytes 0-99/1000")
        for bad in ["bytes 9-1/100", "bytes 0-100/100", "items 0-1/2", "bytes 0-1", "bytes -1-2/5", "bytes */*", "bytes 0-1/2x", ""] {
            #expect(HTTPContentRange(bad) == nil, "\(bad)")
        }
    }
}

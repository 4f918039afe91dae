import ExerciseDBFixture
import Foundation
@testable import GifPackClient
import GifPackFormat
import GifPackIndexReader
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// The client picks the format. Over loopback HTTP against a format 1.4 dist (a
/// GIF pack and its WebP rendition), an app that prefers WebP installs and fetches only the WebP
/// pack, gets the GIFs the WebP pack lists as GIFs, and is told each image's format; a WebP whose
/// container is malformed is refused before it is served, whichever way it is read.
@Suite("Client: an app that prefers WebP gets the WebP packs only", .tags(.nginx), .ownThread, .timeLimit(.minutes(5)))
struct WebPClientTests {
    /// Exercise 0001's WebP pack lists its GIF (its WebP did not beat it); 0003 has no GIF at all.
    static func dist(_ workspace: TemporaryDirectory) throws -> FormatDist {
        try FormatDist.write(to: workspace.file("dist"), count: 5, noGIF: [3], gifStandsIn: [1])
    }

    @Test func anInstallThatPrefersWebPFetchesOnlyTheWebPPackAndNamesEachFileByItsFormat() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try Self.dist(workspace)
        let server = try ClientStaticFileServer(root: dist.directory)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"

        var installer = PackInstaller(cacheDirectory: workspace.file("installed"))
        installer.formats = [.webp, .gif]
        let report = try await installer.install(from: PackIndexSource(url))
        #expect(report.packs.map(\.name) == ["all.180.webp"])
        let packRequests = server.requests.map(\.path).filter { $0.hasPrefix("/packs/") }
        #expect(packRequests == ["/\(dist.webpPack.file)"], "\(server.requests.map(\.path))")

        let cache = try InstalledCache(directory: installer.cacheDirectory)
        #expect(cache.manifest.formats == [.webp, .gif] && cache.manifest.formatVersion == .withFormats)
        for id in dist.ids {
            guard let image = dist.webpPackImages[id] ?? nil else {
                #expect(cache.gifPath(forExercise: id) == nil, "\(id) has no GIF")
                continue
            }
            let path = try #require(cache.gifPath(forExercise: id))
            #expect(path.hasSuffix(image.format == .webp ? "/\(id).webp" : "/\(id).gif"), "\(path)")
            #expect(try fileBytes(path) == image.bytes, "\(id)")
            #expect(cache.manifest.imageFormat(for: image.sha256) == (image.format ?? .gif))
        }
        #expect(dist.webpPackImages["0001"]??.format == nil, "the stand-in is the GIF itself")
        // Placeholders stay the GIFs': a WebP stands on its exercise's GIF.
        for id in dist.ids {
            guard let gif = dist.gifs[id] ?? nil, let image = dist.webpPackImages[id] ?? nil else { continue }
            #expect(cache.manifest.placeholderGIF(for: image.sha256) == gif.sha256, "\(id)")
        }

        // The same install again: unchanged. A GIF-only install of the same cache is not: it fetches the GIF pack.
        #expect(try await installer.install(from: PackIndexSource(url)).isUnchanged)
        let gifOnly = PackInstaller(cacheDirectory: installer.cacheDirectory)
        let before = server.requests.count
        let back = try await gifOnly.install(from: PackIndexSource(url))
        #expect(!back.isUnchanged && back.packs.map(\.name) == ["all"])
        #expect(server.requests.dropFirst(before).map(\.path).filter { $0.hasPrefix("/packs/") } == ["/\(dist.gifPack.file)"])
        let gifCache = try InstalledCache(directory: installer.cacheDirectory)
        #expect(gifCache.manifest.formats == nil && gifCache.manifest.imageFormats == nil)
        for id in dist.ids { #expect(gifCache.gifPath(forExercise: id).map { $0.hasSuffix(".gif") } ?? true) }
    }

    @Test func anUpgradeOfAWebPPackFetchesOnlyTheChangedWebPsFrameByRange() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try FormatDist.write(to: workspace.file("dist"), count: 12, gifStandsIn: [1])
        let server = try ClientStaticFileServer(root: dist.directory)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"
        var installer = PackInstaller(cacheDirectory: workspace.file("installed"))
        installer.formats = [.webp, .gif]
        installer.sparseUpgrades.requestOverheadBytes = 0  // the ranges win however small the pack
        _ = try await installer.install(from: PackIndexSource(url))
        let kept = "0004", changed = "0007"
        let before = try fileIdentity("\(installer.cacheDirectory)/\(kept).webp")

        // v2 of the WebP pack: exercise 0007 gets another WebP (of its GIF's size and timing).
        let old = try #require(dist.webpPackImages[changed] ?? nil)
        let redrawn = HandImage.webp(
            width: 180, height: 180, frames: old.frames, delay: old.durationMilliseconds / old.frames,
            loopCount: old.loopCount ?? 0, seed: 77)
        let rows = dist.ids.map { id in (id, id == changed ? redrawn : (dist.webpPackImages[id] ?? nil)) }
        var index = dist.index
        let v2 = try HandPack(name: "all.180.webp", version: 2, resolution: 180, format: .webp, exercises: rows)
            .write(into: dist.directory, source: index.source)
        index.formatPacks = [v2]
        try dist.rewrite(index)

        let mark = server.requests.count
        let report = try await installer.install(from: PackIndexSource(url))
        let fetch = try #require(report.fetches.first)
        #expect(report.fetches.count == 1 && fetch.method == .sparse && fetch.framesFetched == 1, "\(report.fetches)")
        #expect(report.changed == [changed])
        let requests = server.requests.dropFirst(mark).filter { $0.path.hasPrefix("/packs/") }
        #expect(requests.allSatisfy { $0.path == "/\(v2.file)" && $0.range != nil }, "\(requests)")
        #expect(try fileIdentity("\(installer.cacheDirectory)/\(kept).webp") == before, "an unchanged WebP keeps its file")
        #expect(try fileBytes("\(installer.cacheDirectory)/\(changed).webp") == redrawn.bytes)
    }

    @Test func theLoaderAnswersEachImageWithItsFormatFromEveryTierAndFetchesNoGIFPack() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try Self.dist(workspace)
        let server = try ClientStaticFileServer(root: dist.directory)
        defer { server.stop() }
        let url = try #require(URL(string: server.baseURL + "/index.json"))
        var configuration = GIFLoader.Configuration()
        configuration.formats = [.webp, .gif]
        configuration.memoryCountLimit = 0  // every answer from the tier below memory
        let loader = try GIFLoader(
            indexURL: url, cacheFolder: URL(fileURLWithPath: workspace.file("loader"), isDirectory: true),
            configuration: configuration)
        for id in dist.ids {
            let loaded = try await loader.gif(for: id)
            guard let image = dist.webpPackImages[id] ?? nil else {
                #expect(loaded == nil, "\(id)")
                continue
            }
            #expect(loaded?.tier == .network && loaded.map { [UInt8]($0.data) } == image.bytes, "\(id)")
            #expect(loaded?.format.imageFormat == (image.format ?? .gif) && loaded?.sha256 == image.sha256, "\(id)")
            // Again: from the lazy cache, the same format.
            let again = try await loader.gif(for: id)
            #expect(again?.tier == .lazyCache && again?.format == loaded?.format, "\(id)")
        }
        _ = try await loader.refresh()
        for id in dist.ids {
            guard let image = dist.webpPackImages[id] ?? nil else { continue }
            let installed = try await loader.gif(for: id)
            #expect(installed?.tier == .installed && installed?.format.imageFormat == (image.format ?? .gif), "\(id)")
            #expect(installed?.fileURL?.pathExtension == (image.format == .webp ? "webp" : "gif"))
            #expect(try await loader.gif(sha256: image.sha256)?.format.imageFormat == (image.format ?? .gif))
        }
        let requests = server.requests.map(\.path)
        #expect(!requests.contains("/\(dist.gifPack.file)"), "\(requests)")
        #expect(requests.contains("/\(dist.webpPack.file)"))

        // The lazy cache alone, preferring WebP: the WebP's bytes.
        let lazy = LazyGIFCache(directory: workspace.file("lazy"), indexURL: url.absoluteString, formats: [.webp, .gif])
        let webpID = try #require(dist.ids.first { (dist.webpPackImages[$0] ?? nil)?.format == .webp })
        #expect(try await lazy.gif(forExercise: webpID) == .gif(bytes: try #require(dist.webpPackImages[webpID] ?? nil).bytes, fromCache: false))
    }

    @Test func aWebPAskedForWhileTheRefreshDownloadsItsPackComesFromThatDownload() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try FormatDist.write(to: workspace.file("dist"), count: 24)
        // The packs dripped (about 3 s for the WebP pack): the refresh is still downloading when the GIF is asked for.
        var options = NginxServer.Options(root: dist.directory, packsLimitRate: 1024)
        options.ranges = true
        let nginx = try await NginxServer.start(options)
        defer { nginx.stop() }
        let early = try #require(dist.webpPack.gifs.min { $0.location.frameOffset < $1.location.frameOffset })
        #expect(early.format == .webp)
        let id = try #require(dist.webpPack.exercises.first { $0.gif == early.sha256 }?.id)
        var configuration = GIFLoader.Configuration()
        configuration.formats = [.webp, .gif]
        let loader = try GIFLoader(
            indexURL: try #require(URL(string: nginx.baseURL + "/index.json")),
            cacheFolder: URL(fileURLWithPath: workspace.file("app"), isDirectory: true), configuration: configuration)
        let mark = try await nginx.mark()
        let steps = GIFLoaderRefreshTests.Steps()
        let refresh = testTask { try await loader.refresh { steps.add($0) } }
        try await waitUntil { steps.all.contains { $0.stage == .fetching } }
        let gif = try #require(try await loader.gif(for: id))
        // The WebP, from the WebP pack's download as its follower handed it over, while the refresh still ran.
        #expect(gif.sha256 == early.sha256 && gif.format == .webp)
        #expect(gif.tier == .network && gif.fileURL == nil, "\(gif.tier)")
        #expect(!(try await refresh.value).isUnchanged)
        let lines = try await nginx.log(since: mark)
        #expect(lines.filter { $0.range != nil }.isEmpty, "no range request beside the download: \(lines)")
        #expect(lines.filter { $0.path.hasPrefix("/packs/") }.map(\.path) == ["/\(dist.webpPack.file)"], "\(lines)")
    }

    @Test func aMalformedWebPIsRefusedBeforeItIsServedByTheInstallTheLazyCacheAndCat() async throws {
        let workspace = try TemporaryDirectory()
        // A WebP whose one frame lies outside the canvas, its hash, size and catalog record all consistent.
        let bad = HandWebP.riff([
            HandWebP.vp8x(width: 180, height: 180, animation: true), HandWebP.anim(loopCount: 0),
            HandWebP.anmf(
                x: 100, y: 0, width: 180, height: 180, duration: 100,
                image: HandWebP.vp8l(width: 180, height: 180))
        ])
        let gif = try HandImage.gif(GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: 2, colors: 4, seed: 9))
        let badImage = HandImage(bytes: bad, format: .webp, width: 180, height: 180, frames: 1, durationMilliseconds: 100, loopCount: 0)
        let directory = workspace.file("dist")
        let source = SourceDescription(kind: "exercisedb-v1", baseURL: nil, resolution: 180, formats: [.gif, .webp])
        let all = try HandPack(name: "all", exercises: [("0000", gif)]).write(into: directory, source: source)
        let webp = try HandPack(name: "all.180.webp", resolution: 180, format: .webp, exercises: [("0000", badImage)])
            .write(into: directory, source: source)
        try PackIndex(generator: "hand", source: source, packs: [all], formatPacks: [webp]).encoded()
            .write(to: URL(fileURLWithPath: directory + "/index.json"))
        let server = try ClientStaticFileServer(root: directory)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"

        var installer = PackInstaller(cacheDirectory: workspace.file("installed"))
        installer.formats = [.webp, .gif]
        await #expect { try await installer.install(from: PackIndexSource(url)) } throws: { error in
            guard case PackClientError.rejected(let rejection) = error else { return false }
            return rejection.reason == .notAWebP && rejection.detail.contains("outside the 180x180 canvas")
        }
        #expect(!FileManager.default.fileExists(atPath: installer.cacheDirectory))

        let lazy = LazyGIFCache(directory: workspace.file("lazy"), indexURL: url, formats: [.webp, .gif])
        await #expect { try await lazy.gif(forExercise: "0000") } throws: { error in
            guard case PackClientError.rejected(let rejection) = error else { return false }
            return rejection.reason == .notAWebP
        }
        #expect(!(DirectoryListing.names(workspace.file("lazy") + "/gifs")).contains { $0.hasPrefix(badImage.sha256) })

        // The same index read in place (a local path): refused as well; the GIF-only view still serves the GIF.
        let local = LazyGIFCache(directory: workspace.file("lazy-local"), indexURL: directory + "/index.json", formats: [.webp, .gif])
        await #expect(throws: PackClientError.self) { try await local.gif(forExercise: "0000") }
        let plain = LazyGIFCache(directory: workspace.file("lazy-plain"), indexURL: url)
        #expect(try await plain.gif(forExercise: "0000") == .gif(bytes: gif.bytes, fromCache: false))
        // Verify lists it, naming the reason.
        let report = PackVerifier.verifyDirectory(directory)
        #expect(report.problems.contains { $0.reason == .notAWebP && $0.pack == "all.180.webp" }, "\(report.problems)")
    }

    @Test func verifyAndCatHandleBothFormats() async throws {
        let workspace = try TemporaryDirectory()
        let dist = try Self.dist(workspace)
        let report = PackVerifier.verifyDirectory(dist.directory)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.packs == 2 && report.gifs == dist.gifPack.gifs.count + dist.webpPack.gifs.count)
        #expect(PackVerifier.verifyPack("\(dist.directory)/\(dist.webpPack.file)").problems.isEmpty)

        let index = dist.directory + "/index.json"
        for id in dist.ids {
            let gif = try await ClientCommandTests.gifpack(["cat", index, id])
            let webp = try await ClientCommandTests.gifpack(["cat", "--format", "webp,gif", index, id])
            guard let image = dist.webpPackImages[id] ?? nil, let original = dist.gifs[id] ?? nil else {
                #expect(gif.status == 1 && webp.status == 1, "\(id)")
                continue
            }
            #expect(gif.status == 0 && gif.output == original.bytes, "\(id): \(gif.error)")
            #expect(webp.status == 0 && webp.output == image.bytes, "\(id): \(webp.error)")
            let fromPack = try await ClientCommandTests.gifpack(["cat", "\(dist.directory)/\(dist.webpPack.file)", id])
            #expect(fromPack.output == image.bytes, "\(id): \(fromPack.error)")
        }
        // inspect: a WebP pack's rows say each entry's format; a GIF pack's table has no such column.
        let inspected = ClientCommandTests.text(try await ClientCommandTests.gifpack(["inspect", "\(dist.directory)/\(dist.webpPack.file)"]).output)
        let header = try #require(inspected.split(separator: "\n").first)
        #expect(header.hasSuffix("format"), "\(inspected)")
        #expect(inspected.split(separator: "\n").contains { $0.hasPrefix("0000") && $0.hasSuffix("webp") }, "\(inspected)")
        #expect(inspected.split(separator: "\n").contains { $0.hasPrefix("0001") && $0.hasSuffix("gif") }, "\(inspected)")
        let gifTable = ClientCommandTests.text(try await ClientCommandTests.gifpack(["inspect", "\(dist.directory)/\(dist.gifPack.file)"]).output)
        #expect(!gifTable.contains("format"), "\(gifTable)")

        let unknown = try await ClientCommandTests.gifpack(["cat", "--format", "avif", index, dist.ids[0]])
        #expect(unknown.status == 2, "\(unknown.status) \(unknown.error)")
        #expect(unknown.error.contains("unknown format"))

        // install --format webp,gif from the local index: the WebPs, named .webp.
        let cache = workspace.file("cli-cache")
        let installed = try await ClientCommandTests.gifpack(["install", "--index", index, "--cache", cache, "--format", "webp,gif"])
        #expect(installed.status == 0, "\(installed.error)")
        let webpID = try #require(dist.ids.first { (dist.webpPackImages[$0] ?? nil)?.format == .webp })
        #expect(try fileBytes("\(cache)/\(webpID).webp") == (dist.webpPackImages[webpID] ?? nil)?.bytes)
    }
}

import ExerciseDBFixture
import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackFormat
import GifPackIndexReader

/// The client chooses renditions (format 1.3) by the size it shows a GIF at, against
/// a two-resolution dist (180 and 360 px, each GIF drawn at its size by the fixture) served by nginx.
@Suite("Client: renditions chosen by screen size, against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
struct RenditionClientTests {
    /// 6 exercises, the third without a GIF at any resolution, built at 180 and 360 px and published.
    static func site() async throws -> ServedUpgradeDist {
        try await UpgradeDist.servedByNginx(count: 6, noGIF: [2], resolutions: [180, 360])
    }

    /// The pack files of the published index: the 180 px one and the 360 px one.
    static func packFiles(_ dists: UpgradeDist) throws -> (first: String, rendition: String) {
        let index = try dists.index()
        let rendition = try #require(index.renditionPacks?.first)
        #expect(index.packs.map(\.name) == ["all"] && rendition.name == "all.360")
        return ("/\(index.packs[0].file)", "/\(rendition.file)")
    }

    @Test func theSmallestRenditionAtLeastTheViewsPixelsElseTheLargest() async throws {
        #expect(RenditionChoice.pixelSize(points: 60, scale: 3) == 180)
        #expect(RenditionChoice.pixelSize(points: 60.2, scale: 3) == 181)
        #expect(RenditionChoice.resolution(for: 181, among: [180, 360, 720, 1080]) == 360)
        #expect(RenditionChoice.resolution(for: 2000, among: [180, 360, 720, 1080]) == 1080)
        #expect(RenditionChoice.resolution(for: 1, among: [360, 180]) == 180)
        #expect(RenditionChoice.resolution(for: 100, among: []) == nil)

        let webSite = try await Self.site()
        defer { webSite.stop() }
        let (dists, url) = (webSite.dists, webSite.url)
        let withGIF = dists.ids.enumerated().filter { $0.offset != 2 }.map(\.element)
        // (points, scale) → the resolution every exercise with a GIF gets.
        let screens: [(Double, Double, Int)] = [(60, 2, 180), (60, 3, 180), (61, 3, 360), (100, 3, 360), (200, 3, 360), (375, 3, 360)]
        for (points, scale, expected) in screens {
            let pixels = RenditionChoice.pixelSize(points: points, scale: scale)
            let cache = LazyGIFCache(directory: dists.workspace.file("lazy-\(pixels)"), indexURL: url, preferredPixelSize: pixels)
            for id in withGIF {
                let served = try #require(dists.server.catalog.gifBytes(id: id, resolution: expected))
                #expect(try await cache.gif(forExercise: id) == .gif(bytes: served, fromCache: false), "\(points)pt@\(scale)x \(id)")
            }
            #expect(try await cache.gif(forExercise: dists.ids[2]) == .noGIF)
        }
        // Without a preferred size: the first resolution, as before renditions.
        let plain = LazyGIFCache(directory: dists.workspace.file("lazy-plain"), indexURL: url)
        #expect(try await plain.gif(forExercise: withGIF[0]) == .gif(bytes: dists.served(withGIF[0]), fromCache: false))

        // An exercise that lacks the 360 rendition (its row is null there) falls back to the largest it has.
        var index = try dists.index()
        let lacking = withGIF[1]
        var rendition = try #require(index.renditionPacks?.first)
        rendition.exercises = ExerciseRefList(rendition.exercises.map { ExerciseRef(id: $0.id, gif: $0.id == lacking ? nil : $0.gif) })
        index.renditionPacks = [rendition]
        #expect(RenditionChoice.pack(forExercise: lacking, in: index, pixels: 360)?.pack.name == "all")
        #expect(RenditionChoice.pack(forExercise: withGIF[0], in: index, pixels: 360)?.pack.name == "all.360")
        #expect(RenditionChoice.pack(forExercise: dists.ids[2], in: index, pixels: 360)?.pack.name == "all.360")
        let selection = RenditionSelection(chosen: index.packs, index: index, pixels: 360)
        #expect(selection.packs.map(\.name) == ["all", "all.360"])
        #expect(selection.taken?["all"] == [lacking])
        #expect(selection.unneededGIFs(of: index.packs[0]).count == index.packs[0].gifs.count - 1)
    }

    @Test func installingOneRenditionNeverDownloadsTheOthersBytesAndChecksAgainConditionally() async throws {
        let webSite = try await Self.site()
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let files = try Self.packFiles(dists)
        let index = try dists.index()

        for (pixels, wanted, other) in [(360, files.rendition, files.first), (180, files.first, files.rendition)] {
            let cache = dists.workspace.file("app-\(pixels)")
            var installer = PackInstaller(cacheDirectory: cache)
            installer.preferredPixelSize = pixels
            var mark = try await nginx.mark()
            let report = try await installer.install(from: PackIndexSource(url))
            var lines = try await nginx.log(since: mark)
            #expect(lines.contains { $0.path == wanted && $0.status == 200 }, "\(lines)")
            #expect(!lines.contains { $0.path == other }, "\(pixels) px: \(lines)")
            #expect(report.packs.map(\.name) == [pixels == 360 ? "all.360" : "all"])
            for (position, id) in dists.ids.enumerated() {
                let path = "\(cache)/\(id).gif"
                if position == 2 {
                    #expect(!FileManager.default.fileExists(atPath: path))
                } else {
                    #expect(try fileBytes(path) == dists.server.catalog.gifBytes(id: id, resolution: pixels), "\(id)")
                }
            }
            // The manifest says what was asked and where each GIF came from.
            let manifest = try #require(try InstallManifest.read(cacheDirectory: cache))
            #expect(manifest.formatVersion == .withRenditions && manifest.preferredPixelSize == pixels)
            #expect(manifest.packs.map(\.resolution) == [pixels] && manifest.packs[0].exercises == 6)
            #expect(manifest.exercises[dists.ids[2]] == .some(nil))
            // Placeholders stay the smallest rendition's: its BlurHash and colour, the installed GIF's size.
            let placeholders = try #require(try InstalledPlaceholders.read(directory: URL(fileURLWithPath: cache).resolvingSymlinksInPath().path))
            for id in dists.ids where id != dists.ids[2] {
                let first = try #require(index.packs[0].gifEntry(forExercise: id)?.placeholder)
                let hash = try #require(manifest.exercises[id] ?? nil)
                let installed = try #require(placeholders.gifs[hash])
                #expect(installed.blurHash == first.blurHash && installed.averageColor == first.averageColor)
                #expect(installed.width == pixels)
                #expect((manifest.placeholderGIFs?[hash] != nil) == (pixels == 360))
            }

            // Checked again: a conditional index request and nothing else.
            mark = try await nginx.mark()
            let again = try await installer.install(from: PackIndexSource(url))
            lines = try await nginx.log(since: mark)
            #expect(again.isUnchanged)
            #expect(lines.count == 1 && lines[0].status == 304, "\(lines)")
            // Another size is another install, not "unchanged".
            var other = installer
            other.preferredPixelSize = pixels == 360 ? 180 : 360
            #expect(try await other.install(from: PackIndexSource(url)).isUnchanged == false)
        }
    }

    @Test func aSparseUpgradeOfOneRenditionFetchesOnlyItsFramesAndLeavesTheOtherRenditionsFilesAlone() async throws {
        let webSite = try await Self.site()
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        var at360 = PackInstaller(cacheDirectory: dists.workspace.file("at360"))
        at360.preferredPixelSize = 360
        var at180 = PackInstaller(cacheDirectory: dists.workspace.file("at180"))
        at180.preferredPixelSize = 180
        _ = try await at360.install(from: PackIndexSource(url))
        _ = try await at180.install(from: PackIndexSource(url))
        let kept = dists.ids[4]
        let before360 = try fileIdentity("\(at360.cacheDirectory)/\(kept).gif")
        let before180 = try fileIdentity("\(at180.cacheDirectory)/\(kept).gif")

        // v2: one exercise gets a new GIF at 360 px (served for every resolution: the 180 rendition changes too).
        let changed = dists.ids[1]
        dists.server.replaceGIF(id: changed, with: try GIFSynthesizer.animatedGIF(width: 360, height: 360, frames: 2, colors: 4, seed: 77))
        try await dists.build()
        try dists.publish()
        let files = try Self.packFiles(dists)
        #expect(try dists.index().renditionPacks?.first?.version == 2)

        for (installer, wanted, other, before) in [(at360, files.rendition, files.first, before360), (at180, files.first, files.rendition, before180)] {
            let mark = try await nginx.mark()
            let report = try await installer.install(from: PackIndexSource(url))
            let lines = try await nginx.log(since: mark)
            let fetch = try #require(report.fetches.first)
            #expect(report.fetches.count == 1 && fetch.method == .sparse && fetch.framesFetched == 1, "\(report.fetches)")
            #expect(report.changed == [changed])
            #expect(!lines.contains { $0.path == other }, "\(lines)")
            #expect(lines.filter { $0.path == wanted }.allSatisfy { $0.status == 206 }, "\(lines)")
            #expect(try fileIdentity("\(installer.cacheDirectory)/\(kept).gif") == before, "an unchanged GIF keeps its file")
            #expect(try fileBytes("\(installer.cacheDirectory)/\(changed).gif") == dists.served(changed))
        }
    }

    @Test func anIndexWithoutRenditionsInstallsAndReadsAsBefore() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 5)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let index = try dists.index()
        #expect(index.formatVersion == .withoutRenditions && index.renditionPacks == nil)

        let plain = PackInstaller(cacheDirectory: dists.workspace.file("plain"))
        _ = try await plain.install(from: PackIndexSource(url))
        var sized = PackInstaller(cacheDirectory: dists.workspace.file("sized"))
        sized.preferredPixelSize = 720
        let mark = try await nginx.mark()
        let report = try await sized.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)
        #expect(report.packs.map(\.name) == ["all"] && report.fetches.map(\.method) == [.wholePack])
        #expect(lines.filter { $0.path.hasPrefix("/packs/") }.map(\.path) == ["/\(index.packs[0].file)"])
        for id in dists.ids { #expect(try fileBytes("\(sized.cacheDirectory)/\(id).gif") == dists.served(id)) }
        // The manifest of an install without renditions is the one written before them (1.2).
        let manifest = try #require(try InstallManifest.read(cacheDirectory: plain.cacheDirectory))
        #expect(manifest.formatVersion == .withoutRenditions && manifest.preferredPixelSize == nil && manifest.placeholderGIFs == nil)
        #expect(manifest.packs.allSatisfy { $0.resolution == nil })
        // The size asked for is recorded, so the next check is conditional on the same choice.
        #expect(try InstallManifest.read(cacheDirectory: sized.cacheDirectory)?.preferredPixelSize == 720)
        #expect(try await sized.install(from: PackIndexSource(url)).isUnchanged)

        let lazy = LazyGIFCache(directory: dists.workspace.file("lazy"), indexURL: url, preferredPixelSize: 720)
        #expect(try await lazy.gif(forExercise: dists.ids[0]) == .gif(bytes: dists.served(dists.ids[0]), fromCache: false))
    }

    @Test func theLoaderServesTheChosenRenditionFromEveryTier() async throws {
        let webSite = try await Self.site()
        defer { webSite.stop() }
        let (dists, url) = (webSite.dists, webSite.url)
        let id = dists.ids[0]
        let at360 = try #require(dists.server.catalog.gifBytes(id: id, resolution: 360))
        var configuration = GIFLoader.Configuration()
        configuration.preferredPixelSize = RenditionChoice.pixelSize(points: 100, scale: 3)
        configuration.withPosters = true
        let folder = URL(fileURLWithPath: dists.workspace.file("loader"), isDirectory: true)
        let loader = try GIFLoader(indexURL: try #require(URL(string: url)), cacheFolder: folder, configuration: configuration)
        let network = try #require(try await loader.gif(for: id))
        #expect(network.tier == .network && [UInt8](network.data) == at360)

        // The refresh installs the 360 rendition with the first resolution's posters and placeholders.
        let report = try await loader.refresh()
        #expect(report.install.packs.map(\.name) == ["all.360"] && report.install.posterPacks.map(\.name) == ["all-posters"])
        loader.emptyMemory()
        let installed = try #require(try await loader.gif(for: dists.ids[1]))
        #expect(installed.tier == .installed && [UInt8](installed.data) == dists.server.catalog.gifBytes(id: dists.ids[1], resolution: 360))
        let placeholder = try #require(try await loader.placeholder(for: id))
        let first = try #require(try dists.index().packs[0].gifEntry(forExercise: id)?.placeholder)
        #expect(placeholder.blurHash == first.blurHash && placeholder.width == 360)
        let poster = try #require(placeholder.posterURL)
        #expect(FileManager.default.fileExists(atPath: poster.path))
    }

    @Test func installAndCatTakeAResolutionAndVerifyDiffInspectKnowTheRenditionPacks() async throws {
        let webSite = try await Self.site()
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let files = try Self.packFiles(dists)
        let id = dists.ids[0]
        let at180 = try #require(dists.server.catalog.gifBytes(id: id, resolution: 180))
        let at360 = try #require(dists.server.catalog.gifBytes(id: id, resolution: 360))
        #expect(at180 != at360)

        let cache = dists.workspace.file("cli")
        let mark = try await nginx.mark()
        let install = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache, "--resolution", "300"])
        let lines = try await nginx.log(since: mark)
        #expect(install.status == 0, "\(install.error)")
        #expect(ClientCommandTests.text(install.output).contains("installed all.360 v1"), "\(ClientCommandTests.text(install.output))")
        #expect(!lines.contains { $0.path == files.first }, "\(lines)")
        #expect(try fileBytes("\(cache)/\(id).gif") == at360)
        let refused = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache, "--resolution", "0"])
        #expect(refused.status == 64 || refused.status == 2, "\(refused)")
        #expect(refused.error.contains("--resolution"))

        // cat: through the URL (one range request) and through a local index, the same choice.
        let local = dists.site + "/index.json"
        let cases: [([String], [UInt8])] = [
            (["cat", "--resolution", "360", "--index", url, "--cache", dists.workspace.file("gifs"), id], at360),
            (["cat", "--resolution", "200", local, id], at360),
            (["cat", "--resolution", "4000", local, id], at360),
            (["cat", "--resolution", "120", local, id], at180),
            (["cat", local, id], at180)
        ]
        for (arguments, expected) in cases {
            let cat = try await ClientCommandTests.gifpack(arguments)
            #expect(cat.status == 0 && cat.output == expected, "\(arguments): \(cat.error)")
        }

        // verify checks the rendition pack like the others (all, all.360, all-posters): a byte changed in it is a problem.
        let verified = try await ClientCommandTests.gifpack(["verify", dists.site])
        #expect(verified.status == 0 && ClientCommandTests.text(verified.output).contains("ok: verified 3 pack(s)"), "\(verified)")
        let damaged = dists.workspace.file("damaged")
        try FileManager.default.copyItem(atPath: dists.site, toPath: damaged)
        var bytes = try fileBytes(damaged + files.rendition)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: damaged + files.rendition))
        let problem = try await ClientCommandTests.gifpack(["verify", damaged])
        #expect(problem.status == 1 && ClientCommandTests.text(problem.output).contains("problem: pack all.360"), "\(problem)")

        // diff lists the rendition pack among the downloads; inspect names its resolution.
        var old = try dists.index()
        old.renditionPacks = nil
        let oldPath = dists.workspace.file("old-index.json")
        try old.encoded().write(to: URL(fileURLWithPath: oldPath))
        let diff = try await ClientCommandTests.gifpack(["diff", oldPath, local])
        #expect(diff.status == 0 && ClientCommandTests.text(diff.output).contains("all.360 (360 px) new -> v1"), "\(diff)")
        let inspect = try await ClientCommandTests.gifpack(["inspect", dists.site + files.rendition])
        #expect(ClientCommandTests.text(inspect.output).contains("in pack all.360 at 360 px"), "\(inspect)")
    }
}

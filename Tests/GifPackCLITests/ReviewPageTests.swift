import ExerciseDBFixture
import Foundation
import GifPackClient
import GifPackGIF
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The release-review page: `gifpack review OLD NEW --html DIR` and `gifpack build --review-html DIR`, looked at in
/// headless Chromium from `file://`: the counts match the diff, changed tiles show both versions,
/// removed and missing exercises are where they belong, hostile names stay text (no script runs),
/// and the page requests nothing outside its folder.
@Suite("Release review page in Chromium", .tags(.chromium, .nginx), .timeLimit(.minutes(10)))
struct ReviewPageTests {
    static let injected = "document.getElementById('no-script-marker').textContent='INJECTED'"
    static let hostileNames = ["<script>\(injected)</script>", "x\" onerror=\"\(injected)\" <img src=x onerror=\"\(injected)\">"]

    /// Two outputs of one fixture: v1 packs exercises 0..<12, v2 exercises 2..<16 (0, 1 removed;
    /// 12...15 added); 5, 6 and 7 get new GIFs (7 one of the wrong size); 3 and 13 have no GIF; 12
    /// and 5 get hostile names.
    struct Release {
        let server: FixtureServer
        let workspace: TemporaryDirectory
        let ids: [String]
        var v1: String { workspace.file("v1") }
        var v2: String { workspace.file("dist") }
    }

    static func manifest(_ server: FixtureServer, ids: ArraySlice<String>) -> String {
        rapidAPIManifest(
            server: server,
            packs: """
                packs:
                  - name: all
                    selector:
                      ids: [\(ids.map { "\"\($0)\"" }.joined(separator: ", "))]
                """, fetch: "  refresh_after: 0")
    }

    static func makeRelease() async throws -> Release {
        let server = try startFixture(count: 16) { $0.gifDimension = 180 }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let workspace = try TemporaryDirectory()
        server.setDefaultFault(.status(404), forExercise: ids[3])
        server.setDefaultFault(.status(404), forExercise: ids[13])
        let first = try await runBuild(manifest: manifest(server, ids: ids[0..<12]), workspace: workspace)
        #expect(first.exitStatus == .partial, "\(first.message)")
        try FileManager.default.copyItem(atPath: workspace.file("dist"), toPath: workspace.file("v1"))
        for (offset, id) in [ids[5], ids[6]].enumerated() {
            server.replaceGIF(id: id, with: try GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: 3, colors: 4, seed: 900 + UInt64(offset)))
        }
        server.replaceGIF(id: ids[7], with: try GIFSynthesizer.animatedGIF(width: 40, height: 40, frames: 2, colors: 3, seed: 7))
        server.renameExercise(id: ids[12], to: hostileNames[0])
        server.renameExercise(id: ids[5], to: hostileNames[1])
        let second = try await runBuild(manifest: manifest(server, ids: ids[2..<16]), workspace: workspace)
        #expect(second.exitStatus == .partial, "\(second.message)")
        return Release(server: server, workspace: workspace, ids: ids)
    }

    /// The elements of one section of a dumped page.
    static func section(_ id: String, in dom: String) throws -> String {
        let start = try #require(dom.range(of: "<section id=\"\(id)\""), "no section \(id)")
        let end = try #require(dom.range(of: "</section>", range: start.upperBound..<dom.endIndex))
        return String(dom[start.lowerBound..<end.upperBound])
    }

    static func count(_ id: String, in dom: String) throws -> Int {
        let match = try #require(try section(id, in: dom).firstMatch(of: /data-count=\x22(\d+)\x22/))
        return Int(match.1)!
    }

    /// The tile of exercise `id` in a section's markup.
    static func tile(_ id: String, in section: String) -> String? {
        guard let start = section.range(of: "data-id=\"\(id)\"") else { return nil }
        let end = section.range(of: "</article>", range: start.upperBound..<section.endIndex)?.upperBound ?? section.endIndex
        return String(section[start.lowerBound..<end])
    }

    static func review(_ arguments: [String]) async throws -> ProcessResult {
        let result = try await gifpackCLI(["review"] + arguments)
        #expect(result.status == 0, "\(result.error)")
        return result
    }

    @Test func theReviewShowsEveryChangeAsTheDiffCountsIt() async throws {
        try Chromium.requireInstalled()
        let release = try await Self.makeRelease()
        defer { release.server.stop() }
        let html = release.workspace.file("review")
        let printed = try await Self.review([release.v1, release.v2, "--html", html])
        #expect(printed.output.contains("4 added"), "\(printed.output)")
        let netLog = release.workspace.file("net.json")
        let dom = try await Chromium.dumpDOM("\(html)/index.html", netLog: netLog)

        let old = try readIndex("\(release.v1)/index.json")
        let new = try readIndex("\(release.v2)/index.json")
        let diff = IndexDiff(old: old, new: new)
        #expect(diff.added == Array(release.ids[12..<16]) && diff.removed == Array(release.ids[0..<2]))
        #expect(Set([release.ids[5], release.ids[6], release.ids[7]]).isSubset(of: diff.changed))
        #expect(try Self.count("added", in: dom) == diff.added.count)
        #expect(try Self.count("changed", in: dom) == diff.changed.count)
        #expect(try Self.count("removed", in: dom) == diff.removed.count)
        let missing = new.packs.flatMap { $0.exercises.filter { $0.gif == nil }.map(\.id) }
        #expect(Set(missing) == [release.ids[3], release.ids[13]])
        #expect(try Self.count("missing", in: dom) == missing.count)

        // Changed: before and after side by side, each its own GIF, written in the folder.
        let changed = try Self.section("changed", in: dom)
        for id in [release.ids[5], release.ids[6], release.ids[7]] {
            let tile = try #require(Self.tile(id, in: changed), "no changed tile for \(id)")
            let oldHash = try #require(old.packs[0].exercises.first { $0.id == id }?.gif)
            let newHash = try #require(new.packs[0].exercises.first { $0.id == id }?.gif)
            #expect(oldHash != newHash)
            #expect(tile.contains("data-side=\"before\"") && tile.contains("data-side=\"after\""))
            // Each side: its poster, and its GIF behind the poster's link (fetched on hover or click).
            #expect(
                tile.contains("<a class=\"play\" href=\"img/\(oldHash).gif\"") && tile.contains("<a class=\"play\" href=\"img/\(newHash).gif\""),
                "\(tile)")
            #expect(tile.matches(of: /<img class=\x22poster\x22 src=\x22img\/[0-9a-f]{64}\.gif\x22/).count == 2)
            #expect(FileManager.default.fileExists(atPath: "\(html)/img/\(oldHash).gif"))
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(html)/img/\(newHash).gif"))).count > 0)
        }
        // Removed under removed, missing under missing with the placeholder, the small GIF flagged.
        for id in release.ids[0..<2] { #expect(Self.tile(id, in: try Self.section("removed", in: dom)) != nil) }
        for id in [release.ids[3], release.ids[13]] {
            #expect(Self.tile(id, in: try Self.section("missing", in: dom))?.contains("no GIF: the app shows a placeholder") == true)
        }
        let flagged = try #require(Self.tile(release.ids[7], in: try Self.section("flagged", in: dom)))
        #expect(flagged.contains("40×40, not the 180 px rendition asked for"))

        // Hostile names are text: shown as written, no element carries a handler, no script ran
        // but the page's own.
        #expect(dom.contains("data-page-script=\"ran\""), "the page's own script did not run: the marker would prove nothing")
        #expect(dom.contains("<p id=\"no-script-marker\" class=\"marker\">no injected script ran</p>"))
        #expect(!dom.contains("INJECTED</p>"))
        #expect(dom.contains("&lt;script&gt;document.getElementById('no-script-marker')"))
        #expect(dom.contains("x\" onerror=\"document.getElementById"))
        #expect(dom.firstMatch(of: /<[a-zA-Z][^<>]*\son[a-z]+\s*=/) == nil, "an element with an event handler attribute")
        #expect(dom.matches(of: /<script/).count == 1)

        // Nothing leaves the folder: every reference is a page, the stylesheet or an image by hash,
        // and the browser's network log holds no request of the page.
        for match in dom.matches(of: /(?:src|href)=\x22([^\x22]*)\x22/) {
            let target = String(match.1)
            #expect(target.wholeMatch(of: /img\/[0-9a-f]{64}\.gif|[a-z]+-[0-9]+(-[0-9]+)?\.html|index\.html|review\.css|#[a-z]+/) != nil, "\(target)")
        }
        #expect(try Chromium.pageRequests(netLog: netLog) == [])

        let png = release.workspace.file("review.png")
        try await Chromium.screenshot("\(html)/index.html", to: png)
        #expect(try Chromium.pngSize(png) == (1280, 1600))
        #expect(try Data(contentsOf: URL(fileURLWithPath: png)).count > 20_000, "a screenshot of tiles, not a blank page")
    }

    /// The ids of the tiles of a page file, in order.
    static func tileIDs(_ path: String) throws -> [String] { tileIDs(in: try String(contentsOfFile: path, encoding: .utf8)) }

    static func tileIDs(in markup: String) -> [String] {
        markup.matches(of: /<article class=\x22tile [a-z]+\x22 data-id=\x22([^\x22]*)\x22/).map { String($0.1) }
    }

    /// The pages of a paged list (`gallery-1-1.html`, …, or `added-1.html`, …): the ids on each, every
    /// page but the last linking to the next.
    static func pagedIDs(_ html: String, prefix: String) throws -> [[String]] {
        var pages: [[String]] = []
        while FileManager.default.fileExists(atPath: "\(html)/\(prefix)\(pages.count + 1).html") {
            let page = pages.count + 1
            let text = try String(contentsOfFile: "\(html)/\(prefix)\(page).html", encoding: .utf8)
            #expect(text.contains("· page \(page) of "), "\(prefix)\(page)")
            pages.append(try tileIDs("\(html)/\(prefix)\(page).html"))
            if page > 1 { #expect(text.contains("<a rel=\"prev\" href=\"\(prefix)\(page - 1).html\">"), "\(prefix)\(page)") }
        }
        if let last = pages.indices.last {
            let text = try String(contentsOfFile: "\(html)/\(prefix)\(last + 1).html", encoding: .utf8)
            #expect(!text.contains("rel=\"next\"") && text.contains("page \(last + 1) of \(last + 1)"))
        }
        return pages
    }

    /// The gallery (per pack) and the sections are paged (`--page-size`); every exercise is on
    /// exactly one page of its pack's gallery and of its section, though two packs share some; a page
    /// renders in Chromium with its tiles and the body-part filter.
    @Test func theGalleryIsPagedAndEveryExerciseIsOnExactlyOnePage() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 23)
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let workspace = try TemporaryDirectory()
        func list(_ slice: ArraySlice<String>) -> String { slice.map { "\"\($0)\"" }.joined(separator: ", ") }
        let manifest = rapidAPIManifest(
            server: server,
            packs: """
                packs:
                  - name: a
                    selector:
                      ids: [\(list(ids[0..<15]))]
                  - name: b
                    selector:
                      ids: [\(list(ids[10..<23]))]
                """)
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let html = workspace.file("review")
        let printed = try await Self.review([workspace.file("dist"), "--html", html, "--page-size", "4"])
        #expect(printed.output.contains("23 exercises: 23 added"), "\(printed.output)")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.map(\.exercises.count) == [15, 13])
        for (number, pack) in index.packs.enumerated() {
            let pages = try Self.pagedIDs(html, prefix: "gallery-\(number + 1)-")
            #expect(pages.count == (pack.exercises.count + 3) / 4 && pages.dropLast().allSatisfy { $0.count == 4 })
            #expect(pages.flatMap { $0 } == pack.exercises.map(\.id), "pack \(pack.name)")
        }
        let added = try Self.pagedIDs(html, prefix: "added-")
        #expect(added.count == 6 && added.flatMap { $0 }.sorted() == ids, "\(added)")
        let summary = try String(contentsOfFile: "\(html)/index.html", encoding: .utf8)
        #expect(try Self.count("added", in: summary) == 23)
        #expect(Self.tileIDs(in: try Self.section("added", in: summary)) == added.flatMap { $0 })

        let dom = try await Chromium.dumpDOM("\(html)/gallery-1-2.html")
        #expect(dom.matches(of: /<article class=\x22tile gallery\x22/).count == 4)
        #expect(dom.contains("<p id=\"body-filter\">"), "the page's script ran to its end and showed the body-part filter")
        #expect(dom.contains("data-page-script=\"ran\"") && dom.contains("<a rel=\"next\" href=\"gallery-1-3.html\">"))
    }

    @Test func theNetworkLogSeesARequestThePageMakes() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 1)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let page = try workspace.write("<!doctype html><img src=\"\(server.rapidAPIBaseURL)/control.gif\">", to: "control.html")
        let netLog = workspace.file("net.json")
        _ = try await Chromium.dumpDOM(page, netLog: netLog)
        #expect(try Chromium.pageRequests(netLog: netLog) == ["\(server.rapidAPIBaseURL)/control.gif"])
    }

    @Test func aFirstReleaseWithMissingGIFsIsAllAdded() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 10) { $0.gifDimension = 180 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        server.setDefaultFault(.status(404), forExercise: ids[2])
        server.setDefaultFault(.status(404), forExercise: ids[8])
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .partial, "\(report.message)")
        let html = workspace.file("review")
        let printed = try await Self.review([workspace.file("dist"), "--html", html])
        #expect(printed.output.contains("10 exercises: 10 added, 0 changed, 0 removed, 2 missing"), "\(printed.output)")
        let dom = try await Chromium.dumpDOM("\(html)/index.html")
        #expect(dom.contains("a first release"))
        #expect(try Self.count("added", in: dom) == 10 && Self.count("changed", in: dom) == 0 && Self.count("removed", in: dom) == 0)
        let missing = try Self.section("missing", in: dom)
        #expect(try Self.count("missing", in: dom) == 2)
        for id in [ids[2], ids[8]] {
            let tile = try #require(Self.tile(id, in: missing))
            #expect(tile.contains("no GIF: the app shows a placeholder (http-404)") && !tile.contains("<img"), "\(tile)")
        }
        // The gallery of the pack shows every exercise, a poster or the placeholder each.
        let gallery = try await Chromium.dumpDOM("\(html)/gallery-1-1.html")
        #expect(gallery.matches(of: /<article class=\x22tile gallery\x22/).count == 10)
        #expect(gallery.contains("<p id=\"body-filter\">"), "the page's script ran to its end and showed the body-part filter")
        #expect(gallery.matches(of: /<img class=\x22poster\x22 src=\x22img\/[0-9a-f]{64}\.gif\x22/).count == 8)
    }

    /// A release with WebP renditions shows each exercise's WebP beside its GIF, written
    /// into the folder as `img/<sha256>.webp`, and Chromium decodes it to the GIF's size.
    @Test func theWebPIsShownBesideItsGIF() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 3)
        defer { server.stop() }
        try serveSmoothGIFs(server)
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(
            manifest: rapidAPIManifest(server: server, packs: "output:\n  formats: [gif, webp]"),
            workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let index = try readIndex(workspace.file("dist/index.json"))
        let webpPack = try #require(index.formatPacks?.first)
        let webps = webpPack.exercises.compactMap { exercise in
            webpPack.gifs.first { $0.sha256 == exercise.gif && $0.format == .webp }.map { (exercise.id, $0) }
        }
        try #require(!webps.isEmpty, "no exercise has a WebP")
        let html = workspace.file("review")
        _ = try await Self.review([workspace.file("dist"), "--html", html])
        let dom = try await Chromium.dumpDOM("\(html)/index.html")
        let added = try Self.section("added", in: dom)
        for (id, entry) in webps {
            let tile = try #require(Self.tile(id, in: added))
            #expect(tile.contains("<img class=\"webp\" src=\"img/\(entry.sha256).webp\""), "\(tile)")
            #expect(tile.contains("<img class=\"poster\" src=\"img/"), "the GIF's poster beside it")
        }
        // Chromium decodes a written WebP to the GIF's canvas.
        let (_, entry) = webps[0]
        let probe = try workspace.write(
            """
            <!doctype html><body><img src="review/img/\(entry.sha256).webp" \
            onload="document.body.setAttribute('data-decoded', this.naturalWidth + 'x' + this.naturalHeight)"></body>
            """, to: "probe.html")
        let decoded = try await Chromium.dumpDOM(probe)
        let placeholder = try #require(entry.placeholder)
        #expect(decoded.contains("data-decoded=\"\(placeholder.width)x\(placeholder.height)\""), "\(decoded)")
    }

    /// A password in an index URL (`https://user:pw@host/…`) is used for the requests and never
    /// written into the page, its images or its stylesheet, nor printed.
    @Test func aPasswordInAReviewedURLNeverReachesThePage() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        #expect(try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace).exitStatus == .success)
        let nginx = try await NginxServer.start(root: workspace.file("dist"))
        defer { nginx.stop() }
        let secret = "s3cr3t-review-pw"
        let url = nginx.baseURL.replacingOccurrences(of: "://", with: "://reviewer:\(secret)@") + "/index.json"
        let html = workspace.file("review")
        let result = try await Self.review([url, "--html", html])
        #expect(!(result.output + result.error).contains(secret))
        let files = try FileManager.default.subpathsOfDirectory(atPath: html)
        for file in files where (try? FileManager.default.attributesOfItem(atPath: "\(html)/\(file)")[.type] as? FileAttributeType) == .typeRegular {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(html)/\(file)"))
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds the password")
        }
        let dom = try await Chromium.dumpDOM("\(html)/index.html")
        #expect(dom.contains(nginx.baseURL.replacingOccurrences(of: "http://", with: "")) && !dom.contains(secret))
    }

    @Test func anUnchangedReleaseShowsNoChangeAndNoDownload() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 8)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        try FileManager.default.copyItem(atPath: workspace.file("dist"), toPath: workspace.file("before"))
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        let html = workspace.file("review")
        _ = try await Self.review([workspace.file("before"), workspace.file("dist"), "--html", html])
        let dom = try await Chromium.dumpDOM("\(html)/index.html")
        for section in ["added", "changed", "removed", "missing"] { #expect(try Self.count(section, in: dom) == 0) }
        #expect(dom.contains("data-download-bytes=\"0\""))
        #expect(!FileManager.default.fileExists(atPath: "\(html)/added-1.html"))
        // The same folder again is replaced; an output folder (neither empty nor a review) is refused.
        _ = try await Self.review([workspace.file("before"), workspace.file("dist"), "--html", html])
        let refused = try await gifpackCLI(["review", workspace.file("before"), workspace.file("dist"), "--html", workspace.file("dist")])
        #expect(refused.status == 1 && refused.error.contains("is neither empty nor an earlier review page"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.html")))
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/img")))
    }

    @Test func buildWritesTheReviewOfWhatItWrote() async throws {
        try Chromium.requireInstalled()
        let server = try startFixture(count: 8) { $0.gifDimension = 180 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server, fetch: "  refresh_after: 0"), to: "manifest.yaml")
        let arguments = ["build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "--quiet"]
        let environment = ["GIFPACK_TEST_KEY": testAPIKey]
        #expect(try await gifpackCLI(arguments, environment: environment).status == 0)
        server.replaceGIF(id: ids[1], with: try GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: 3, colors: 4, seed: 77))
        let html = workspace.file("review")
        let second = try await gifpackCLI(arguments.filter { $0 != "--quiet" } + ["--review-html", html], environment: environment)
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output.contains("review: \(html)/index.html — 8 exercises: 0 added, 1 changed, 0 removed, 0 missing"), "\(second.output)")
        let dom = try await Chromium.dumpDOM("\(html)/index.html")
        #expect(try Self.count("changed", in: dom) == 1 && Self.count("added", in: dom) == 0)
        let tile = try #require(Self.tile(ids[1], in: try Self.section("changed", in: dom)))
        #expect(tile.matches(of: /<img class=\x22poster\x22 src=\x22img\/[0-9a-f]{64}\.gif\x22/).count == 2, "\(tile)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.file("dist")).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "the copy of the previous index is removed: \(leftovers)")
    }

    @Test func blurHashesDecodeAsTheReferenceDecoderDrawsThem() async throws {
        // The README's hash, and hashes gifpack made of the fixture's GIFs (4x3 and 9x9 components).
        let stills = try (1...3).map { seed in
            try StillFrameDecoder.decode(bytes: GIFSynthesizer.animatedGIF(width: 48, height: 32, frames: 2, colors: 6, seed: seed)).image
        }
        let hashes =
            ["LEHV6nWB2yk8pyo0adR*.7kCMdnj"]
            + (try stills.map { try BlurHashEncoder.encode(AreaDownscaler.downscale($0, longestSide: 32), componentsX: 4, componentsY: 3) })
            + [try BlurHashEncoder.encode(AreaDownscaler.downscale(stills[0], longestSide: 32), componentsX: 9, componentsY: 9)]
        for hash in hashes {
            for (width, height) in [(32, 21), (7, 5)] {
                let ours = try BlurHashDecoder.decode(hash, width: width, height: height)
                let reference = try await ReferenceBlurHash.decode(hash, width: width, height: height)
                let worst = zip(ours.pixels, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
                #expect(ours.width == width && ours.height == height && reference.count == ours.pixels.count)
                #expect(worst <= 1, "\(hash) at \(width)x\(height): off by \(worst)")
            }
        }
        #expect(throws: BlurHashDecoder.DecodeError.self) { try BlurHashDecoder.decode("LEHV6nWB2yk8pyo0adR*.7kCMdn", width: 4, height: 3) }
        #expect(throws: BlurHashDecoder.DecodeError.self) { try BlurHashDecoder.decode("LEHV6nWB2yk8pyo0adR*.7kCMd\u{7F}j", width: 4, height: 3) }
    }

    @Test(.computes) func lookAgainFlagsBlankFramesWrongSizesFarPostersAndOutsizedGIFs() throws {
        let palette: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (10, 20, 200), (220, 30, 30), (0, 0, 0)]
        var square = [UInt8](repeating: 0, count: 400)
        for index in 0..<200 { square[index] = 1 }
        let picture = TestFrame(width: 20, height: 20, indices: square)
        let white = TestFrame(width: 20, height: 20, indices: [UInt8](repeating: 0, count: 400))
        let blankFirst = try writeTestGIF(width: 20, height: 20, palette: palette, frames: [white, picture])
        let allWhite = try writeTestGIF(width: 20, height: 20, palette: palette, frames: [white, white])
        let good = try writeTestGIF(width: 20, height: 20, palette: palette, frames: [picture])
        let redPoster = try writeTestGIF(
            width: 8, height: 8, palette: palette,
            frames: [TestFrame(width: 8, height: 8, indices: [UInt8](repeating: 2, count: 64))])
        let average = try StillFrameDecoder.decode(bytes: good).image.averageColorHex
        func entry(_ n: Int, size: Int64) -> GIFEntry {
            GIFEntry(sha256: String(repeating: "\(n)", count: 64), location: EntryLocation(path: "g", size: size, frameOffset: Int64(n) * 100, frameLength: 50))
        }
        let pack = PackDescription(
            name: "all", version: 1, file: "packs/all-v1-00000000.tar.zst", bytes: 1, sha256: String(repeating: "a", count: 64),
            entryCount: 6, uncompressedBytes: 1, contentDigest: String(repeating: "b", count: 64),
            catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 50),
            gifs: (1...5).map { entry($0, size: $0 == 5 ? 5_000 : 1_000) }, exercises: [])
        let checks = ReviewChecks(
            index: PackIndex(
                generator: "t", source: SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: 20),
                packs: [pack]))
        func exercise(bytes: Int64 = 1_000, side: Int = 20) -> ReviewExercise {
            ReviewExercise(
                id: "0001", pack: "all", gifSHA256: String(repeating: "1", count: 64),
                gif: GIFMetadata(
                    sha256: String(repeating: "1", count: 64), bytes: bytes, width: side, height: side, frames: 2,
                    durationMilliseconds: 100, loopCount: 0, averageColor: average))
        }
        #expect(checks.reasons(for: exercise(), gifBytes: good, posterBytes: good) == [])
        #expect(checks.reasons(for: exercise(), gifBytes: blankFirst, posterBytes: nil).first?.hasPrefix("blank first frame") == true)
        #expect(checks.reasons(for: exercise(), gifBytes: allWhite, posterBytes: nil).first?.hasPrefix("every frame is one colour") == true)
        #expect(checks.reasons(for: exercise(side: 18), gifBytes: good, posterBytes: nil) == ["18×18, not the 20 px rendition asked for"])
        #expect(checks.reasons(for: exercise(), gifBytes: good, posterBytes: redPoster).first?.hasPrefix("poster colour #dc1e1e is far from") == true)
        #expect(checks.reasons(for: exercise(bytes: 5_000), gifBytes: good, posterBytes: nil).first?.contains("more than 4× its pack's median") == true)
        #expect(checks.reasons(for: ReviewExercise(id: "0002", pack: "all"), gifBytes: nil, posterBytes: nil) == [])
    }

    @Test func theSummaryNamesTheSignerAndATrustedKeyVerifiesIt() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        for name in ["k", "other"] {
            let keygen = try await gifpackCLI(["keygen", "--secret-key", workspace.file("\(name).key"), "--public-key", workspace.file("\(name).pub"), "--quiet"])
            #expect(keygen.status == 0, "\(keygen.error)")
        }
        let report = try await runBuild(
            manifest: rapidAPIManifest(server: server) + "\nsigning:\n  secret_key_file: \(workspace.file("k.key"))\n",
            workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let keyID = try #require(report.index?.keyID)
        let dist = workspace.file("dist")
        _ = try await Self.review([dist, "--html", workspace.file("unverified")])
        let unverified = try String(contentsOfFile: workspace.file("unverified/index.html"), encoding: .utf8)
        #expect(unverified.contains("<td>key \(keyID) (not verified: no --trusted-key)</td>"))
        _ = try await Self.review([dist, "--html", workspace.file("verified"), "--trusted-key", workspace.file("k.pub")])
        let verified = try String(contentsOfFile: workspace.file("verified/index.html"), encoding: .utf8)
        #expect(verified.contains("<td>key \(keyID) (verified with 1 trusted key(s))</td>"))
        #expect(verified.contains("<th>sequence</th><td>—</td><td>1</td>"))
        let refused = try await gifpackCLI(["review", dist, "--html", workspace.file("refused"), "--trusted-key", workspace.file("other.pub")])
        #expect(refused.status == 1 && refused.error.contains("not a trusted key"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("refused")))
    }
}

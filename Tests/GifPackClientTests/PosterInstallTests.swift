import Foundation
@testable import GifPackClient
import GifPackFormat
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// `gifpack install --with-posters` (``PackInstaller/withPosters``) over real HTTP from
/// nginx: posters land at `<cache>/posters/<size>/<id>.gif` in the same generation as the GIFs.
@Suite("Client: installing posters, against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
struct PosterInstallTests {
    /// Poster sizes below the fixture's 64 px GIFs, so every poster is a real downscale.
    static let sizes = [32, 48]

    /// Builds the fixture's current content with posters at ``sizes`` and publishes it to the site.
    static func buildAndPublish(_ dists: UpgradeDist) async throws {
        let manifest = rapidAPIManifest(
            server: dists.server, packs: "output:\n  posters: [\(sizes.map(String.init).joined(separator: ", "))]",
            fetch: "  refresh_after: 0", pageSize: 50)
        try await makeDist(manifest: manifest, workspace: dists.workspace, allowingPartial: true)
        try dists.publish()
    }

    @Test func installedPostersDecodeAtTheirSizeShareFilesAndASecondInstallFetchesNothing() async throws {
        let dists = try await UpgradeDist.make(count: 16)
        defer { dists.server.stop() }
        // Two exercises share one GIF: they share its posters too.
        let (a, b) = (dists.ids[2], dists.ids[5])
        dists.server.replaceGIF(id: b, with: dists.served(a))
        try await Self.buildAndPublish(dists)
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let pack = try #require(try dists.index().packs.first)
        let posters = try #require(pack.posters)
        #expect(posters.sizes == Self.sizes)

        // Without the flag, nothing poster-related is fetched or installed.
        let plainCache = dists.workspace.file("plain/gifs")
        let plainMark = try await nginx.mark()
        let plain = try await PackInstaller(cacheDirectory: plainCache).install(from: PackIndexSource(url))
        let plainLines = try await nginx.log(since: plainMark)
        #expect(plain.posterPacks.isEmpty && plain.postersWritten == 0)
        #expect(!plainLines.contains { $0.path.contains("posters") }, "\(plainLines)")
        #expect(!FileManager.default.fileExists(atPath: "\(plainCache)/posters"))
        #expect(try InstalledCache(directory: plainCache).posterPath(forExercise: a, size: 32) == nil)

        var installer = PackInstaller(cacheDirectory: dists.workspace.file("app/gifs"))
        installer.withPosters = true
        let mark = try await nginx.mark()
        let report = try await installer.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)
        let distinct = Set(pack.exercises.compactMap(\.gif)).count
        #expect(report.posterPacks.map(\.name) == ["all-posters"] && report.posterPacks.first?.sizes == Self.sizes)
        #expect(report.postersWritten == distinct * Self.sizes.count && report.postersReused == 0)
        let postersFetch = try #require(report.fetches.first { $0.pack == "all-posters" })
        #expect(postersFetch.method == .wholePack && postersFetch.bytesFetched == posters.bytes)
        #expect(lines.filter { $0.path == "/\(posters.file)" }.map(\.bodyBytes) == [posters.bytes], "\(lines)")

        let cache = try InstalledCache(directory: installer.cacheDirectory)
        #expect(cache.posterSizes == Self.sizes)
        let reader = try PosterPackReader(path: "\(dists.site)/\(posters.file)", posters: posters)
        for exercise in pack.exercises {
            guard let hash = exercise.gif else {
                #expect(cache.posterPath(forExercise: exercise.id, size: 32) == nil)
                continue
            }
            let gif = try GIFInspector.inspect(path: try #require(cache.gifPath(forExercise: exercise.id)))
            for size in Self.sizes {
                let path = try #require(cache.posterPath(forExercise: exercise.id, size: size))
                #expect(path == "\(cache.generationDirectory)/posters/\(size)/\(exercise.id).gif")
                // Decoded with giflib: one frame, the GIF's aspect at `size` on the longest side.
                let info = try GIFInspector.inspect(path: path)
                let expected = AreaDownscaler.size(width: gif.width, height: gif.height, longestSide: size)
                #expect(
                    info.frameCount == 1 && info.width == expected.width && info.height == expected.height,
                    "\(exercise.id) at \(size): \(info.width)x\(info.height)")
                #expect(try fileBytes(path) == reader.poster(size: size, gifSHA256: hash))
            }
        }
        #expect(cache.posterPath(forExercise: a, size: 80) == nil, "no poster of a size the pack does not have")
        for size in Self.sizes {
            let shared = try (
                fileIdentity(try #require(cache.posterPath(forExercise: a, size: size))),
                fileIdentity(try #require(cache.posterPath(forExercise: b, size: size)))
            )
            #expect(shared.0.inode == shared.1.inode, "exercises sharing a GIF share its poster file")
        }
        #expect(DirectoryListing.names("\(installer.cacheDirectory).d/downloads").isEmpty, "the posters pack download is removed")

        // Again through the command line, nothing changed: only the index is fetched.
        let before = try treeSnapshot(installer.cacheDirectory)
        let againMark = try await nginx.mark()
        let again = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", installer.cacheDirectory, "--with-posters"])
        let againLines = try await nginx.log(since: againMark)
        #expect(again.status == 0, "\(again.error)")
        #expect(ClientCommandTests.text(again.output).contains("already installed"), "\(ClientCommandTests.text(again.output))")
        #expect(againLines.map(\.path) == ["/index.json.zst"] && againLines.map(\.status) == [304], "\(againLines)")
        #expect(try treeSnapshot(installer.cacheDirectory) == before)

        // Dropping the flag installs a generation without posters (from the cached GIFs, no posters pack).
        let droppedMark = try await nginx.mark()
        let dropped = try await PackInstaller(cacheDirectory: installer.cacheDirectory).install(from: PackIndexSource(url))
        let droppedLines = try await nginx.log(since: droppedMark)
        #expect(!dropped.isUnchanged && dropped.posterPacks.isEmpty && dropped.gifsWritten == 0)
        #expect(!droppedLines.contains { $0.path.contains("posters") }, "\(droppedLines)")
        #expect(try InstalledCache(directory: installer.cacheDirectory).posterPath(forExercise: a, size: 32) == nil)
        #expect(!FileManager.default.fileExists(atPath: "\(installer.cacheDirectory)/posters"))
    }

    @Test func anUpgradeWhosePostersPackDidNotChangeFetchesNoPostersAndRelinksThem() async throws {
        let dists = try await UpgradeDist.make(count: 12)
        defer { dists.server.stop() }
        let (a, b, c) = (dists.ids[1], dists.ids[4], dists.ids[7])
        // v1: c shows a's GIF. v2: c shows b's. The set of GIFs, and so the posters pack, stays the same.
        dists.server.replaceGIF(id: c, with: dists.served(a))
        try await Self.buildAndPublish(dists)
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        var installer = PackInstaller(cacheDirectory: dists.workspace.file("app/gifs"))
        installer.withPosters = true
        _ = try await installer.install(from: PackIndexSource(url))
        let v1 = try #require(try dists.index().packs.first)

        dists.server.replaceGIF(id: c, with: dists.served(b))
        try await Self.buildAndPublish(dists)
        let v2 = try #require(try dists.index().packs.first)
        #expect(v2.version == v1.version + 1 && v2.posters?.file == v1.posters?.file, "same GIFs, same posters pack")

        let mark = try await nginx.mark()
        let report = try await installer.install(from: PackIndexSource(url))
        let lines = try await nginx.log(since: mark)
        #expect(report.changed == [c])
        let postersFetch = try #require(report.fetches.first { $0.pack == "all-posters" })
        #expect(postersFetch.method == .installed && postersFetch.bytesFetched == 0)
        #expect(!lines.contains { $0.path.contains("posters") }, "\(lines)")
        #expect(report.postersWritten == 0 && report.postersReused > 0)
        let cache = try InstalledCache(directory: installer.cacheDirectory)
        for size in Self.sizes {
            #expect(
                try fileBytes(try #require(cache.posterPath(forExercise: c, size: size)))
                    == fileBytes(try #require(cache.posterPath(forExercise: b, size: size))), "c now shows b's poster")
        }

        // A poster damaged in the cache is not trusted: it is fetched again (by range) and rewritten.
        let damaged = try #require(cache.posterPath(forExercise: a, size: 32))
        var bytes = try fileBytes(damaged)
        bytes[bytes.count - 2] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let force = try await installer.install(from: PackIndexSource(url))
        #expect(force.isUnchanged, "the same packs are installed: nothing to do")
        dists.server.replaceGIF(id: c, with: dists.served(a))
        try await Self.buildAndPublish(dists)
        let repaired = try await installer.install(from: PackIndexSource(url))
        let refetch = repaired.fetches.first { $0.pack == "all-posters" }
        #expect(refetch?.method == .sparse && refetch?.framesFetched == 1, "\(String(describing: refetch))")
        #expect(repaired.postersWritten == 1, "only the damaged poster is written again")
        let fixed = try #require(try InstalledCache(directory: installer.cacheDirectory).posterPath(forExercise: a, size: 32))
        let posters = try #require(try dists.index().packs.first?.posters)
        let hash = try #require(try dists.index().packs.first?.exercises.first { $0.id == a }?.gif)
        #expect(try fileBytes(fixed) == PosterPackReader(path: "\(dists.site)/\(posters.file)", posters: posters).poster(size: 32, gifSHA256: hash))
    }

    @Test func aBadPostersPackIsRefusedAndAnIndexWithoutPostersSaysSo() async throws {
        let dists = try await UpgradeDist.make(count: 8)
        defer { dists.server.stop() }
        try await Self.buildAndPublish(dists)
        let pack = try #require(try dists.index().packs.first)
        let posters = try #require(pack.posters)
        let cache = dists.workspace.file("app/gifs")
        var installer = PackInstaller(cacheDirectory: cache)
        installer.withPosters = true

        // A changed byte in the posters pack: refused, nothing installed; without posters the same index installs.
        let file = "\(dists.site)/\(posters.file)"
        let original = try fileBytes(file)
        var damaged = original
        damaged[damaged.count / 2] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: file))
        await #expect(throws: PackClientError.self) { _ = try await installer.install(from: PackIndexSource("\(dists.site)/index.json")) }
        do { _ = try await installer.install(from: PackIndexSource("\(dists.site)/index.json")) } catch {
            guard case .rejected(let rejection)? = error as? PackClientError else { throw error }
            #expect(rejection.reason == .packChecksum && rejection.pack == posters.name, "\(rejection)")
        }
        #expect(!FileManager.default.fileExists(atPath: cache))
        let plain = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource("\(dists.site)/index.json"))
        #expect(plain.posterPacks.isEmpty && plain.exercises == pack.exercises.count)
        try Data(original).write(to: URL(fileURLWithPath: file))

        // A posters entry whose path leaves its directory refuses the whole index.
        var index = try dists.index()
        index.packs[0].posters?.posters[0].path = "posters/32/../../../evil.gif"
        try Data(try index.encoded()).write(to: URL(fileURLWithPath: "\(dists.site)/index.json"))
        await #expect(throws: PackClientError.self) { _ = try await installer.install(from: PackIndexSource("\(dists.site)/index.json")) }

        // An index without posters packs (format 1.1, or output.posters: []): --with-posters says so.
        index.packs[0].posters = nil
        try Data(try index.encoded()).write(to: URL(fileURLWithPath: "\(dists.site)/index.json"))
        await #expect(throws: PackClientError.noPosters(pack: "all")) {
            _ = try await installer.install(from: PackIndexSource("\(dists.site)/index.json"))
        }
        let result = try await ClientCommandTests.gifpack(["install", "--index", "\(dists.site)/index.json", "--cache", cache, "--with-posters"])
        #expect(result.status == 1 && result.error.contains("no posters pack"), "\(result.error)")
    }
}

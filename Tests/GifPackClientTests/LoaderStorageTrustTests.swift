import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// The loader's one rollback
/// floor, installs by other processes or loaders on the same folder, stored indexes from the
/// future, and lookups that do not read the index — against nginx, with both transports.
@Suite(
    "Client: the loader's rollback floor, generations seen across processes, index lookups", .tags(.nginx), .serialized, .ownThread,
    .timeLimit(.minutes(6)))
struct LoaderStorageTrustTests {
    typealias Served = GIFLoaderTests.Served

    /// One floor per index URL for the whole loader, whichever tier verified the
    /// index, kept across a relaunch. Refresh verifies sequence 2 for one pack, then the lazy tier
    /// is asked for an exercise outside it with sequence 1 replayed; the lazy tier verifies
    /// sequence 2, then a relaunched loader's refresh gets sequence 1 replayed. Both refuse it.
    @Test("a replayed older signed index is refused by the lazy tier after refresh verified a newer one, and by refresh after the lazy tier did")
    func oneRollbackFloorForTheWholeLoader() async throws {
        let signed = try SignedDist(count: 8)
        defer { signed.server.stop() }
        let ids = signed.server.catalog.exercises.map(\.id).sorted()
        func build(at time: Date) async throws {
            let packs = "packs:\n  - name: few\n    selector:\n      ids: [\"\(ids[0])\", \"\(ids[1])\"]\n  - name: all"
            let manifest =
                rapidAPIManifest(server: signed.server, packs: packs, fetch: "  refresh_after: 0") + "\n"
                + signed.key.block(expiresAfter: "10d")
            try await makeDist(manifest: manifest, workspace: signed.workspace, now: time)
        }
        try await build(at: Date())
        let v1 = try signed.copyIndex(to: "index-v1.json")
        try signed.changeAGIF(seed: 77)
        try await build(at: Date().addingTimeInterval(60))
        let v2 = try signed.copyIndex(to: "index-v2.json")
        #expect(try readIndex(v1).sequence == 1 && readIndex(v2).sequence == 2)
        let outside = try #require(ids.last)
        #expect(try readIndex(v2).packs.first { $0.name == "few" }?.exercises.contains { $0.id == outside } == false)
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let url = URL(string: nginx.baseURL + "/index.json")!
        let keys = [TrustedKey(signed.key.secret.publicKey)]
        var subset = GIFLoader.Configuration()
        subset.packs = ["few"]

        for (name, transport) in try GIFLoaderTests.transports() {
            try signed.replay(v2)
            let refreshed = URL(fileURLWithPath: signed.workspace.file("refreshed-\(name)"), isDirectory: true)
            let lazy = URL(fileURLWithPath: signed.workspace.file("lazy-\(name)"), isDirectory: true)
            // Sequence 2 through refresh (one pack), and through the lazy tier alone.
            _ = try await GIFLoader(indexURL: url, cacheFolder: refreshed, trustedKeys: keys, transport: transport, configuration: subset).refresh()
            #expect(try await GIFLoader(indexURL: url, cacheFolder: lazy, trustedKeys: keys, transport: transport).gif(for: outside)?.tier == .network)

            try signed.replay(v1)
            // Relaunched: each tier refuses what the other one's floor is above.
            let mark = try await nginx.mark()
            await #expect(throws: GIFLoaderError.self, "\(name): the lazy tier after a refresh of sequence 2") {
                _ = try await GIFLoader(indexURL: url, cacheFolder: refreshed, trustedKeys: keys, transport: transport, configuration: subset)
                    .gif(for: outside)
            }
            await #expect(throws: GIFLoaderError.self, "\(name): refresh after the lazy tier took sequence 2") {
                _ = try await GIFLoader(indexURL: url, cacheFolder: lazy, trustedKeys: keys, transport: transport).refresh()
            }
            // Refused as a rollback, before any pack byte was asked for.
            for folder in [refreshed, lazy] {
                let again = try GIFLoader(indexURL: url, cacheFolder: folder, trustedKeys: keys, transport: transport, configuration: subset)
                do {
                    if folder == lazy { _ = try await again.refresh() } else { _ = try await again.gif(for: outside) }
                    Issue.record("\(name): sequence 1 accepted in \(folder.lastPathComponent)")
                } catch {
                    guard case .untrusted(let refusal)? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(name): \(error)"); continue }
                    #expect(refusal.reason == .rollback, "\(refusal)")
                }
            }
            #expect(!(try await nginx.log(since: mark)).contains { $0.path.hasPrefix("/packs/") }, "\(name)")
            let installed = try InstalledCache(directory: refreshed.appendingPathComponent("installed").path)
            #expect(installed.manifest.indexSequence == 2)
            #expect(FileManager.default.fileExists(atPath: lazy.appendingPathComponent("installed").path) == false)
        }
    }

    /// A second loader on the same folder (another process of the
    /// app group) installs a new release; the first one's refresh is then "up to date", and it
    /// serves the new release with file URLs into the generation installed now.
    @Test(
        "another loader's install on the same folder is seen: up to date means the new release is served",
        arguments: ["URLSession", "curl"])
    func anotherLoadersInstallIsSeen(transportName: String) async throws {
        let served = try await Served.make(count: 12)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let folder = served.folder("shared")
        var posters = GIFLoader.Configuration()
        posters.withPosters = true
        let app = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport, configuration: posters)
        _ = try await app.refresh()
        let id = try #require(served.distinct.first)
        #expect(try await app.placeholder(for: id)?.posterURL != nil)
        let old = try #require(try await app.gif(for: id))
        #expect(old.tier == .installed && old.data == Data(served.dists.served(id)))
        #expect(try await app.gif(for: id)?.tier == .memory)

        served.dists.server.replaceGIF(id: id, with: try UpgradeDist.newGIF(seed: 43))
        try await served.dists.build()
        try served.dists.publish()
        let new = Data(served.dists.served(id))
        #expect(new != old.data)
        let widget = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport, configuration: posters)
        #expect(try await widget.refresh().isUnchanged == false)

        let report = try await app.refresh()
        #expect(report.isUnchanged, "the other loader installed this release")
        let now = try #require(try await app.gif(for: id))
        #expect(now.data == new, "the release installed now is served, not the one read before")
        let current = URL(fileURLWithPath: folder.appendingPathComponent("installed").path).resolvingSymlinksInPath().path
        #expect(
            now.fileURL.map { $0.path.hasPrefix(current + "/") && (try? Data(contentsOf: $0)) == new } == true,
            "\(String(describing: now.fileURL)) in \(current)")
        // By hash too: the memory tier's file URL is the current generation's.
        let byHash = try #require(try await app.gif(sha256: now.sha256))
        #expect(byHash.fileURL.map { $0.path.hasPrefix(current + "/") } == true)
        // The placeholders' poster files are the current generation's too.
        let poster = try #require(try await app.placeholder(for: id)?.posterURL)
        #expect(poster.path.hasPrefix(current + "/") && FileManager.default.fileExists(atPath: poster.path), "\(poster.path)")
    }

    /// With the reader offline, another process installs v2 and then v1 again
    /// (the generation it read is deleted). Every installed GIF is still served from disk, and the
    /// one in memory comes with a file URL that exists.
    @Test(
        "an offline reader keeps its installed GIFs when another process installs v2 and then v1 again",
        arguments: ["URLSession", "curl"])
    func offlineReaderFollowsGenerations(transportName: String) async throws {
        let served = try await Served.make(count: 12)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let folder = served.folder("shared")
        let site = served.dists.site
        let saved = try ["index.json", "index.json.zst"].filter { FileManager.default.fileExists(atPath: "\(site)/\($0)") }
            .map { ($0, try fileBytes("\(site)/\($0)")) }
        let app = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport)
        _ = try await app.refresh()

        // The extension: nothing listens at its index URL.
        var small = GIFLoader.Configuration()
        small.memoryCountLimit = 1
        let offline = URL(string: "http://127.0.0.1:\(try LoopbackPort.free())/index.json")!
        let reader = try GIFLoader(indexURL: offline, cacheFolder: folder, transport: transport, configuration: small)
        let withGIFs = served.dists.ids.filter { (try? served.dists.index().placeholder(forExercise: $0)) != nil }
        var v1: [String: Data] = [:]
        for id in withGIFs {
            let gif = try #require(try await reader.gif(for: id))
            #expect(gif.tier == .installed)
            v1[id] = gif.data
        }

        served.dists.server.replaceGIF(id: withGIFs[0], with: try UpgradeDist.newGIF(seed: 12))
        try await served.dists.build()
        try served.dists.publish()
        #expect(try await app.refresh().isUnchanged == false)
        for (name, bytes) in saved {
            try Data(bytes).write(to: URL(fileURLWithPath: "\(site)/\(name)"))
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: "\(site)/\(name)")
        }
        #expect(try await app.refresh().isUnchanged == false, "v1 again: a third generation")

        let current = URL(fileURLWithPath: folder.appendingPathComponent("installed").path).resolvingSymlinksInPath().path
        for id in withGIFs {
            do {
                let gif = try #require(try await reader.gif(for: id))
                #expect(gif.data == v1[id] && [.installed, .memory].contains(gif.tier), "\(id): \(gif.tier)")
                #expect(
                    gif.fileURL.map { $0.path.hasPrefix(current + "/") && FileManager.default.fileExists(atPath: $0.path) } == true,
                    "\(id): \(String(describing: gif.fileURL))")
            } catch {
                Issue.record("\(id): \(error)")
            }
        }
    }

    /// The stored index is read and decoded once per revalidation, not per lookup.
    @Test("lookups read the stored index once per revalidation, not once per lookup", arguments: ["URLSession", "curl"])
    func lookupsReadTheIndexOncePerRevalidation(transportName: String) async throws {
        let served = try await Served.make(count: 20)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let directory = served.dists.workspace.file("lazy-\(transportName)")
        let cache = LazyGIFCache(directory: directory, indexURL: served.indexURL.absoluteString, indexMaxAge: .seconds(3600), client: transport)
        let ids = served.dists.ids
        var mark = try await served.nginx.mark()
        for round in 0..<10 {
            for id in ids { _ = try await cache.gif(forExercise: id) }
            #expect(cache.indexLoads == 1, "after round \(round)")
        }
        #expect(try await served.nginx.log(since: mark).filter { $0.path.hasPrefix("/index.json") }.count == 1)
        // A relaunch reads the stored index once, then not again.
        let relaunched = LazyGIFCache(directory: directory, indexURL: served.indexURL.absoluteString, indexMaxAge: .seconds(3600), client: transport)
        for id in ids { _ = try await relaunched.gif(forExercise: id) }
        #expect(relaunched.indexLoads == 1)
        // Revalidated at every lookup (a 304 each time): still read once.
        let eager = LazyGIFCache(directory: directory, indexURL: served.indexURL.absoluteString, indexMaxAge: .zero, client: transport)
        mark = try await served.nginx.mark()
        for id in ids.prefix(5) { _ = try await eager.gif(forExercise: id) }
        #expect(eager.indexLoads == 1)
        #expect(try await served.nginx.log(since: mark).filter { $0.path.hasPrefix("/index.json") }.map(\.status) == Array(repeating: 304, count: 5))
    }

    /// A stored lazy index whose file time is ahead of the clock (the clock
    /// moved back) is stale, not young: age is never negative.
    @Test("a stored index whose time is ahead of the clock is revalidated", arguments: ["URLSession", "curl"])
    func aStoredIndexFromTheFutureIsRevalidated(transportName: String) async throws {
        let served = try await Served.make(count: 6)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let directory = served.dists.workspace.file("lazy-\(transportName)")
        let cache = LazyGIFCache(directory: directory, indexURL: served.indexURL.absoluteString, indexMaxAge: .seconds(3600), client: transport)
        let ids = served.dists.ids
        _ = try await cache.gif(forExercise: ids[0])

        // The clock moved back: the stored index's time is a day ahead. It is revalidated (a 304), not used as young.
        let slot = try #require(DirectoryListing.names("\(directory)/indexes").first)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(86400)], ofItemAtPath: "\(directory)/indexes/\(slot)")
        var mark = try await served.nginx.mark()
        _ = try await LazyGIFCache(directory: directory, indexURL: served.indexURL.absoluteString, indexMaxAge: .seconds(3600), client: transport).index()
        let asked = try await served.nginx.log(since: mark).filter { $0.path.hasPrefix("/index.json") }
        #expect(asked.map(\.status) == [304], "\(asked)")
        // Revalidated now: young again.
        mark = try await served.nginx.mark()
        _ = try await cache.gif(forExercise: ids[0])
        #expect(try await served.nginx.log(since: mark).filter { $0.path.hasPrefix("/index.json") }.isEmpty)
    }

    /// The lookup tables choose as ``RenditionChoice/pack(forExercise:in:pixels:)`` does, for every
    /// exercise and size, and find each GIF by hash in whichever rendition holds it.
    @Test("the lookup tables agree with RenditionChoice for every exercise and size")
    func lookupAgreesWithRenditionChoice() async throws {
        let dists = try await UpgradeDist.make(count: 6, noGIF: [2], resolutions: [180, 360])
        defer { dists.server.stop() }
        let index = try readIndex(dists.dist + "/index.json")
        #expect(index.renditionPacks?.isEmpty == false)
        for pixels in [nil, 1, 180, 181, 360, 1000] as [Int?] {
            let lookup = IndexLookup(index, pixels: pixels, limits: .standard)
            for id in dists.ids + ["unknown"] {
                let expected = RenditionChoice.pack(forExercise: id, in: index, pixels: pixels)
                let found = lookup.entry(forExercise: id)
                #expect((expected == nil) == (found == .unlisted), "\(id) at \(String(describing: pixels))")
                guard let expected else { continue }
                let entry = expected.gif.flatMap { hash in expected.pack.gifs.first { $0.sha256 == hash } }
                #expect(found == (entry.map { .gif($0) } ?? .listedWithoutGIF))
            }
            for pack in index.allPacks {
                for gif in pack.gifs { #expect(try lookup.gif(sha256: gif.sha256)?.entry.sha256 == gif.sha256) }
            }
        }
    }
}

/// On a full disk, cached GIFs make room for a GIF fetched by range (the frame is
/// verified in memory, nothing is written before), in the loader and in `gifpack cat`; a refresh
/// that failed for want of space leaves no `.part` holding the disk full.
@Suite("Client: a full disk, with GIFs cached that can make room", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct FullDiskFetchTests {
    typealias Served = GIFLoaderTests.Served

    /// Fills the file system of `directory` with a file there, until a write fails for want of space.
    static func fill(_ directory: String) throws {
        let path = "\(directory)/filler"
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var chunk = 64 << 10
        while chunk >= 512 {
            do { try handle.write(contentsOf: Data(count: chunk)) } catch { chunk /= 2 }
        }
        #expect(StaleDownloadsTests.freeBytes(directory).map { $0 < 4096 } == true)
    }

    @Test(
        "the loader (both transports) and gifpack cat fetch a GIF on a full disk, evicting cached GIFs to store it",
        .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func fetchesOnAFullDisk() async throws {
        let served = try await Served.make(count: 12)
        defer { served.stop() }
        let ids = served.distinct
        try #require(ids.count >= 10)
        try await onASmallTmpfs(served.dists.workspace.file("small"), size: "1m") { mount in
            for (at, (name, transport)) in try GIFLoaderTests.transports().enumerated() {
                let folder = URL(fileURLWithPath: "\(mount)/app-\(name)", isDirectory: true)
                let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport)
                for id in ids[(at * 3)..<(at * 3 + 2)] { #expect(try await loader.gif(for: id)?.tier == .network) }
            }
            let catCache = "\(mount)/cat"
            let first = try await ClientCommandTests.gifpack(["cat", "--index", served.indexURL.absoluteString, "--cache", catCache, ids[6]])
            #expect(first.status == 0, "\(first.error)")
            try Self.fill(mount)

            for (at, (name, transport)) in try GIFLoaderTests.transports().enumerated() {
                let folder = URL(fileURLWithPath: "\(mount)/app-\(name)", isDirectory: true)
                let relaunched = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport)
                let id = ids[at * 3 + 2]
                let gif = try #require(try await relaunched.gif(for: id), "\(name)")
                #expect(gif.tier == .network && gif.data == Data(served.dists.served(id)), "\(name)")
                #expect(gif.fileURL.map { (try? Data(contentsOf: $0)) == gif.data } == true, "\(name): stored after older GIFs made room")
            }
            let cat = try await ClientCommandTests.gifpack(["cat", "--index", served.indexURL.absoluteString, "--cache", catCache, ids[7]])
            #expect(cat.status == 0 && cat.output == served.dists.served(ids[7]), "\(cat.error)")
            let leftovers = DirectoryListing.names("\(catCache)/tmp")
            #expect(leftovers.isEmpty, "\(leftovers)")
        }
    }

    @Test(
        "a refresh that runs out of space leaves no .part, and the lazy tier stores GIFs again",
        .enabled(if: getuid() == 0, "mounting a small tmpfs needs root"), arguments: ["URLSession", "curl"])
    func aFailedRefreshLeavesNoPart(transportName: String) async throws {
        let served = try await Served.make(count: 12)
        defer { served.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let pack = try #require(try served.dists.index().packs.first)
        try await onASmallTmpfs(served.dists.workspace.file("small-\(transportName)"), size: "1m") { mount in
            let folder = URL(fileURLWithPath: "\(mount)/app", isDirectory: true)
            let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, transport: transport)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // Leave room for three quarters of the pack: enough for the lazy tier's index and a GIF, unless a `.part` holds it.
            let free = try #require(StaleDownloadsTests.freeBytes(mount))
            try Data(count: Int(free - pack.bytes * 3 / 4)).write(to: URL(fileURLWithPath: "\(mount)/filler"))
            await #expect(throws: (any Error).self) { _ = try await loader.refresh() }
            let downloads = PackInstaller(cacheDirectory: folder.appendingPathComponent("installed").path).downloadDirectory
            let parts = DirectoryListing.names(downloads).filter { $0.hasSuffix(".part") }
            #expect(parts.isEmpty, "\(parts)")
            let id = try #require(served.distinct.first)
            let gif = try #require(try await loader.gif(for: id))
            #expect(
                gif.tier == .network && gif.fileURL.map { (try? Data(contentsOf: $0)) == gif.data } == true,
                "stored: \(String(describing: gif.fileURL))")
        }
    }
}

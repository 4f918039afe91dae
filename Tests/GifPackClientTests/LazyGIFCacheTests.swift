import Foundation
import GifPackSystem
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

@Suite("Client: one GIF on demand from a bounded disk cache, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct LazyGIFCacheTests {
    /// Ids of exercises with distinct GIFs, in id order.
    static func distinctGIFs(_ dists: UpgradeDist) -> [String] {
        var seen = Set<[UInt8]>()
        return dists.ids.filter { id in
            let bytes = dists.served(id)
            return !bytes.isEmpty && seen.insert(bytes).inserted
        }
    }

    /// Polls until a file written now gets a later modification time than `path` has (the cache's
    /// LRU clock): file times tick in jiffies, so two uses in a row can share one.
    static func waitForTheFileClock(toPass path: String, probe: String) async throws {
        let last = try fileIdentity(path).mtime
        try await waitUntil(every: .milliseconds(1)) {
            guard FileManager.default.createFile(atPath: probe, contents: Data()) else { throw ClientTestFailure("cannot write \(probe)") }
            return try fileIdentity(probe).mtime > last
        }
    }

    @Test func aGIFIsOneRangeRequestForItsFrameThenComesFromDiskAndCatUsesTheCache() async throws {
        let dists = try await UpgradeDist.make(count: 20, noGIF: [5])
        let noGIF = dists.ids[5]
        defer { dists.server.stop() }
        try dists.publish()
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let directory = dists.workspace.file("lazy")
        let pack = try #require(try dists.index().packs.first)
        let id = try #require(Self.distinctGIFs(dists).first { $0 != noGIF })
        let frame = try #require(pack.gifEntry(forExercise: id)).location
        let cache = LazyGIFCache(directory: directory, indexURL: url)

        var mark = try await nginx.mark()
        #expect(try await cache.gif(forExercise: id) == .gif(bytes: dists.served(id), fromCache: false))
        var lines = try await nginx.log(since: mark)
        #expect(lines.map(\.path) == ["/index.json.zst", "/\(pack.file)"], "\(lines)")
        #expect(lines.last?.status == 206 && lines.last?.range == "bytes=\(frame.frameOffset)-\(frame.frameOffset + frame.frameLength - 1)")
        #expect(lines.last?.bodyBytes == frame.frameLength)

        // Again, from this cache, another cache on the same directory, and a no-GIF exercise: no request.
        mark = try await nginx.mark()
        #expect(try await cache.gif(forExercise: id) == .gif(bytes: dists.served(id), fromCache: true))
        #expect(try await LazyGIFCache(directory: directory, indexURL: url).gif(forExercise: id) == .gif(bytes: dists.served(id), fromCache: true))
        #expect(pack.exercises.first { $0.id == noGIF }?.gif == .some(nil))
        #expect(try await cache.gif(forExercise: noGIF) == .noGIF)
        await #expect(throws: PackClientError.unknownExercise("nope")) { _ = try await cache.gif(forExercise: "nope") }
        #expect(try await nginx.log(since: mark).isEmpty)

        // gifpack cat --index URL: one range request for a GIF not cached yet, none for one cached.
        let other = try #require(Self.distinctGIFs(dists).first { $0 != id && $0 != noGIF })
        let otherFrame = try #require(pack.gifEntry(forExercise: other)).location
        mark = try await nginx.mark()
        let cat = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", directory, other])
        #expect(cat.status == 0, "\(cat.error)")
        #expect(cat.output == dists.served(other))
        lines = try await nginx.log(since: mark)
        #expect(lines.map(\.path) == ["/\(pack.file)"] && lines.first?.range == "bytes=\(otherFrame.frameOffset)-\(otherFrame.frameOffset + otherFrame.frameLength - 1)", "\(lines)")
        let cached = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", directory, id])
        #expect(cached.output == dists.served(id))
        let placeholder = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", directory, noGIF])
        #expect(placeholder.status == 1 && placeholder.output.isEmpty && placeholder.error.contains("no GIF"))
        #expect(try await nginx.log(since: mark).count == 1)
        // A local index still works with --index, and without it.
        let local = try await ClientCommandTests.gifpack(["cat", "--index", "\(dists.site)/index.json", id])
        #expect(local.status == 0 && local.output == dists.served(id))
    }

    @Test func theIndexIsRevalidatedWithIfNoneMatchAndAGIFThatMovedToAStoredHashCostsNothing() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 20)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let cache = LazyGIFCache(directory: dists.workspace.file("fresh"), indexURL: url, indexMaxAge: .zero)
        let distinct = Self.distinctGIFs(dists)
        let (a, b) = (distinct[2], distinct[3])
        #expect(try await cache.gif(forExercise: b) == .gif(bytes: dists.served(b), fromCache: false))

        var mark = try await nginx.mark()
        #expect(try await cache.gif(forExercise: b) == .gif(bytes: dists.served(b), fromCache: true))
        var lines = try await nginx.log(since: mark)
        #expect(lines.count == 1 && lines.first?.path == "/index.json.zst" && lines.first?.status == 304 && lines.first?.ifNoneMatch != nil, "\(lines)")

        // v2: exercise a now shows b's GIF, already stored: the new index, and no GIF bytes.
        dists.server.replaceGIF(id: a, with: dists.served(b))
        try await dists.build()
        try dists.publish()
        mark = try await nginx.mark()
        #expect(try await cache.gif(forExercise: a) == .gif(bytes: dists.served(b), fromCache: true))
        lines = try await nginx.log(since: mark)
        #expect(lines.map(\.path) == ["/index.json.zst"] && lines.first?.status == 200, "\(lines)")
    }

    @Test func theCacheKeepsItsByteLimitEvictingTheLeastRecentlyUsed() async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let directory = dists.workspace.file("lru")
        // b is the largest of four, so storing d evicts exactly the least recently used: b.
        var four = Array(Self.distinctGIFs(dists).prefix(4))
        let largest = try #require(four.max { dists.served($0).count < dists.served($1).count })
        four.removeAll { $0 == largest }
        let (a, b, c, d) = (four[0], largest, four[1], four[2])
        let limit = Int64(dists.served(a).count + dists.served(b).count + dists.served(c).count)
        let cache = LazyGIFCache(directory: directory, indexURL: nginx.baseURL + "/index.json", byteLimit: limit)

        // File times tick in jiffies: each use waits until the file clock has passed the last one.
        func used(_ id: String) throws -> String { "\(directory)/gifs/\(sha256Hex(dists.served(id))).gif" }
        for id in [a, b, c] {
            _ = try await cache.gif(forExercise: id)
            try await Self.waitForTheFileClock(toPass: used(id), probe: dists.workspace.file("clock-probe"))
        }
        #expect(try await cache.gif(forExercise: a) == .gif(bytes: dists.served(a), fromCache: true))
        try await Self.waitForTheFileClock(toPass: used(a), probe: dists.workspace.file("clock-probe"))
        #expect(try await cache.gif(forExercise: d) == .gif(bytes: dists.served(d), fromCache: false))

        let stored = Set(DirectoryListing.names("\(directory)/gifs"))
        #expect(stored == Set([a, c, d].map { "\(sha256Hex(dists.served($0))).gif" }))
        #expect(try await cache.storedBytes() <= limit)
        #expect(try await cache.gif(forExercise: b) == .gif(bytes: dists.served(b), fromCache: false))
        #expect(try await cache.storedBytes() <= limit)
    }

    /// A real full disk (a 640 KiB tmpfs mounted for the test; GIFs padded to 180-200 KiB that travel
    /// as frames of a few KB): the least recently used GIFs are evicted to make room for a new one,
    /// and a GIF that cannot be stored even so is served all the same, verified.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func onAFullDiskOlderGIFsMakeRoomAndAGIFThatCannotBeStoredIsServedAnyway() async throws {
        let dists = try await UpgradeDist.make(count: 8)
        defer { dists.server.stop() }
        let ids = Array(dists.ids.prefix(5))
        // The first is the largest: evicting it alone frees the fourth's size.
        for (seed, id) in ids.prefix(4).enumerated() {
            dists.server.replaceGIF(id: id, with: try ClientCacheAttackTests.paddedGIF(seed: 60 + UInt64(seed), padding: (seed == 0 ? 200 : 180) << 10))
        }
        dists.server.replaceGIF(id: ids[4], with: try ClientCacheAttackTests.paddedGIF(seed: 70, padding: 700 << 10))
        try await dists.build()
        try dists.publish()
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }

        try await onASmallTmpfs(dists.workspace.file("small"), size: "640k") { mount in
            let directory = "\(mount)/lazy"
            let cache = LazyGIFCache(directory: directory, indexURL: nginx.baseURL + "/index.json")
            func name(_ id: String) -> String { "\(sha256Hex(dists.served(id))).gif" }
            for id in ids.prefix(3) {
                #expect(try await cache.gif(forExercise: id) == .gif(bytes: dists.served(id), fromCache: false))
                try await Self.waitForTheFileClock(toPass: "\(directory)/gifs/\(name(id))", probe: "\(mount)/clock-probe")
            }
            #expect(Set(DirectoryListing.names("\(directory)/gifs")) == Set(ids.prefix(3).map(name)))

            // The fourth does not fit beside them: the least recently used one makes room.
            #expect(try await cache.gif(forExercise: ids[3]) == .gif(bytes: dists.served(ids[3]), fromCache: false))
            #expect(Set(DirectoryListing.names("\(directory)/gifs")) == Set(ids[1...3].map(name)))
            #expect(try await cache.gif(forExercise: ids[3]) == .gif(bytes: dists.served(ids[3]), fromCache: true))

            // Larger than the whole disk: served, verified, not stored, and nothing evicted for it.
            #expect(try await cache.gif(forExercise: ids[4]) == .gif(bytes: dists.served(ids[4]), fromCache: false))
            #expect(Set(DirectoryListing.names("\(directory)/gifs")) == Set(ids[1...3].map(name)))
            #expect(DirectoryListing.names("\(directory)/tmp").isEmpty)
        }
    }

    @Test func concurrentCallersAndProcessesShareOneBoundedCache() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 24)
        defer { webSite.stop() }
        let (dists, url) = (webSite.dists, webSite.url)
        let directory = dists.workspace.file("shared")
        let ids = Self.distinctGIFs(dists)
        let limit = Int64(ids.prefix(4).reduce(0) { $0 + dists.served($1).count })

        // Three processes at once…
        let outputs = try TemporaryDirectory()
        let processes = try ids.suffix(3).map { id -> (String, ChildProcess, String) in
            let out = outputs.file("\(id).out")
            let process = try ChildProcess(
                productPath("gifpack"),
                [
                    "cat", "--index", url, "--cache", directory,
                    "--cache-limit", String(limit), id
                ], stdout: .file(out))
            return (id, process, out)
        }
        // …while two caches in this process ask for every GIF, twice, concurrently.
        let caches = (0..<2).map { _ in LazyGIFCache(directory: directory, indexURL: url, byteLimit: limit) }
        let results = try await withThrowingTaskGroup(of: (String, LazyGIF).self) { group in
            for cache in caches {
                for id in ids + ids.reversed() {
                    group.addTask { (id, try await cache.gif(forExercise: id)) }
                }
            }
            var all: [(String, LazyGIF)] = []
            for try await result in group { all.append(result) }
            return all
        }
        for (id, result) in results {
            guard case .gif(let bytes, _) = result else {
                Issue.record("\(id): \(result)")
                continue
            }
            #expect(bytes == dists.served(id), "\(id)")
        }
        for (id, process, out) in processes {
            let status = await process.exitStatus()
            #expect(try status == 0 && fileBytes(out) == dists.served(id), "\(id)")
        }
        #expect(try await caches[0].storedBytes() <= limit)
        #expect(DirectoryListing.names("\(directory)/tmp").isEmpty)
        for name in DirectoryListing.names("\(directory)/gifs") {
            #expect(try sha256Hex(fileBytes("\(directory)/gifs/\(name)")) + ".gif" == name)
        }
    }

    @Test func badRangeAnswersAreRefusedAndNothingIsStored() async throws {
        let dists = try await UpgradeDist.make(count: 12)
        defer { dists.server.stop() }
        try dists.publish()
        let files = try ClientStaticFileServer(root: dists.site)
        defer { files.stop() }
        let pack = try #require(try dists.index().packs.first)
        let id = try #require(Self.distinctGIFs(dists).first)
        let directory = dists.workspace.file("refusing")
        let cache = LazyGIFCache(directory: directory, indexURL: files.baseURL + "/index.json")

        files.shiftRanges(path: "/\(pack.file)")
        await #expect { _ = try await cache.gif(forExercise: id) } throws: { error in
            "\(error)".contains("not the bytes asked for")
        }
        files.ignoreRange(path: "/\(pack.file)")
        await #expect { _ = try await cache.gif(forExercise: id) } throws: { error in
            "\(error)".contains("ignores Range")
        }
        // The pack on the server is shorter than the index says: the frame's range is past its end.
        let packPath = "\(dists.site)/\(pack.file)"
        let good = try fileBytes(packPath)
        try Data(good.prefix(10)).write(to: URL(fileURLWithPath: packPath))
        let plain = try ClientStaticFileServer(root: dists.site)
        defer { plain.stop() }
        let short = LazyGIFCache(directory: directory, indexURL: plain.baseURL + "/index.json")
        await #expect { _ = try await short.gif(forExercise: id) } throws: { error in
            "\(error)".contains("416") && "\(error)".contains("index changed")
        }
        try Data(good).write(to: URL(fileURLWithPath: packPath))
        #expect(DirectoryListing.names("\(directory)/gifs").isEmpty)
        #expect(DirectoryListing.names("\(directory)/tmp").isEmpty)
        // A dropped transfer is asked for again.
        let healthy = try ClientStaticFileServer(root: dists.site)
        defer { healthy.stop() }
        healthy.cutShort(path: "/\(pack.file)", afterBytes: 10, times: 1)
        let retrying = LazyGIFCache(directory: directory, indexURL: healthy.baseURL + "/index.json")
        #expect(try await retrying.gif(forExercise: id) == .gif(bytes: dists.served(id), fromCache: false))
        #expect(healthy.requests.filter { $0.path == "/\(pack.file)" }.count == 2)
    }

    /// The files a lazy cache directory holds (its lock, its marker and empty folders aside).
    static func storedFiles(_ directory: String) -> [String] {
        let names = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String]) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return name != "lock" && name != ".gifpack-lazy-cache" && FileManager.default.fileExists(atPath: "\(directory)/\(name)", isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    @Test func withTrustedKeysTheIndexIsVerifiedLikeAnInstallAndARefusedOneCachesNothing() async throws {
        let signed = try SignedDist(count: 8)
        defer { signed.server.stop() }
        try await signed.build()
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let now = trustT0.addingTimeInterval(3600)
        let trusted = IndexTrust(keys: [signed.key.secret.publicKey], now: now)
        let index = try readIndex(signed.indexPath)
        let pack = try #require(index.packs.first)
        let id = try #require(pack.exercises.first { $0.gif != nil }?.id)
        let gif = try PackEntryReader(path: "\(signed.dist)/\(pack.file)", pack: pack).gif(forExercise: id)

        // A good signature: the index and its signature, then the GIF's frame; the signature is stored with the index.
        let good = signed.workspace.file("lazy-good")
        var mark = try await nginx.mark()
        let cache = LazyGIFCache(directory: good, indexURL: nginx.baseURL + "/index.json", trust: trusted)
        #expect(try await cache.gif(forExercise: id) == .gif(bytes: gif, fromCache: false))
        // The signature is looked for under the index's SHA-256 first (a build's dist has none there), then beside it.
        let hashNamed = "/" + SignatureLocation.key(forIndexSHA256: sha256Hex(try fileBytes(signed.indexPath)))
        #expect(try await nginx.log(since: mark).map(\.path) == ["/index.json.zst", hashNamed, "/index.json.minisig", "/\(pack.file)"])
        // The stored index is checked again when used: expired by the clock, it is refused with no request.
        mark = try await nginx.mark()
        let later = IndexTrust(keys: [signed.key.secret.publicKey], now: trustT0.addingTimeInterval(11 * 86400))
        await #expect(throws: PackClientError.self) {
            _ = try await LazyGIFCache(directory: good, indexURL: nginx.baseURL + "/index.json", trust: later).gif(forExercise: id)
        }
        #expect(try await nginx.log(since: mark).map(\.path) == ["/index.json.zst", hashNamed, "/index.json.minisig"], "revalidated, then refused")

        /// Expects the refusal `reason` for the index at `name`, nothing stored and no pack request.
        func expectRefused(
            _ reason: IndexRefusal.Reason, _ name: String, trust: IndexTrust = trusted,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let directory = signed.workspace.file("lazy-\(reason.rawValue)")
            let mark = try await nginx.mark()
            do {
                _ = try await LazyGIFCache(directory: directory, indexURL: "\(nginx.baseURL)/\(name)", trust: trust).gif(forExercise: id)
                Issue.record("a GIF through an index that should be refused (\(reason.rawValue))", sourceLocation: sourceLocation)
            } catch {
                guard case .untrusted(let refusal) = error else {
                    Issue.record("refused for another reason: \(error)", sourceLocation: sourceLocation)
                    return
                }
                #expect(refusal.reason == reason, "\(refusal)", sourceLocation: sourceLocation)
            }
            #expect(Self.storedFiles(directory).isEmpty, "nothing cached: \(Self.storedFiles(directory))", sourceLocation: sourceLocation)
            #expect(!(try await nginx.log(since: mark)).contains { $0.path.hasPrefix("/packs/") }, sourceLocation: sourceLocation)
        }
        try await expectRefused(.unsigned, try PathText.lastComponent(signed.copyIndex(to: "unsigned.json", signed: false)))
        try await expectRefused(
            .badSignature,
            try PathText.lastComponent(
                signed.copyIndex(to: "tampered.json") { bytes in
                    let at = bytes.firstIndex(of: UInt8(ascii: "0"))!
                    bytes[at] = UInt8(ascii: "9")
                }))
        let stranger = try TestSigningKey(workspace: signed.workspace, name: "stranger")
        try await expectRefused(.unknownKey, "index.json", trust: IndexTrust(keys: [stranger.secret.publicKey], now: now))

        // The sequence never goes backwards for a cache: v2 taken, then v1 served again at the same URL.
        let v1 = try signed.copyIndex(to: "index-v1.json")
        try signed.changeAGIF(seed: 91)
        try await signed.build(at: trustT0.addingTimeInterval(60))
        // nginx's ETag is mtime and size: give v2 another mtime than v1 (written in the same second, same size).
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: signed.indexPath)
        let fresh = LazyGIFCache(directory: good, indexURL: nginx.baseURL + "/index.json", indexMaxAge: .zero, trust: trusted)
        #expect(try await fresh.index().sequence == 2)
        try FileManager.default.removeItem(atPath: signed.indexPath)
        try FileManager.default.removeItem(atPath: signed.indexPath + ".minisig")
        try FileManager.default.copyItem(atPath: v1, toPath: signed.indexPath)
        try FileManager.default.copyItem(atPath: v1 + ".minisig", toPath: signed.indexPath + ".minisig")
        // v1 alone, as an older publisher served it: no compressed copy.
        try FileManager.default.removeItem(atPath: signed.indexPath + ".zst")
        await #expect {
            _ = try await fresh.index()
        } throws: { error in
            guard case PackClientError.untrusted(let refusal) = error else { return false }
            return refusal.reason == .rollback && refusal.detail.contains("cached index")
        }
        let slot = try #require(DirectoryListing.names("\(good)/indexes").first)
        let storedHead = try String(decoding: fileBytes("\(good)/indexes/\(slot)").prefix(4096), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(storedHead.prefix(1) == ["gifpack-lazy-index 4"] && storedHead.dropFirst(3).first == "2", "the stored index stays v2")

        // The command line takes --trusted-key with --index: a signed index works, an unsigned one is
        // refused with its reason (exit 1) and nothing is cached.
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_NOW"] = String(Int(now.timeIntervalSince1970))
        let cli = signed.workspace.file("lazy-cli")
        let cat = try await ClientCommandTests.gifpack(
            [
                "cat", "--index", nginx.baseURL + "/index.json", "--cache", cli, id,
                "--trusted-key", signed.key.publicPath
            ], environment: environment)
        #expect(cat.status == 0 && cat.output == gif, "\(cat.error)")
        let unsignedCache = signed.workspace.file("lazy-cli-unsigned")
        let refused = try await ClientCommandTests.gifpack(
            [
                "cat", "--index", nginx.baseURL + "/unsigned.json", "--cache", unsignedCache, id,
                "--trusted-key", signed.key.publicPath
            ], environment: environment)
        #expect(refused.status == 1 && refused.output.isEmpty && refused.error.contains("unsigned"), "\(refused.error)")
        #expect(Self.storedFiles(unsignedCache).isEmpty)
    }
}

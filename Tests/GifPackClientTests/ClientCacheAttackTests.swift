import Foundation
import GifPackSystem
import GifPackClient
import Glibc
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// The lazy GIF cache's rollback floors and directory claims, and what a refused or failed install
/// leaves behind.
@Suite("Client: cache floors per source, claimed cache directories, nothing left by a refused or failed install", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
struct ClientCacheAttackTests {
    /// A trusted clock inside every signed index's validity.
    static let now = trustT0.addingTimeInterval(3600)

    /// The environment of a `gifpack` child: `HOME` in `home` (so the default cache is there), the trusted clock.
    static func environment(home: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CACHE_HOME"] = nil
        environment["GIFPACK_NOW"] = String(Int(now.timeIntervalSince1970))
        return environment
    }

    /// Copies a signed build (index, signature, packs) to `<site>/<name>/`.
    static func publish(_ signed: SignedDist, to site: String, as name: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: "\(site)/\(name)/packs", withIntermediateDirectories: true)
        for pack in try files.contentsOfDirectory(atPath: "\(signed.dist)/packs") where !files.fileExists(atPath: "\(site)/\(name)/packs/\(pack)") {
            try files.copyItem(atPath: "\(signed.dist)/packs/\(pack)", toPath: "\(site)/\(name)/packs/\(pack)")
        }
        for file in ["index.json", "index.json.minisig"] {
            try? files.removeItem(atPath: "\(site)/\(name)/\(file)")
            try files.copyItem(atPath: "\(signed.dist)/\(file)", toPath: "\(site)/\(name)/\(file)")
        }
    }

    /// The first exercise with a GIF in the index at `path`, and that GIF.
    static func firstGIF(_ indexPath: String, packs: String) throws -> (id: String, gif: [UInt8]) {
        let pack = try #require(try readIndex(indexPath).packs.first)
        let id = try #require(pack.exercises.first { $0.gif != nil }?.id)
        return (id, try PackEntryReader(path: "\(packs)/\(pack.file)", pack: pack).gif(forExercise: id))
    }

    // MARK: One floor per index source and key set

    @Test func twoSignedSourcesWithTheirOwnKeysShareTheDefaultCacheEachWithItsOwnFloor() async throws {
        // Source A (key kA) is at sequence 2, source B (key kB) at sequence 1.
        let a = try SignedDist(count: 6)
        defer { a.server.stop() }
        try await a.build()
        try a.changeAGIF(seed: 71)
        try await a.build(at: trustT0.addingTimeInterval(60))
        let b = try SignedDist(count: 6)
        defer { b.server.stop() }
        try await b.build()
        #expect(try readIndex(a.indexPath).sequence == 2 && readIndex(b.indexPath).sequence == 1)
        let site = a.workspace.file("site")
        try Self.publish(a, to: site, as: "a")
        try Self.publish(b, to: site, as: "b")
        let nginx = try await NginxServer.start(root: site)
        defer { nginx.stop() }
        let (idA, gifA) = try Self.firstGIF(a.indexPath, packs: a.dist)
        let (idB, gifB) = try Self.firstGIF(b.indexPath, packs: b.dist)
        let home = a.workspace.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let environment = Self.environment(home: home)

        // gifpack cat with the default cache (~/.cache/gifpack/gifs): A with kA, then B with kB, then A again.
        let catA = try await ClientCommandTests.gifpack(
            ["cat", "--index", "\(nginx.baseURL)/a/index.json", idA, "--trusted-key", a.key.publicPath],
            environment: environment)
        #expect(catA.status == 0 && catA.output == gifA, "\(catA.error)")
        let catB = try await ClientCommandTests.gifpack(
            ["cat", "--index", "\(nginx.baseURL)/b/index.json", idB, "--trusted-key", b.key.publicPath],
            environment: environment)
        #expect(catB.status == 0 && catB.output == gifB, "B (sequence 1) is not a rollback of A (sequence 2): \(catB.error)")
        let again = try await ClientCommandTests.gifpack(
            ["cat", "--index", "\(nginx.baseURL)/a/index.json", idA, "--trusted-key", a.key.publicPath],
            environment: environment)
        #expect(again.status == 0 && again.output == gifA, "\(again.error)")
        let cache = "\(home)/.cache/gifpack/gifs"
        #expect(DirectoryListing.names("\(cache)/indexes").count == 2, "one index slot per source: \(DirectoryListing.names(cache))")

        // Each source keeps its own floor: A's slot still says 2 and B's 1, whatever order they were read in.
        for name in DirectoryListing.names("\(cache)/indexes") {
            let head = try String(decoding: fileBytes("\(cache)/indexes/\(name)").prefix(4096), as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false)
            #expect(head.count > 4 && (head[1].hasSuffix("/a/index.json") ? head[3] == "2" : head[3] == "1"), "\(head.prefix(4))")
        }
    }

    @Test func anUntrustedReadNeitherErasesNorLowersATrustedFloor() async throws {
        let signed = try SignedDist(count: 6)
        defer { signed.server.stop() }
        try await signed.build()
        let v1 = try signed.copyIndex(to: "index-v1.json")
        try signed.changeAGIF(seed: 83)
        try await signed.build(at: trustT0.addingTimeInterval(60))
        #expect(try readIndex(signed.indexPath).sequence == 2)
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let directory = signed.workspace.file("lazy")
        let trust = IndexTrust(keys: [signed.key.secret.publicKey], now: Self.now)
        let trusted = LazyGIFCache(directory: directory, indexURL: url, indexMaxAge: .zero, trust: trust)
        let untrusted = LazyGIFCache(directory: directory, indexURL: url, indexMaxAge: .zero)
        #expect(try await trusted.index().sequence == 2)
        #expect(try await untrusted.index().sequence == 2)

        // An attacker replays the old signed index (sequence 1) at the URL.
        try signed.replay(v1)
        // A read without trusted keys takes it (it checks no signature)…
        #expect(try await untrusted.index().sequence == 1)
        // …and neither that nor a new cache object on the directory lowers the trusted floor.
        for cache in [trusted, LazyGIFCache(directory: directory, indexURL: url, indexMaxAge: .zero, trust: trust)] {
            await #expect {
                _ = try await cache.index()
            } throws: { error in
                guard case PackClientError.untrusted(let refusal) = error else { return false }
                return refusal.reason == .rollback && refusal.detail.contains("2")
            }
        }
        // The command line (default max age) too, after the stored index's age is past.
        for slot in DirectoryListing.names("\(directory)/indexes") {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: "\(directory)/indexes/\(slot)")
        }
        let id = try #require(try readIndex(signed.indexPath).packs.first?.exercises.first { $0.gif != nil }?.id)
        let environment = Self.environment(home: signed.workspace.file("home"))
        let untrustedCat = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", directory, id], environment: environment)
        #expect(untrustedCat.status == 0, "\(untrustedCat.error)")
        let trustedCat = try await ClientCommandTests.gifpack(
            ["cat", "--index", url, "--cache", directory, id, "--trusted-key", signed.key.publicPath],
            environment: environment)
        #expect(trustedCat.status == 1 && trustedCat.output.isEmpty && trustedCat.error.contains("rollback"), "\(trustedCat.error)")
    }

    /// The floor belongs to the index URL, not to the key set. After `[old]` verified
    /// sequence 2, the documented rotation (`[old, next]`) refuses sequence 1 replayed at the URL,
    /// though the still-trusted old key signed it: the library and `cat --index` alike.
    @Test func aKeyRotationKeepsTheFloorOfTheIndexURL() async throws {
        let signed = try SignedDist(count: 6)
        defer { signed.server.stop() }
        try await signed.build()
        let v1 = try signed.copyIndex(to: "index-v1.json")
        try signed.changeAGIF(seed: 89)
        try await signed.build(at: trustT0.addingTimeInterval(60))
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let directory = signed.workspace.file("lazy")
        let next = try TestSigningKey(workspace: signed.workspace, name: "next")
        let old = IndexTrust(keys: [signed.key.secret.publicKey], now: Self.now)
        #expect(try await LazyGIFCache(directory: directory, indexURL: url, indexMaxAge: .zero, trust: old).index().sequence == 2)
        let id = try #require(try readIndex(signed.indexPath).packs.first?.exercises.first { $0.gif != nil }?.id)

        // The old signed index replayed at the URL.
        try signed.replay(v1)
        let rotating = IndexTrust(keys: [signed.key.secret.publicKey, next.secret.publicKey], now: Self.now)
        await #expect {
            _ = try await LazyGIFCache(directory: directory, indexURL: url, indexMaxAge: .zero, trust: rotating).index()
        } throws: { error in
            guard case PackClientError.untrusted(let refusal) = error else { return false }
            return refusal.reason == .rollback && refusal.detail.hasSuffix(" 2")
        }
        let cat = try await ClientCommandTests.gifpack(
            [
                "cat", "--index", url, "--cache", directory, id, "--trusted-key", signed.key.publicPath,
                "--trusted-key", next.publicPath
            ],
            environment: Self.environment(home: signed.workspace.file("home")))
        #expect(cat.status == 1 && cat.output.isEmpty && cat.error.contains("rollback"), "\(cat.error)")
    }

    // MARK: the lazy cache only uses, and only trims, a directory that is gifpack's

    /// Sets a file's modification time `seconds` in the past.
    static func age(_ path: String, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-seconds)], ofItemAtPath: path)
    }

    /// Every path under `directory` with its bytes' SHA-256 (directories as `/`).
    static func tree(_ directory: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        for name in (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String]) ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: "\(directory)/\(name)", isDirectory: &isDirectory) else { continue }
            entries[name] = isDirectory.boolValue ? "/" : sha256Hex(try fileBytes("\(directory)/\(name)"))
        }
        return entries
    }

    @Test func catRefusesAForeignCacheDirectoryAndTrimsOnlyItsOwnFiles() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 12)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let ids = LazyGIFCacheTests.distinctGIFs(dists)
        let files = FileManager.default

        // A folder of someone else's, with a tmp/ of old files and a few GIFs: refused, exit 2,
        // nothing in it created, changed or deleted, and no request made.
        let foreign = dists.workspace.file("foreign")
        try files.createDirectory(atPath: "\(foreign)/tmp", withIntermediateDirectories: true)
        try files.createDirectory(atPath: "\(foreign)/gifs", withIntermediateDirectories: true)
        let oldTemporary = try dists.workspace.write("an old file of someone else's", to: "foreign/tmp/session.txt")
        let oldLookalike = try dists.workspace.write("named like ours", to: "foreign/tmp/\(UUID().uuidString).gif")
        _ = try dists.workspace.write("notes", to: "foreign/notes.txt")
        _ = try dists.workspace.write(String(repeating: "x", count: 4096), to: "foreign/gifs/\(String(repeating: "a", count: 64)).gif")
        try Self.age(oldTemporary, by: 7200)
        try Self.age(oldLookalike, by: 7200)
        let before = try Self.tree(foreign)
        var mark = try await nginx.mark()
        let refused = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", foreign, "--cache-limit", "1", ids[0]])
        #expect(refused.status == 2 && refused.output.isEmpty, "\(refused.status) \(refused.error)")
        #expect(
            refused.error.contains(foreign) && refused.error.contains("not a gifpack cache")
                && refused.error.contains(".gifpack-lazy-cache") && refused.error.contains("notes.txt"), "\(refused.error)")
        #expect(try Self.tree(foreign) == before)
        #expect(try await nginx.log(since: mark).isEmpty)
        // The library says the same.
        await #expect {
            _ = try await LazyGIFCache(directory: foreign, indexURL: url).gif(forExercise: ids[0])
        } throws: { error in
            guard case PackClientError.cacheNotManaged(let path, _) = error else { return false }
            return path == foreign
        }
        #expect(try Self.tree(foreign) == before)
        // A file is not a directory.
        let plain = try dists.workspace.write("x", to: "plain-file")
        let notDirectory = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", plain, ids[0]])
        #expect(notDirectory.status == 2 && notDirectory.error.contains("not a directory"), "\(notDirectory.error)")

        // An empty folder and a missing one are claimed: the marker, then the cache.
        for name in ["empty", "missing/deeper"] {
            let directory = dists.workspace.file(name)
            if name == "empty" { try files.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            let cat = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", directory, ids[0]])
            #expect(cat.status == 0 && cat.output == dists.served(ids[0]), "\(cat.error)")
            #expect(files.fileExists(atPath: "\(directory)/.gifpack-lazy-cache"))
        }

        // Names the cache makes, without its marker (every released version marked its cache first), are
        // no cache of gifpack's: refused, with nothing created or deleted.
        let unmarked = dists.workspace.file("unmarked")
        try files.createDirectory(atPath: "\(unmarked)/gifs", withIntermediateDirectories: true)
        _ = try dists.workspace.write("gifpack-lazy-index 4\n\(url)\n\n\n\n\n\n{}", to: "unmarked/index")
        _ = try dists.workspace.write("", to: "unmarked/lock")
        let unmarkedCat = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", unmarked, ids[0]])
        #expect(unmarkedCat.status == 2 && unmarkedCat.error.contains("gifs, index, lock"), "\(unmarkedCat.error)")
        #expect(DirectoryListing.names(unmarked) == ["gifs", "index", "lock"])

        // In gifpack's own cache, trimming deletes only the names it makes: old tmp/<UUID>.frame|gif|index
        // and gifs/<64 hex>.gif beyond the limit; anything else put there stays.
        let own = dists.workspace.file("own")
        mark = try await nginx.mark()
        let first = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", own, ids[0]])
        #expect(first.status == 0, "\(first.error)")
        let strayGIF = try dists.workspace.write(String(repeating: "y", count: 8192), to: "own/gifs/holiday.gif")
        let strayUpper = try dists.workspace.write(String(repeating: "z", count: 8192), to: "own/gifs/\(String(repeating: "A", count: 64)).gif")
        let strayTemporary = try dists.workspace.write("keep", to: "own/tmp/keep.txt")
        let staleFrame = try dists.workspace.write("a killed download", to: "own/tmp/\(UUID().uuidString).frame")
        let staleOther = try dists.workspace.write("not ours", to: "own/tmp/\(UUID().uuidString).txt")
        for path in [strayGIF, strayUpper, strayTemporary, staleFrame, staleOther] { try Self.age(path, by: 7200) }
        let limit = dists.served(ids[1]).count
        let second = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", own, "--cache-limit", String(limit), ids[1]])
        #expect(second.status == 0 && second.output == dists.served(ids[1]), "\(second.error)")
        #expect(
            DirectoryListing.names("\(own)/gifs").sorted()
                == ["\(String(repeating: "A", count: 64)).gif", "\(sha256Hex(dists.served(ids[1]))).gif", "holiday.gif"],
            "\(DirectoryListing.names("\(own)/gifs"))")
        #expect(
            DirectoryListing.names("\(own)/tmp").sorted() == [PathText.lastComponent(staleOther), "keep.txt"].sorted(),
            "\(DirectoryListing.names("\(own)/tmp"))")
    }

    // MARK: Leftovers: a refused install creates nothing, a failed one cleans up

    @Test func aRefusedInstallCreatesNothingBesideTheCacheAndAFailedFirstInstallCleansUp() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let files = FileManager.default
        let source = PackIndexSource(built.indexPath)

        // <cache> is someone else's folder: refused before <cache>.d is made.
        let foreign = built.workspace.file("documents")
        try files.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        _ = try built.workspace.write("mine", to: "documents/letter.txt")
        await #expect {
            _ = try await PackInstaller(cacheDirectory: foreign).install(from: source)
        } throws: { error in
            guard case PackClientError.cacheNotManaged(let path, _) = error else { return false }
            return path == foreign
        }
        #expect(!files.fileExists(atPath: foreign + ".d"), "\(DirectoryListing.names(foreign + ".d"))")
        #expect(DirectoryListing.names(foreign) == ["letter.txt"])

        // An index refused by the trusted keys, and an unknown pack (the command line: exit 2): nothing made.
        let stranger = try TestSigningKey(workspace: built.workspace, name: "stranger")
        var trusting = PackInstaller(cacheDirectory: built.workspace.file("trusting"))
        trusting.trust = IndexTrust(keys: [stranger.secret.publicKey], now: Self.now)
        await #expect {
            _ = try await trusting.install(from: source)
        } throws: { error in
            guard case PackClientError.untrusted(let refusal) = error else { return false }
            return refusal.reason == .unsigned
        }
        let unknown = try await ClientCommandTests.gifpack([
            "install", "--index", built.indexPath, "--cache", built.workspace.file("unknown"),
            "--pack", "no-such-pack"
        ])
        #expect(unknown.status == 2 && unknown.error.contains("no-such-pack"), "\(unknown.error)")
        for name in ["trusting", "unknown"] {
            #expect(
                !files.fileExists(atPath: built.workspace.file(name)) && !files.fileExists(atPath: built.workspace.file(name + ".d")),
                "\(name): \(DirectoryListing.names(built.workspace.file(name + ".d")))")
        }

        // A first install that fails (the pack is missing on the server): no <cache>.d either.
        let site = built.workspace.file("site")
        try files.createDirectory(atPath: site, withIntermediateDirectories: true)
        try files.copyItem(atPath: built.indexPath, toPath: "\(site)/index.json")
        let server = try ClientStaticFileServer(root: site)
        defer { server.stop() }
        let failing = built.workspace.file("failing")
        await #expect {
            _ = try await PackInstaller(cacheDirectory: failing).install(from: PackIndexSource(server.baseURL + "/index.json"))
        } throws: { error in
            "\(error)".contains("404")
        }
        #expect(!files.fileExists(atPath: failing + ".d"), "\(DirectoryListing.names(failing + ".d"))")

        // With a generation installed, a refusal leaves <cache>.d exactly as it was (install.lock included),
        // and the lock still keeps a second install out while one runs.
        let cache = built.workspace.file("installed")
        _ = try await PackInstaller(cacheDirectory: cache).install(from: source)
        let store = DirectoryListing.names(cache + ".d")
        let tree = try treeSnapshot(cache)
        let again = try await ClientCommandTests.gifpack(["install", "--index", built.indexPath, "--cache", cache, "--pack", "no-such-pack"])
        #expect(again.status == 2)
        let treeAfter = try treeSnapshot(cache)
        #expect(DirectoryListing.names(cache + ".d") == store && treeAfter == tree)
        #expect(store.contains("install.lock"))
    }

    /// A GIF of `UpgradeDist.newGIF(seed:)` with a comment extension of `padding` bytes before its
    /// trailer: large on disk, a few hundred bytes once zstd has compressed it.
    static func paddedGIF(seed: UInt64, padding: Int) throws -> [UInt8] {
        var gif = try UpgradeDist.newGIF(seed: seed)
        try #require(gif.last == 0x3B)
        var comment: [UInt8] = [0x21, 0xFE]
        var left = padding
        while left > 0 {
            let count = min(255, left)
            comment.append(UInt8(count))
            comment += [UInt8](repeating: UInt8(ascii: "A"), count: count)
            left -= count
        }
        comment.append(0)
        gif.insert(contentsOf: comment, at: gif.count - 1)
        return gif
    }

    /// A real full disk: the cache lives on a 512 KiB tmpfs mounted for the test; a sparse upgrade
    /// fetches a GIF of 900 KiB (the tests' builds take GIFs up to 1 MB) in a frame of a few KB,
    /// and writing it into the new generation fails with ENOSPC.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aSparseUpgradeThatRunsOutOfDiskLeavesNoSparseFileBehind() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 16)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        try await onASmallTmpfs(dists.workspace.file("small"), size: "512k") { mountPoint in
            try await upgradeOnAFullDisk(dists, url: url, nginx: nginx, cache: "\(mountPoint)/gifs")
        }
    }

    private func upgradeOnAFullDisk(_ dists: UpgradeDist, url: String, nginx: NginxServer, cache: String) async throws {
        let installer = PackInstaller(cacheDirectory: cache)
        let first = try await installer.install(from: PackIndexSource(url))
        #expect(first.gifsWritten > 0)
        let before = try treeSnapshot(cache)

        dists.server.replaceGIF(id: dists.ids[3], with: try Self.paddedGIF(seed: 7, padding: 900 << 10))
        try await dists.build()
        try dists.publish()
        let bigEntry = try #require(try dists.index().packs.first?.gifEntry(forExercise: dists.ids[3]))
        #expect(bigEntry.location.size > 900 << 10 && bigEntry.location.frameLength < 64 << 10, "\(bigEntry.location)")
        let mark = try await nginx.mark()
        await #expect {
            _ = try await installer.install(from: PackIndexSource(url))
        } throws: { error in
            guard case PackClientError.fileSystem(_, _, let code) = error else { return false }
            return code == ENOSPC
        }
        let lines = try await nginx.log(since: mark)
        #expect(
            lines.contains { $0.path.hasPrefix("/packs/") && $0.status == 206 } && !lines.contains { $0.path.hasPrefix("/packs/") && $0.status == 200 },
            "the upgrade went the sparse way: \(lines)")
        let store = cache + ".d"
        #expect(DirectoryListing.names("\(store)/downloads").isEmpty, "\(DirectoryListing.names("\(store)/downloads"))")
        #expect(!DirectoryListing.names(store).contains { $0.hasPrefix(".staging-") || $0.hasPrefix(".link-") }, "\(DirectoryListing.names(store))")
        #expect(try treeSnapshot(cache) == before, "the installed generation is untouched")
    }
}

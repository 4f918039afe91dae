import Foundation
import Testing
@testable import GifPackDistFixtures
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackClient
import GifPackFormat
import GifPackHTTP
import GifPackIndexReader

/// A first install decodes a pack's GIFs while the pack is still arriving
/// (`PackFollower`, fed by each transport's `HTTPBodyProgress`), and what it installs is what an
/// install of the same pack from disk installs, byte for byte.
@Suite("Client: a first install decodes GIFs while the pack downloads, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct InstallFollowTests {
    /// What the installer's follow hook saw: each GIF handed over, with the pack bytes there by then.
    final class HandOvers: @unchecked Sendable {  // @unchecked: `seen` is guarded by `lock`.
        private let lock = NSLock()
        private var seen: [(sha256: String, downloaded: Int64)] = []

        func add(_ sha256: String, _ downloaded: Int64) { lock.withLock { seen.append((sha256, downloaded)) } }

        var all: [(sha256: String, downloaded: Int64)] { lock.withLock { seen } }
    }

    @Test(
        "GIFs are decoded, checked and written before the pack's last byte arrives; the cache equals a local install's",
        arguments: ["URLSession", "curl"])
    func gifsAreDecodedWhileThePackArrives(transportName: String) async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        // The pack drips (about 8 s for the whole file), so the order is plain to see.
        let nginx = try await NginxServer.start(NginxServer.Options(root: dists.site, packsLimitRate: Int(pack.bytes / 8)))
        defer { nginx.stop() }

        let cache = dists.workspace.file("remote/gifs")
        try FileManager.default.createDirectory(atPath: dists.workspace.file("remote"), withIntermediateDirectories: true)
        let handOvers = HandOvers()
        var installer = PackInstaller(cacheDirectory: cache)
        installer.followHook = { handOvers.add($0, $1) }
        let report = try await installer.install(
            from: PackIndexSource(nginx.baseURL + "/index.json"),
            client: try InstallCancellationTests.transport(transportName))

        // Order: GIFs were handed over (read, hashed, walked, written) while the pack was still arriving.
        let early = handOvers.all.filter { $0.downloaded < pack.bytes }
        #expect(!early.isEmpty, "no GIF was decoded before the download ended: \(handOvers.all.map(\.downloaded))")
        #expect(Set(handOvers.all.map(\.sha256)).isSubset(of: Set(pack.gifs.map(\.sha256))))
        #expect(report.gifsWritten == Set(pack.exercises.compactMap(\.gif)).count)

        // The same files as an install of the very pack from disk (no download, nothing followed);
        // the manifests differ only in the index record a remote install keeps.
        let local = dists.workspace.file("local/gifs")
        try FileManager.default.createDirectory(atPath: dists.workspace.file("local"), withIntermediateDirectories: true)
        _ = try await PackInstaller(cacheDirectory: local).install(from: PackIndexSource(dists.site + "/index.json"))
        var remoteFiles = try cacheContents(cache), localFiles = try cacheContents(local)
        #expect(remoteFiles.removeValue(forKey: InstallManifest.fileName) != nil)
        #expect(localFiles.removeValue(forKey: InstallManifest.fileName) != nil)
        #expect(remoteFiles == localFiles)
        #expect(!remoteFiles.isEmpty)
        for exercise in pack.exercises {
            guard let hash = exercise.gif else { continue }
            #expect(sha256Hex(try fileBytes("\(cache)/\(exercise.id).gif")) == hash, "\(exercise.id)")
        }
        // Nothing of the follower's is left in the store: the generation, the lock and the downloads.
        let store = DirectoryListing.names("\(cache).d").filter { $0.hasPrefix(".staging-") }
        #expect(store.isEmpty, "\(store)")
    }

    @Test("the follower is woken when its next frame is in the file, not at every chunk the transport writes")
    func theFollowerWakesOncePerFrame() async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        let bytes = try fileBytes("\(dists.site)/\(pack.file)")
        let final = dists.workspace.file("follow/pack.tar.zst")
        try FileManager.default.createDirectory(atPath: dists.workspace.file("follow"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: final + ".part", contents: nil)
        let part = try FileHandle(forWritingTo: URL(fileURLWithPath: final + ".part"))
        defer { try? part.close() }
        let follower = PackFollower(pack: pack, final: final, directory: dists.workspace.file("follow/unpacked"), cancellation: nil)
        follower.start()
        let report = follower.progress(from: 0)

        // The file grows by 1 KiB chunks (many to a GIF, as URLSession's 16 KiB are to a real one), each reported as
        // written, and the next waits until the follower is waiting again: every report it could
        // be woken by comes while it waits.
        let chunk = 1 << 10
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try part.write(contentsOf: bytes[offset..<end])
            offset = end
            report(Int64(offset))
            try await waitUntil { follower.isWaiting || follower.isDone }
        }
        let ready = follower.results().ready

        let gifs = Set(pack.gifs.map(\.sha256))
        #expect(Set(ready.keys) == gifs, "the follower missed GIFs it could decode")
        let chunks = (bytes.count + chunk - 1) / chunk
        // One wake-up for the catalog, one per GIF at most, one at the end; woken at every report,
        // it would be about once per chunk.
        #expect(follower.wakeUpCount <= gifs.count + 2, "\(follower.wakeUpCount) wake-ups for \(gifs.count) GIFs in \(chunks) chunks")
        #expect(chunks > 2 * (gifs.count + 2), "the pack is too small to tell: \(chunks) chunks for \(gifs.count) GIFs")
    }

    @Test("the install plan takes the catalog the follower read and checked instead of reading its frame again")
    func thePlanTakesTheFollowersCatalog() async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        let path = "\(dists.site)/\(pack.file)"
        let final = dists.workspace.file("follow/pack.tar.zst")
        try FileManager.default.createDirectory(atPath: dists.workspace.file("follow"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: final + ".part")
        let follower = PackFollower(pack: pack, final: final, directory: dists.workspace.file("follow/unpacked"), cancellation: nil)
        follower.start()
        follower.progress(from: 0)(pack.bytes)
        // Told the whole file is there, it takes every GIF and ends on its own.
        try await waitUntil { follower.isDone }
        let followed = follower.results()

        // The follower hands over the catalog's records, as CatalogCheck reads them from the file.
        let catalog = try CatalogCheck.read(pack: pack, reader: try PackFrameReader(path: path))
        var records: [String: GIFMetadata] = [:]
        for exercise in catalog.exercises { if let gif = exercise.gif { records[gif.sha256] = gif } }
        #expect(followed.catalog == records)
        #expect(!records.isEmpty)

        // With them, making the plan reads nothing through the entries' reader (the catalog's frame
        // is the only entry a plan reads); without them, it reads the catalog's frame.
        var item = DownloadedPack(pack: pack, path: path, isCopy: false, bytesTransferred: 0, resumedFrom: nil)
        item.checkedCatalog = followed.catalog
        let handed = try InstallPlan(packs: [item], limits: .standard)
        #expect(try #require(handed.entries.first).reader.bytesRead == 0)
        #expect(handed.entries.map(\.metadata) == pack.gifs.map { records[$0.sha256] })
        item.checkedCatalog = nil
        let read = try InstallPlan(packs: [item], limits: .standard)
        #expect(try #require(read.entries.first).reader.bytesRead == pack.catalog.frameLength)
        #expect(read.entries.map(\.metadata) == handed.entries.map(\.metadata))
    }
}

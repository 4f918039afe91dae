import ExerciseDBFixture
import Foundation
import Glibc
import GifPackClient
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

@Suite("Client: install packs into a cache", .timeLimit(.minutes(5)))
struct ClientInstallTests {
    @Test func installFromLocalIndexGivesByteIdenticalGIFsWithSharedFilesLinked() async throws {
        let built = try await ClientBuiltDist.make()
        defer { built.server.stop() }
        let cache = built.workspace.file("app/gifs")
        let index = try built.index()
        let pack = try #require(index.packs.first)

        let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(built.indexPath))

        #expect(report.generation == 1)
        #expect(report.exercises == 12)
        #expect(report.gifsWritten == Set(pack.exercises.compactMap(\.gif)).count)
        #expect(report.added.count == 12 && report.removed.isEmpty)
        for exercise in pack.exercises {
            let path = "\(cache)/\(exercise.id).gif"
            #expect(try fileBytes(path) == built.served(exercise.id), "\(exercise.id)")
        }
        // Exercises sharing a GIF share one inode.
        let byHash = Dictionary(grouping: pack.exercises.filter { $0.gif != nil }, by: { $0.gif! })
        let shared = try #require(byHash.values.first { $0.count > 1 }, "the fixture repeats a GIF every 7 exercises")
        #expect(Set(try shared.map { try fileIdentity("\(cache)/\($0.id).gif").inode }).count == 1)
        // The cache is a link to a generation holding the manifest; the pack file was read in place.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cache) == "gifs.d/g000001")
        let manifest = try #require(try InstallManifest.read(cacheDirectory: cache))
        #expect(manifest.packs.map(\.name) == [pack.name] && manifest.packs.map(\.version) == [pack.version])
        #expect(manifest.layout == .byID)
        #expect(FileManager.default.fileExists(atPath: "\(built.dist)/\(pack.file)"))
        // The same install again writes nothing.
        let again = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(built.indexPath))
        #expect(again.isUnchanged && again.generation == 1)
    }

    @Test func byHashLayoutWritesEachGIFOnceAndAnIdMap() async throws {
        let built = try await ClientBuiltDist.make()
        defer { built.server.stop() }
        let cache = built.workspace.file("hashed")

        let report = try await PackInstaller(cacheDirectory: cache, layout: .byHash).install(from: PackIndexSource(built.indexPath))

        let pack = try #require(try built.index().packs.first)
        let files = try FileManager.default.contentsOfDirectory(atPath: "\(cache)/gifs")
        #expect(Set(files) == Set(pack.gifs.map { "\($0.sha256).gif" }))
        #expect(report.linksCreated == 0)
        let map = try JSONDecoder().decode(
            [String: String?].self,
            from: Data(contentsOf: URL(fileURLWithPath: "\(cache)/index-by-id.json")))
        #expect(map.count == 12)
        let cached = try InstalledCache(directory: cache)
        for exercise in pack.exercises {
            #expect(map[exercise.id] == .some(exercise.gif))
            let path = try #require(cached.gifPath(forExercise: exercise.id))
            #expect(try fileBytes(path) == built.served(exercise.id))
        }
        #expect(cached.gifPath(forExercise: "nope") == nil)
    }

    @Test func interruptedDownloadResumesWithARangeRequestAndInstalls() async throws {
        let built = try await ClientBuiltDist.make()
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let files = try ClientStaticFileServer(root: built.dist)
        defer { files.stop() }
        let cut = Int(pack.bytes / 3)
        files.cutShort(path: "/\(pack.file)", afterBytes: cut)
        let cache = built.workspace.file("remote")

        let report = try await PackInstaller(cacheDirectory: cache)
            .install(from: PackIndexSource(files.baseURL + "/index.json"))

        let packRequests = files.requests.filter { $0.path == "/\(pack.file)" }
        #expect(packRequests.map(\.range) == [nil, "bytes=\(cut)-"])
        #expect(report.bytesDownloaded == pack.bytes)
        for exercise in pack.exercises {
            #expect(try fileBytes("\(cache)/\(exercise.id).gif") == built.served(exercise.id))
        }
        // The verified download is deleted after the install.
        #expect(DirectoryListing.names(built.workspace.file("remote.d/downloads")).isEmpty)
    }

    @Test func serverIgnoringTheRangeMakesTheDownloadRestartFromZero() async throws {
        let built = try await ClientBuiltDist.make(count: 6)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let files = try ClientStaticFileServer(root: built.dist)
        defer { files.stop() }
        files.cutShort(path: "/\(pack.file)", afterBytes: Int(pack.bytes / 2))
        files.ignoreRange(path: "/\(pack.file)")
        let downloader = PackDownloader(directory: built.workspace.file("downloads"))

        let downloaded = try await downloader.fetch(pack, from: PackIndexSource(files.baseURL + "/index.json"))

        let ranges = files.requests.filter { $0.path == "/\(pack.file)" }.map(\.range)
        #expect(ranges == [nil, "bytes=\(pack.bytes / 2)-", nil])
        #expect(try fileBytes(downloaded.path) == fileBytes("\(built.dist)/\(pack.file)"))
    }

    @Test func upgradeWritesOnlyChangedGIFsAndDropsThoseThatLeft() async throws {
        let built = try await ClientBuiltDist.make(fetch: "  refresh_after: 0")
        defer { built.server.stop() }
        let cache = built.workspace.file("cache-up")
        let installer = PackInstaller(cacheDirectory: cache)
        _ = try await installer.install(from: PackIndexSource(built.indexPath))
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        let before = Dictionary(uniqueKeysWithValues: try ids.map { ($0, try fileIdentity("\(cache)/\($0).gif")) })
        let pinned = try InstalledCache(directory: cache)

        // v2: one GIF changes, two exercises leave the pack.
        let changedID = ids[3]
        let oldChanged = built.served(changedID)
        let replacement = try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 3, colors: 4, seed: 4242)
        built.server.replaceGIF(id: changedID, with: replacement)
        let kept = ids.filter { $0 != ids[0] && $0 != ids[1] }
        try await built.build(
            packs: """
                packs:
                  - name: all
                    selector:
                      ids: [\(kept.map { "\"\($0)\"" }.joined(separator: ", "))]
                """, fetch: "  refresh_after: 0")
        #expect(try built.index().packs.first?.version == 2)

        let report = try await installer.install(from: PackIndexSource(built.indexPath))

        #expect(report.generation == 2)
        #expect(report.removed == [ids[0], ids[1]])
        #expect(report.changed == [changedID])
        #expect(report.gifsWritten == 1)
        // Every kept GIF was checked by the first install against the same catalog record: none is decoded again.
        #expect(report.gifChecksSkipped == report.gifsReused && report.gifsReused > 0)
        #expect(try fileBytes("\(cache)/\(changedID).gif") == replacement)
        #expect(try fileIdentity("\(cache)/\(changedID).gif").inode != before[changedID]!.inode)
        for id in kept where id != changedID {
            let now = try fileIdentity("\(cache)/\(id).gif")
            #expect(now.inode == before[id]!.inode && now.mtime == before[id]!.mtime, "\(id) must be untouched")
            #expect(try fileBytes("\(cache)/\(id).gif") == built.served(id))
        }
        #expect(!FileManager.default.fileExists(atPath: "\(cache)/\(ids[0]).gif"))
        #expect(!FileManager.default.fileExists(atPath: "\(cache)/\(ids[1]).gif"))
        // A reader that pinned the old generation still reads the old complete set.
        #expect(try fileBytes(try #require(pinned.gifPath(forExercise: changedID))) == oldChanged)
        #expect(try fileBytes(try #require(pinned.gifPath(forExercise: ids[0]))) == built.served(ids[0]))
        // The previous generation stays for readers that resolved it; nothing else is left behind.
        #expect(Set(DirectoryListing.names("\(cache).d")) == ["g000001", "g000002", "install.lock"])
    }

    @Test func aKeptGIFIsDecodedAgainUnlessTheSameRecordWasCheckedBefore() async throws {
        let built = try await ClientBuiltDist.make(fetch: "  refresh_after: 0")
        defer { built.server.stop() }
        let cache = built.workspace.file("cache-checked")
        let installer = PackInstaller(cacheDirectory: cache)
        let installed = try await installer.install(from: PackIndexSource(built.indexPath))
        let first = try #require(try InstallManifest.read(cacheDirectory: cache))
        let recorded = try #require(first.checkedGIFs)
        let hashes = Set(first.exercises.values.compactMap { $0 })
        #expect(Set(recorded.keys) == hashes, "every installed GIF is recorded with the record it was checked against")
        #expect(recorded.allSatisfy { $0.key == $0.value.sha256 })

        // The recorded checks of two GIFs that stay no longer match the catalog (one record edited,
        // one gone): those two are decoded again, the other kept ones are not.
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        let leaving = sha256Hex(built.served(ids[0]))
        let touched = Array(recorded.keys.filter { $0 != leaving }.sorted().prefix(2))
        try #require(touched.count == 2)
        var edited = first
        edited.checkedGIFs![touched[0]]!.frames += 1
        edited.checkedGIFs!.removeValue(forKey: touched[1])
        try JSONEncoder().encode(edited).write(to: URL(fileURLWithPath: "\(installed.generationDirectory)/\(InstallManifest.fileName)"))

        built.server.replaceGIF(id: ids[0], with: try GIFSynthesizer.animatedGIF(width: 30, height: 30, frames: 2, colors: 4, seed: 9191))
        try await built.build(fetch: "  refresh_after: 0")
        let report = try await installer.install(from: PackIndexSource(built.indexPath))
        #expect(report.gifsWritten == 1)
        #expect(report.gifsReused >= 3)
        #expect(report.gifChecksSkipped == report.gifsReused - 2, "skipped \(report.gifChecksSkipped) of \(report.gifsReused) kept")
        let second = try #require(try InstallManifest.read(cacheDirectory: cache))
        // The new generation records what it checked, from the catalog, not the edited manifest.
        #expect(second.checkedGIFs?[touched[0]] == recorded[touched[0]] && second.checkedGIFs?[touched[1]] == recorded[touched[1]])
    }

    @Test func aSecondInstallWhileOneHoldsTheLockIsRefused() async throws {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: try ClientHostilePackTests.gifs()).write(to: workspace.file("dist"))
        let cache = workspace.file("locked")
        try FileManager.default.createDirectory(atPath: "\(cache).d", withIntermediateDirectories: true)
        let fd = open("\(cache).d/install.lock", O_RDWR | O_CREAT, 0o644)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)

        await #expect(throws: PackClientError.cacheLocked(path: cache)) {
            _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
        }
        flock(fd, LOCK_UN)
        let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
        #expect(report.gifsWritten == 3)
    }
}

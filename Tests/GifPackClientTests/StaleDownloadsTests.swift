import Foundation
import GifPackSystem
@testable import GifPackClient
import Glibc
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// `<cache>.d/downloads/` holds at most the packs of the index being installed.
/// A download (or `.part`, or `.sparse`) of a pack an accepted index no longer lists goes before
/// anything is fetched; a `.part` of a pack the index still lists stays to be resumed; files a
/// download does not make stay.
@Suite("Client: downloads of packs the installed index no longer lists are removed", .serialized, .timeLimit(.minutes(5)))
struct StaleDownloadsTests {
    @Test func anInterruptedDownloadOfAnEarlierIndexGoesAndOneOfAPackStillListedStays() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let server = try ClientStaticFileServer(root: builds.v2)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"
        let earlier = try #require(try readIndex("\(builds.v1)/index.json").packs.first)
        let packs = try readIndex("\(builds.v2)/index.json").packs
        let (first, second) = (try #require(packs.first { $0.name == "first" }), try #require(packs.first { $0.name == "second" }))

        // What an interrupted install of the earlier index left (its lock, a half-downloaded .part,
        // a kept verified copy, a killed sparse upgrade's file), a half .part of a pack the new index
        // still lists, and a file gifpack did not make.
        let cache = builds.workspace.file("app-cache")
        let downloads = PackInstaller(cacheDirectory: cache).downloadDirectory
        let downloader = PackDownloader(directory: downloads)
        try FileSystem.createDirectory(downloads)
        try FileSystem.writeAtomically([], to: "\(cache).d/install.lock")
        let earlierBytes = try fileBytes("\(builds.v1)/\(earlier.file)")
        let earlierFile = downloader.downloadPath(for: earlier)
        try FileSystem.writeAtomically(Array(earlierBytes.prefix(earlierBytes.count / 2)), to: earlierFile + ".part")
        try FileSystem.writeAtomically(earlierBytes, to: earlierFile)
        let sparse = "\(downloads)/\(earlier.name)-v\(earlier.version)-\(earlier.sha256.prefix(16)).sparse"
        try FileSystem.writeAtomically(earlierBytes, to: sparse)
        let secondBytes = try fileBytes("\(builds.v2)/\(second.file)")
        let secondPart = downloader.downloadPath(for: second) + ".part"
        try FileSystem.writeAtomically(Array(secondBytes.prefix(secondBytes.count / 2)), to: secondPart)
        try FileSystem.writeAtomically(Array("mine".utf8), to: "\(downloads)/notes.txt")
        let lookalike = "\(downloads)/\(earlier.name)-v\(earlier.version)-NOT-HEX.tar.zst"
        try FileSystem.writeAtomically(Array("mine".utf8), to: lookalike)

        let installed = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache, "--pack", first.name])
        #expect(installed.status == 0, "\(installed.error)")
        #expect(
            DirectoryListing.names(downloads) == [PathText.lastComponent(lookalike), PathText.lastComponent(secondPart), "notes.txt"].sorted(),
            "\(DirectoryListing.names(downloads))")
        #expect(try fileBytes(secondPart) == Array(secondBytes.prefix(secondBytes.count / 2)), "the .part to resume is untouched")

        // The pack still listed resumes from its .part and leaves nothing behind once installed.
        let both = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", cache])
        #expect(both.status == 0, "\(both.error)")
        #expect(DirectoryListing.names(downloads) == [PathText.lastComponent(lookalike), "notes.txt"].sorted(), "\(DirectoryListing.names(downloads))")
    }

    /// The documented bound on a real small disk: a 16 MiB tmpfs filled by a kept download of the
    /// earlier index until half of what the new packs' downloads need is left. Without the clean-up
    /// the install fails with ENOSPC (and every later one too).
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aKeptDownloadOfAnEarlierIndexDoesNotFillASmallDisk() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let server = try ClientStaticFileServer(root: builds.v2)
        defer { server.stop() }
        let earlier = try #require(try readIndex("\(builds.v1)/index.json").packs.first)
        let earlierBytes = try fileBytes("\(builds.v1)/\(earlier.file)")
        let needed = try readIndex("\(builds.v2)/index.json").packs.reduce(0) { $0 + Int($1.bytes) }
        try await onASmallTmpfs(builds.workspace.file("small"), size: "16m") { mountPoint in
            let cache = "\(mountPoint)/gifs"
            let downloads = PackInstaller(cacheDirectory: cache).downloadDirectory
            try FileSystem.createDirectory(downloads)
            try FileSystem.writeAtomically([], to: "\(cache).d/install.lock")
            // The earlier index's download, padded until half of what the new packs need is left.
            var filler = earlierBytes
            let free = try #require(Self.freeBytes(mountPoint))
            filler += [UInt8](repeating: 0x5A, count: max(0, Int(free) - filler.count - needed / 2))
            try FileSystem.writeAtomically(filler, to: PackDownloader(directory: downloads).downloadPath(for: earlier) + ".part")
            let installed = try await ClientCommandTests.gifpack(["install", "--index", server.baseURL + "/index.json", "--cache", cache])
            #expect(installed.status == 0, "\(installed.error)")
            #expect(DirectoryListing.names(downloads).isEmpty, "\(DirectoryListing.names(downloads))")
        }
    }

    static func freeBytes(_ path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}

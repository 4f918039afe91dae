import Foundation
import GifPackSystem
@testable import GifPackClient
import Glibc
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// Files that are not files. Every file the client, the transports and
/// the publisher open is opened without following a symbolic link and refused unless it is a
/// regular file (`RegularFile`): a link planted where a download is written cannot make it write
/// through to its target, and a FIFO cannot hang an install, a `cat` or a publish. Each command runs
/// under `timeout -s KILL 60`: without the checks it hangs and is killed (status 137); with them it
/// fails at once with status 1, naming the path and what is there.
@Suite("Files that are not files: links and FIFOs in caches, downloads and publish targets", .tags(.nginx), .serialized, .timeLimit(.minutes(5)))
struct NonRegularFileTests {
    /// `gifpack` with a 60 s bound: a hang is killed (status 137) instead of holding the suite.
    static func bounded(_ arguments: [String]) async throws -> (status: Int32, output: [UInt8], error: String) {
        let (status, output, error) = try await runCapturing("/usr/bin/timeout", ["-s", "KILL", "60", productPath("gifpack")] + arguments)
        return (status, output, String(decoding: error, as: UTF8.self))
    }

    static func text(_ path: String) -> String? {
        (try? FileSystem.readAll(path)).flatMap { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    static func kind(_ path: String) -> FileType? {
        SystemCalls.linkStatus(path).map(SystemCalls.fileType)
    }

    // MARK: <cache>.d/downloads/<pack>.tar.zst.part

    @Test func aLinkOrAFIFOAtAPartFileIsRefusedAndNothingIsWrittenThroughIt() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let server = try ClientStaticFileServer(root: built.dist)
        defer { server.stop() }
        let url = server.baseURL + "/index.json"
        let pack = try #require(try built.index().packs.first)
        let cache = built.workspace.file("app-cache")
        let installer = PackInstaller(cacheDirectory: cache)
        // What a first install interrupted mid-download leaves: the store, its lock and downloads/.
        try FileSystem.createDirectory(installer.downloadDirectory)
        try FileSystem.writeAtomically([], to: "\(cache).d/install.lock")
        let part = PackDownloader(directory: installer.downloadDirectory).downloadPath(for: pack) + ".part"
        let victim = built.workspace.file("victim.txt")
        try FileSystem.writeAtomically(Array("precious".utf8), to: victim)
        #expect(SystemCalls.symbolicLink(victim, at: part) == 0)

        // The command line (curl) and the library (URLSession): refused, naming the path, the target untouched.
        let viaCurl = try await Self.bounded(["install", "--index", url, "--cache", cache])
        #expect(viaCurl.status == 1, "\(viaCurl.status) \(viaCurl.error)")
        #expect(viaCurl.error.contains(part) && viaCurl.error.contains("not a regular file (a symbolic link)"), "\(viaCurl.error)")
        await #expect {
            _ = try await installer.install(from: PackIndexSource(url))
        } throws: { error in
            "\(error)".contains(part) && "\(error)".contains("not a regular file (a symbolic link)")
        }
        #expect(Self.text(victim) == "precious", "the link's target was written through")
        #expect(Self.kind(part) == .symbolicLink && !FileSystem.exists(cache))

        // A FIFO there: refused at once, never a hang.
        FileSystem.remove(part)
        #expect(mkfifo(part, 0o644) == 0)
        let fifo = try await Self.bounded(["install", "--index", url, "--cache", cache])
        #expect(fifo.status == 1, "\(fifo.status) \(fifo.error)")
        #expect(fifo.error.contains(part) && fifo.error.contains("not a regular file (a FIFO)"), "\(fifo.error)")
        #expect(Self.kind(part) == .fifo && !FileSystem.exists(cache))

        // Gone again: the install goes through.
        FileSystem.remove(part)
        let installed = try await Self.bounded(["install", "--index", url, "--cache", cache])
        #expect(installed.status == 0, "\(installed.error)")
    }

    // MARK: gifs/<sha256>.gif in the lazy cache

    @Test func aFIFOOrALinkToOneAtACachedGIFIsNeverOpenedAndTheGIFIsFetchedAgain() async throws {
        let webSite = try await UpgradeDist.servedByNginx(count: 12)
        defer { webSite.stop() }
        let (dists, nginx, url) = (webSite.dists, webSite.nginx, webSite.url)
        let directory = dists.workspace.file("lazy")
        let id = try #require(LazyGIFCacheTests.distinctGIFs(dists).first)
        let served = dists.served(id)
        let gif = LazyGIFStore(directory: directory).gifPath(sha256Hex(served))
        let first = try await Self.bounded(["cat", "--index", url, "--cache", directory, id])
        #expect(first.status == 0 && Self.kind(gif) == .regular, "\(first.error)")

        // A FIFO at the GIF's name, then a link to a FIFO elsewhere: each is served again from the
        // network and replaced by a regular file; the FIFO the link pointed to is left as it was.
        let elsewhere = dists.workspace.file("elsewhere.fifo")
        #expect(mkfifo(elsewhere, 0o644) == 0)
        for plant in ["a FIFO", "a link to a FIFO"] {
            FileSystem.remove(gif)
            if plant == "a FIFO" { #expect(mkfifo(gif, 0o644) == 0) } else { #expect(SystemCalls.symbolicLink(elsewhere, at: gif) == 0) }
            let mark = try await nginx.mark()
            let cat = try await Self.bounded(["cat", "--index", url, "--cache", directory, id])
            #expect(cat.status == 0 && cat.output == served, "\(plant): \(cat.status) \(cat.error)")
            #expect(Self.kind(gif) == .regular, "\(plant)")
            #expect(try await nginx.log(since: mark).contains { $0.status == 206 }, "\(plant): fetched again")
        }
        #expect(Self.kind(elsewhere) == .fifo)
    }

    // MARK: A publish target's pack keys

    @Test func aFIFOOrALinkWherePublishWritesAPackIsRefusedNamingIt() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let pack = try #require(try readIndex("\(builds.v2)/index.json").packs.first)
        let victim = builds.workspace.file("victim.txt")
        try FileSystem.writeAtomically(Array("precious".utf8), to: victim)
        for plant in ["a FIFO", "a symbolic link"] {
            let target = builds.workspace.file("www-\(plant.split(separator: " ").last ?? "")")
            let key = "\(target)/\(pack.file)"
            try FileSystem.createDirectory(PathText.parent(key))
            if plant == "a FIFO" { #expect(mkfifo(key, 0o644) == 0) } else { #expect(SystemCalls.symbolicLink(victim, at: key) == 0) }
            let published = try await Self.bounded(["publish", "--from", builds.v2, "--to", target])
            #expect(published.status == 1, "\(plant): \(published.status) \(published.error)")
            #expect(published.error.contains(key) && published.error.contains("not a regular file (\(plant))"), "\(published.error)")
            #expect(!FileSystem.exists("\(target)/index.json"), "\(plant): nothing was published")
        }
        #expect(Self.text(victim) == "precious")
    }
}

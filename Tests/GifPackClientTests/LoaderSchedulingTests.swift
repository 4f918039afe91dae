import Foundation
@testable import GifPackClient
import GifPackHTTP
import GifPackTransport
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// The loader's scheduling — a
/// large prefetch that stops when cancelled and never holds up a visible request, refreshes one
/// after another, one deadline per call, a GIF found by hash in any rendition, one fetch per GIF,
/// another process's install waited for, one installed snapshot for concurrent callers — against
/// nginx, with both transports where a transport is involved.
@Suite("Client: the loader's scheduling, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct LoaderSchedulingTests {
    typealias Served = GIFLoaderTests.Served
    typealias Steps = GIFLoaderRefreshTests.Steps

    static func transport(_ name: String) throws -> any HTTPTransport {
        try #require(try GIFLoaderTests.transports().first { $0.name == name }).transport
    }

    /// Range requests nginx logged since `mark`, polled gently (each poll is a request too).
    static func ranges(_ served: Served, since mark: Int) async throws -> Int {
        try await served.rangeRequests(since: mark).count
    }

    @Test(
        "a prefetch of 10,000 ids keeps a few loads in flight, sends no request after cancel() and finished() returns once its work stopped",
        arguments: ["URLSession", "curl"])
    func cancellingALargePrefetchStopsIt(transportName: String) async throws {
        let served = try await Served.make(count: 100, limitRate: 2048)
        defer { served.stop() }
        var configuration = GIFLoader.Configuration()
        configuration.memoryCountLimit = 0  // every id is fetched again: the prefetch stays on the network
        configuration.lazyCacheByteLimit = 0
        let loader = try GIFLoader(
            indexURL: served.indexURL, cacheFolder: served.folder("app"),
            transport: try Self.transport(transportName), configuration: configuration)
        let distinct = served.distinct
        let ids = (0..<10_000).map { distinct[$0 % distinct.count] }
        let mark = try await served.nginx.mark()
        let handle = loader.prefetch(ids)
        // A few workers take the ids: however long the list, a few loads wait at the gate, not one per id.
        var mostWaiting = 0
        try await waitUntil(every: .milliseconds(100)) {
            mostWaiting = max(mostWaiting, await loader.gate.waiting.prefetches)
            return try await Self.ranges(served, since: mark) >= 4
        }
        handle.cancel()
        // Every request sent before cancel() has either ended (logged now) or is one of the
        // maxConcurrentFetches in transfer.
        let before = try await Self.ranges(served, since: mark)
        await handle.finished()
        #expect(loader.gifFlights.isIdle && loader.fetchFlights.isIdle, "finished() returned with work still running")
        await loader.settle()
        let after = try await Self.ranges(served, since: mark)
        #expect(after <= before + configuration.maxConcurrentFetches, "\(after - before) range requests after cancel()")
        #expect(mostWaiting <= 2 * configuration.maxConcurrentFetches, "\(mostWaiting) prefetch loads waited at the gate at once")
    }

    @Test("a memory-tier hit asked for during a prefetch of 10,000 ids is answered before the prefetch moves on")
    func aVisibleHitDuringALargePrefetch() async throws {
        let served = try await Served.make(limitRate: 2048)
        defer { served.stop() }
        let bySize = served.distinct.sorted { served.dists.served($0).count < served.dists.served($1).count }
        let small = try #require(bySize.first)
        let size = served.dists.served(small).count
        let others = bySize.filter { served.dists.served($0).count > size }
        try #require(others.count >= 8)
        var configuration = GIFLoader.Configuration()
        configuration.memoryCostLimit = size  // only the small GIF fits: the prefetch stays on the network
        configuration.lazyCacheByteLimit = 0
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), configuration: configuration)
        // In memory by its hash: asking by exercise id goes down the tiers until the memory check after the index.
        let hash = try #require(try served.dists.index().packs.first?.exercises.first { $0.id == small }?.gif)
        #expect(try await loader.gif(sha256: hash)?.tier == .network)
        let mark = try await served.nginx.mark()
        let handle = loader.prefetch((0..<10_000).map { others[$0 % others.count] })
        defer { handle.cancel() }
        try await waitUntil(every: .milliseconds(100)) { try await Self.ranges(served, since: mark) >= 2 }
        let asked = try await Self.ranges(served, since: mark)
        let hit = try #require(try await loader.gif(for: small))
        let answered = try await Self.ranges(served, since: mark)
        #expect(hit.tier == .memory && hit.sha256 == hash)
        // The ones in transfer when it was asked may end meanwhile; no prefetch beyond them went first.
        #expect(answered - asked <= configuration.maxConcurrentFetches, "\(answered - asked) prefetches answered first")
        handle.cancel()
        await handle.finished()
    }

    @Test(
        "a refresh started while another caller's refresh is being cancelled waits for it to stop, then installs",
        arguments: ["URLSession", "curl"])
    func aRefreshAfterACancelledOne(transportName: String) async throws {
        let served = try await Served.make(limitRate: 16384)
        defer { served.stop() }
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), transport: try Self.transport(transportName))
        let steps = Steps()
        let first = testTask { try await loader.refresh { steps.add($0) } }
        try await waitUntil { steps.all.contains { $0.stage == .fetching && $0.bytesDone > 0 } }
        first.cancel()
        let second = try await loader.refresh()
        await #expect(throws: CancellationError.self) { _ = try await first.value }
        #expect(!second.isUnchanged)
        let id = try #require(served.distinct.first)
        #expect(try await loader.gif(for: id)?.tier == .installed)
    }

    @Test(
        "one deadline per loader call: a slow index and a slow GIF, each within it, end the call at it",
        arguments: ["URLSession", "curl"])
    func oneDeadlinePerCall(transportName: String) async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        let entry = try #require(pack.gifs.max { $0.location.frameLength < $1.location.frameLength })
        let id = try #require(pack.exercises.first { $0.gif == entry.sha256 }?.id)
        let indexBytes = try #require(FileOps.regularFileSize(dists.site + "/index.json.zst"))
        // Each transfer takes about 4.5 s at these rates (3.5 s when nginx sends the first second's
        // bytes at once): each fits in the 6 s deadline, the two together do not.
        var options = NginxServer.Options(root: dists.site)
        options.indexLimitRate = max(1, Int(indexBytes) * 2 / 9)
        options.packsLimitRate = max(1, Int(entry.location.frameLength) * 2 / 9)
        let nginx = try await NginxServer.start(options)
        defer { nginx.stop() }
        var configuration = GIFLoader.Configuration()
        configuration.timeouts.deadline = .seconds(6)
        let loader = try GIFLoader(
            indexURL: URL(string: nginx.baseURL + "/index.json")!,
            cacheFolder: URL(fileURLWithPath: dists.workspace.file("app-\(transportName)"), isDirectory: true),
            transport: try Self.transport(transportName), configuration: configuration)
        let mark = try await nginx.mark()
        await #expect {
            _ = try await loader.gif(for: id)
        } throws: { error in
            guard case .transfer(let url, .timedOut(let message))? = (error as? GIFLoaderError)?.packClientError else { return false }
            return url.hasSuffix(pack.file) && message.contains("the call's deadline of 6 s passed")
        }
        let lines = try await CallDeadlineTests.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(lines.filter { $0.path.hasPrefix("/index.json") }.count == 1, "\(lines)")
    }

    @Test(
        "gif(sha256:) finds a GIF held only in another rendition than the loader's, by one range request to that pack",
        arguments: ["URLSession", "curl"])
    func aHashInAnotherRendition(transportName: String) async throws {
        let site = try await RenditionClientTests.site()
        defer { site.stop() }
        let files = try RenditionClientTests.packFiles(site.dists)
        let index = try site.dists.index()
        let small = try #require(index.packs[0].exercises.first { $0.gif != nil })
        let hash = try #require(small.gif)
        #expect(index.renditionPacks?[0].gifs.contains { $0.sha256 == hash } == false)
        var configuration = GIFLoader.Configuration()
        configuration.preferredPixelSize = 360
        let loader = try GIFLoader(
            indexURL: URL(string: site.nginx.baseURL + "/index.json")!,
            cacheFolder: URL(fileURLWithPath: site.dists.workspace.file("app-\(transportName)"), isDirectory: true),
            transport: try Self.transport(transportName), configuration: configuration)
        let mark = try await site.nginx.mark()
        let gif = try #require(try await loader.gif(sha256: hash))
        #expect(gif.sha256 == hash && GIFLoader.sha256(gif.data) == hash && gif.tier == .network)
        let ranges = try await site.nginx.log(since: mark).filter { $0.range != nil }.map(\.path)
        #expect(ranges == [files.first], "\(ranges)")
        // The exercise itself still comes at 360 px.
        #expect(try await loader.gif(for: small.id)?.sha256 != hash)
    }

    @Test(
        "one GIF shared by two exercises and asked for by both ids and its hash at once is fetched once",
        arguments: ["URLSession", "curl"])
    func oneFetchPerGIF(transportName: String) async throws {
        let served = try await Served.make(limitRate: 8192)
        defer { served.stop() }
        let exercises = try #require(try served.dists.index().packs.first).exercises
        let shared = try #require(Dictionary(grouping: exercises.filter { $0.gif != nil }, by: { $0.gif! }).first { $0.value.count >= 2 })
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"), transport: try Self.transport(transportName))
        _ = try await loader.lazy.index()
        let mark = try await served.nginx.mark()
        let answers = try await withThrowingTaskGroup(of: LoadedGIF?.self) { group in
            group.addTask { try await loader.gif(for: shared.value[0].id) }
            group.addTask { try await loader.gif(for: shared.value[1].id) }
            group.addTask { try await loader.gif(sha256: shared.key) }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 3 && answers.allSatisfy { $0?.sha256 == shared.key })
        let ranges = try await served.rangeRequests(since: mark)
        #expect(ranges.count == 1, "\(ranges)")
    }

    @Test("a refresh while another process installs into the same folder waits for it, then finds the cache up to date")
    func aRefreshWaitsForAnotherProcesssInstall() async throws {
        let served = try await Served.make(limitRate: 16384)
        defer { served.stop() }
        let folder = served.folder("shared")
        let installed = folder.appendingPathComponent("installed").path
        let lockFile = installed + ".d/install.lock"
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder)
        let errPath = served.dists.workspace.file("install.err")
        let other = try ChildProcess(
            productPath("gifpack"), ["install", "--index", served.indexURL.absoluteString, "--cache", installed],
            stderr: .file(errPath))
        defer { other.killAndReap() }
        // The other process holds the install lock: it downloads only once it has taken it (the lock
        // file alone can be there a moment before the lock is).
        try await waitUntil { FileManager.default.fileExists(atPath: lockFile) && !DirectoryListing.names(installed + ".d/downloads").isEmpty }
        try #require(other.isRunning, "the other install ended before the refresh started")
        let report = try await loader.refresh()
        #expect(!other.isRunning, "the refresh returned while the other install ran")
        #expect(await other.exitStatus() == 0, "\((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")")
        #expect(report.isUnchanged, "\(report)")
        let id = try #require(served.distinct.first)
        #expect(try await loader.gif(for: id)?.tier == .installed)

        // A wait that runs out says what held it.
        var configuration = GIFLoader.Configuration()
        configuration.installLockWait = .milliseconds(200)
        let impatient = try GIFLoader(indexURL: served.indexURL, cacheFolder: folder, configuration: configuration)
        let holder = try InstallLock(CacheGenerations(cachePath: installed))
        let locked = await #expect(throws: GIFLoaderError.self) { _ = try await impatient.refresh() }
        #expect(locked?.packClientError == .cacheLocked(path: installed), "\(String(describing: locked))")
        withExtendedLifetime(holder) {}
    }

    @Test("twenty calls at once after a relaunch read the installed manifest once")
    func oneSnapshotForConcurrentCallers() async throws {
        let served = try await Served.make(count: 100)
        defer { served.stop() }
        let first = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"))
        _ = try await first.refresh()
        let relaunched = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("app"))
        try await relaunched.ensureFolder()  // the twenty calls meet at the installed set, not before
        let ids = Array(served.distinct.prefix(20))
        let tiers = try await withThrowingTaskGroup(of: GIFTier?.self) { group in
            for index in 0..<20 { group.addTask { try await relaunched.gif(for: ids[index % ids.count])?.tier } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tiers.count == 20 && tiers.allSatisfy { $0 == .installed || $0 == .memory }, "\(tiers)")
        #expect(relaunched.snapshotReads.withLock { $0 } == 1)
    }

    @Test(
        "a GIF asked for while the first refresh downloads its pack comes from that download: the index once, no range request",
        arguments: ["URLSession", "curl"])
    func aGIFDuringTheFirstRefreshComesFromItsDownload(transportName: String) async throws {
        let served = try await Served.make(limitRate: 16384)
        defer { served.stop() }
        let pack = try #require(try served.dists.index().packs.first)
        let early = try #require(pack.gifs.min { $0.location.frameOffset < $1.location.frameOffset })
        let id = try #require(pack.exercises.first { $0.gif == early.sha256 }?.id)
        let loader = try GIFLoader(
            indexURL: served.indexURL, cacheFolder: served.folder("app-\(transportName)"),
            transport: try Self.transport(transportName))
        let mark = try await served.nginx.mark()
        let steps = Steps()
        let refresh = testTask { try await loader.refresh { steps.add($0) } }
        try await waitUntil { steps.all.contains { $0.stage == .fetching } }
        let gif = try #require(try await loader.gif(for: id))
        #expect(gif.sha256 == early.sha256 && GIFLoader.sha256(gif.data) == early.sha256)
        // From the pack's download, handed over by its follower, while the refresh still ran.
        #expect(gif.tier == .network && gif.fileURL == nil, "\(gif.tier)")
        let report = try await refresh.value
        #expect(!report.isUnchanged)
        let lines = try await served.nginx.log(since: mark)
        #expect(lines.filter { $0.path.hasPrefix("/index.json") }.count == 1, "the index once per refresh: \(lines)")
        #expect(lines.filter { $0.range != nil }.isEmpty, "no range request beside the download: \(lines)")
        #expect(try await loader.gif(for: id)?.tier == .memory)
    }
}

import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// Cancelling an install or a refresh at any stage ends it with `CancellationError` and
/// leaves the cache exactly as it was, against nginx, with both transports.
@Suite("Client: cancelling an install at every stage, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct InstallCancellationTests {
    /// Sees the install's checkpoints go by and cancels the attached task at `target` (from the
    /// hook itself, so the checkpoint right after it sees the cancellation; `untilPropagated`, run
    /// in the hook after the cancel, holds it until a cancellation that travels further has arrived).
    final class StageCanceller: @unchecked Sendable {  // @unchecked: every stored property is read and written under `lock`.
        private let lock = NSLock()
        private let target: InstallStage?
        private var task: Task<InstallReport, any Error>?
        private var stages: [InstallStage] = []
        private var fired = false
        private var untilPropagated: (@Sendable () -> Void)?

        init(cancelAt target: InstallStage?) { self.target = target }

        func untilPropagated(_ wait: @escaping @Sendable () -> Void) { lock.withLock { untilPropagated = wait } }

        func attach(_ task: Task<InstallReport, any Error>) { lock.withLock { self.task = task } }

        func saw(_ stage: InstallStage) {
            let (toCancel, wait) = lock.withLock { () -> (Task<InstallReport, any Error>?, (@Sendable () -> Void)?) in
                stages.append(stage)
                guard stage == target, !fired, let task else { return (nil, nil) }
                fired = true
                return (task, untilPropagated)
            }
            toCancel?.cancel()
            if toCancel != nil { wait?() }
        }

        var seen: [InstallStage] { lock.withLock { stages } }
        var cancelledByHook: Bool { lock.withLock { fired } }
    }

    /// What must not change: the link and every file of the installed generation (hash, inode,
    /// mtime), the manifest's bytes, and what `<cache>.d` holds.
    struct CacheState: Equatable {
        let tree: [String]
        let manifest: [UInt8]
        let store: [String]

        init(_ cache: String) throws {
            tree = try treeSnapshot(cache)
            manifest = try fileBytes("\(cache)/\(InstallManifest.fileName)")
            store = DirectoryListing.names("\(cache).d").filter { $0 != "downloads" }
        }
    }

    /// v1 installed from the local index into the workspace's `cache`, v2 (one GIF changed) published.
    static func upgradeToCancel(cache name: String = "app/gifs") async throws -> (dists: UpgradeDist, cache: String) {
        let dists = try await UpgradeDist.make(count: 20)
        try dists.publish()
        let cache = dists.workspace.file(name)
        try FileManager.default.createDirectory(atPath: (cache as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(dists.site + "/index.json"))
        dists.server.replaceGIF(id: dists.ids[7], with: try UpgradeDist.newGIF(seed: 3))
        try await dists.build()
        try dists.publish()
        return (dists, cache)
    }

    static func transport(_ name: String) throws -> any HTTPTransport {
        try #require(try GIFLoaderTests.transports().first { $0.name == name }).transport
    }

    @Test(
        "an install cancelled at the index, a transfer, the checks, the staging or before the switch throws CancellationError; the cache is as it was",
        arguments: ["URLSession", "curl"])
    func cancelledAtEveryStage(transportName: String) async throws {
        let (dists, cache) = try await Self.upgradeToCancel()
        defer { dists.server.stop() }
        let before = try CacheState(cache)
        let downloads = "\(cache).d/downloads"

        // Network stages: the transfer held open by nginx's limit_rate, cancelled by the caller.
        var slowIndex = NginxServer.Options(root: dists.site)
        slowIndex.limitRate = 512
        let slowPacks = NginxServer.Options(root: dists.site, packsLimitRate: 512)
        for (stage, options) in [(InstallStage.index, slowIndex), (.transfer, slowPacks)] {
            let nginx = try await NginxServer.start(options)
            defer { nginx.stop() }
            let canceller = StageCanceller(cancelAt: nil)
            var installer = PackInstaller(cacheDirectory: cache)
            installer.stageHook = { canceller.saw($0) }
            let client = try Self.transport(transportName)
            let task = testTask { try await installer.install(from: PackIndexSource(nginx.baseURL + "/index.json"), client: client) }
            try await waitUntil { canceller.seen.contains(stage) }
            if stage == .transfer { try await waitUntil { !DirectoryListing.names(downloads).isEmpty } }
            task.cancel()
            await #expect(throws: CancellationError.self, "\(stage)") { _ = try await task.value }
            #expect(canceller.seen.last == stage, "\(canceller.seen)")
            #expect(try CacheState(cache) == before, "cancelled at \(stage)")
            #expect(DirectoryListing.names(downloads).isEmpty, "\(stage): \(DirectoryListing.names(downloads))")
        }

        // Disk stages: cancelled from the checkpoint hook, so the next checkpoint is the one that must stop it.
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        for stage in [InstallStage.verify, .stage, .switch] {
            let canceller = StageCanceller(cancelAt: stage)
            var installer = PackInstaller(cacheDirectory: cache)
            installer.stageHook = { canceller.saw($0) }
            let client = try Self.transport(transportName)
            let task = testTask { try await installer.install(from: PackIndexSource(url), client: client) }
            canceller.attach(task)
            await #expect(throws: CancellationError.self, "\(stage)") { _ = try await task.value }
            #expect(canceller.cancelledByHook && canceller.seen.last == stage, "\(canceller.seen)")
            if stage == .stage { #expect(canceller.seen.filter { $0 == .stage }.count == 1, "staging went on after the cancellation") }
            #expect(try CacheState(cache) == before, "cancelled at \(stage)")
            #expect(DirectoryListing.names(downloads).isEmpty, "\(stage): \(DirectoryListing.names(downloads))")
        }

        // Nothing was left half done: the same upgrade, not cancelled, installs v2.
        let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(url), client: try Self.transport(transportName))
        #expect(report.changed == [dists.ids[7]] && report.generation == 2)
        #expect(try fileBytes("\(cache)/\(dists.ids[7]).gif") == dists.served(dists.ids[7]))
    }

    @Test("a cancellation after the switch, the commit point, returns the install's report")
    func cancelledAfterTheSwitch() async throws {
        let (dists, cache) = try await Self.upgradeToCancel()
        defer { dists.server.stop() }
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        // Cancelled just after the rename: the install is done and says so.
        let canceller = StageCanceller(cancelAt: .switched)
        var installer = PackInstaller(cacheDirectory: cache)
        installer.stageHook = { canceller.saw($0) }
        let task = testTask { try await installer.install(from: PackIndexSource(nginx.baseURL + "/index.json")) }
        canceller.attach(task)
        let report = try await task.value
        #expect(canceller.cancelledByHook && task.isCancelled)
        #expect(canceller.seen.first == .index && canceller.seen.suffix(2) == [.switch, .switched], "\(canceller.seen)")
        #expect(report.generation == 2 && report.changed == [dists.ids[7]])
        #expect(try fileBytes("\(cache)/\(dists.ids[7]).gif") == dists.served(dists.ids[7]))
    }

    @Test("a refresh cancelled during the checks, the staging or before the switch throws CancellationError and the cache stays as it was, also after the loader settles")
    func refreshCancelledWhileStaging() async throws {
        // The loader's installed packs are <folder>/installed: v1 is installed there.
        let (dists, installed) = try await Self.upgradeToCancel(cache: "loader/installed")
        defer { dists.server.stop() }
        let nginx = try await NginxServer.start(root: dists.site)
        defer { nginx.stop() }
        let folder = URL(fileURLWithPath: dists.workspace.file("loader"), isDirectory: true)
        let before = try CacheState(installed)

        for stage in [InstallStage.verify, .stage, .switch] {
            let canceller = StageCanceller(cancelAt: stage)
            var configuration = GIFLoader.Configuration()
            configuration.installStageHook = { canceller.saw($0) }
            let loader = try GIFLoader(
                indexURL: URL(string: nginx.baseURL + "/index.json")!, cacheFolder: folder,
                transport: try Self.transport("URLSession"), configuration: configuration)
            let task = testTask { try await loader.refresh().install }
            canceller.attach(task)
            // The refresh's cancellation reaches its install once the flight has no caller left (LoaderFlights):
            // the hook (on the install's own thread) waits for that, so the checkpoint right after it sees it.
            canceller.untilPropagated {
                let propagated = DispatchSemaphore(value: 0)
                testTask {
                    try? await waitUntil { loader.refreshFlights.keys.isEmpty }
                    propagated.signal()
                }
                propagated.wait()
            }
            await #expect(throws: CancellationError.self, "\(stage)") { _ = try await task.value }
            #expect(try CacheState(installed) == before, "cancelled at \(stage)")
            await loader.settle()
            #expect(canceller.cancelledByHook && canceller.seen.last == stage, "\(canceller.seen)")
            #expect(try CacheState(installed) == before, "changed after the refresh ended, cancelled at \(stage)")
        }
    }
}

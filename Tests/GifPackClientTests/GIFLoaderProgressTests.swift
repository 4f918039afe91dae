import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackDistFixtures
@testable import GifPackTestSupport
import GifPackIndexReader
@testable import GifPackTestServers

/// The loader's refresh progress (bytes and GIFs, done and total) and a server that
/// accepts and never answers or stops sending, against nginx with both transports.
@Suite("Client: the loader's refresh progress and silent servers, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(5)))
struct GIFLoaderProgressTests {
    typealias Steps = GIFLoaderRefreshTests.Steps

    static let stageOrder: [RefreshProgress.Stage] = [.checking, .fetching, .installing, .installed]

    /// In order, never going down (the fraction included), done within total, ending at done == total.
    static func checkSequence(_ steps: [RefreshProgress], _ context: String) {
        #expect(steps.first?.stage == .checking && steps.last?.stage == .installed, "\(context): \(steps)")
        for (before, after) in zip(steps, steps.dropFirst()) {
            let order = (stageOrder.firstIndex(of: before.stage) ?? -1, stageOrder.firstIndex(of: after.stage) ?? -1)
            #expect(order.0 <= order.1, "\(context): \(before) then \(after)")
            #expect(before.bytesDone <= after.bytesDone && before.bytesTotal <= after.bytesTotal, "\(context): \(before) then \(after)")
            #expect(before.gifsDone <= after.gifsDone && before.gifsTotal <= after.gifsTotal, "\(context): \(before) then \(after)")
            // The bar never jumps back when the next pack's bytes join the total.
            #expect(
                before.fractionCompleted <= after.fractionCompleted,
                "\(context): \(before.fractionCompleted) then \(after.fractionCompleted) (\(before) then \(after))")
        }
        #expect(steps.allSatisfy { $0.bytesDone <= $0.bytesTotal && $0.gifsDone <= $0.gifsTotal }, "\(context): \(steps)")
        if let last = steps.last {
            #expect(last.bytesDone == last.bytesTotal && last.gifsDone == last.gifsTotal && last.fractionCompleted == 1, "\(context): \(last)")
        }
    }

    /// Body bytes nginx sent for the packs.
    static func packBytes(_ lines: [NginxServer.LogLine]) -> Int64 {
        lines.filter { $0.path.hasPrefix("/packs/") }.reduce(Int64(0)) { $0 + $1.bodyBytes }
    }

    @Test(
        "refresh reports bytes and GIFs as packs download and install: in order, ending at done == total, totals what the plan fetches",
        arguments: ["URLSession", "curl"])
    func progressOfFirstInstallAndUpgrade(transportName: String) async throws {
        let dists = try await UpgradeDist.make(count: 30, packs: CrossPackDedupeTests.packs)
        defer { dists.server.stop() }
        try dists.publish()
        var options = NginxServer.Options(root: dists.site)
        options.limitRate = 262_144
        let nginx = try await NginxServer.start(options)
        defer { nginx.stop() }
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        let loader = try GIFLoader(
            indexURL: URL(string: nginx.baseURL + "/index.json")!,
            cacheFolder: URL(fileURLWithPath: dists.workspace.file("app"), isDirectory: true), transport: transport)
        let streamed = Steps()
        let reader = testTask {
            for await step in loader.refreshProgress() {
                streamed.add(step)
            }
        }
        defer { reader.cancel() }

        // A first install of three overlapping packs: one whole, two by range (their GIFs come with the first).
        var mark = try await nginx.mark()
        let steps = Steps()
        let first = try await loader.refresh { steps.add($0) }
        var lines = try await nginx.log(since: mark)
        Self.checkSequence(steps.all, "first install")
        var last = try #require(steps.all.last)
        let gifs = Set(try dists.index().packs.flatMap { $0.exercises.compactMap(\.gif) }).count
        #expect(last.gifsTotal == gifs && first.gifsWritten + first.gifsReused == gifs, "\(last), \(first)")
        #expect(last.bytesTotal == first.bytesDownloaded && last.bytesTotal == Self.packBytes(lines), "\(last), \(lines)")
        #expect(first.install.fetches.map(\.method) == [.wholePack, .sparse, .sparse], "\(first.install.fetches)")
        // Reported while the packs download and while the GIFs are placed, not only at the end.
        #expect(steps.all.contains { $0.stage == .fetching && 0 < $0.bytesDone && $0.bytesDone < $0.bytesTotal }, "\(steps.all)")
        #expect(steps.all.contains { $0.stage == .installing && 0 < $0.gifsDone && $0.gifsDone < $0.gifsTotal }, "\(steps.all)")
        // The AsyncSequence hears the same steps (the newest when it falls behind), ending with the same one.
        try await waitUntil { streamed.all.last == last }
        #expect(streamed.all.allSatisfy(steps.all.contains), "\(streamed.all)")

        // An upgrade: one GIF of all three packs changes; its frame is fetched once, by range.
        let shared = dists.ids[8]
        dists.server.replaceGIF(id: shared, with: try UpgradeDist.newGIF(seed: 7))
        try await dists.build()
        try dists.publish()
        mark = try await nginx.mark()
        let upgradeSteps = Steps()
        let upgrade = try await loader.refresh { upgradeSteps.add($0) }
        lines = try await nginx.log(since: mark)
        Self.checkSequence(upgradeSteps.all, "upgrade")
        last = try #require(upgradeSteps.all.last)
        #expect(upgrade.install.fetches.map(\.method) == [.sparse, .sparse, .sparse], "\(upgrade.install.fetches)")
        #expect(last.bytesTotal == upgrade.bytesDownloaded && last.bytesTotal == Self.packBytes(lines), "\(last), \(lines)")
        #expect(last.bytesTotal < first.bytesDownloaded / 2, "\(last)")
        let upgraded = Set(try dists.index().packs.flatMap { $0.exercises.compactMap(\.gif) }).count
        #expect(
            last.gifsTotal == upgraded && upgrade.gifsWritten == 1 && upgrade.gifsWritten + upgrade.gifsReused == upgraded,
            "\(last), \(upgraded) GIFs (\(gifs) before), \(upgrade.gifsWritten) written, \(upgrade.gifsReused) reused")

        // The daily check: a 304, nothing to fetch.
        let quiet = Steps()
        _ = try await loader.refresh { quiet.add($0) }
        #expect(quiet.all == [RefreshProgress(stage: .checking), RefreshProgress(stage: .upToDate)], "\(quiet.all)")
        #expect(quiet.all.last?.fractionCompleted == 1)
    }

    @Test(
        "a refresh from a server that accepts and never answers fails after the configured window, saying what to check",
        arguments: ["URLSession", "curl"])
    func silentIndexServer(transportName: String) async throws {
        #expect(GIFLoader.Configuration().timeouts.lowSpeedWindow == .seconds(30), "the default window")
        let silentServer = try ClientStaticFileServer()
        defer { silentServer.stop() }
        silentServer.neverAnswer(path: "/silent")
        let silentURL = silentServer.baseURL + "/silent"
        let work = try TemporaryDirectory()
        let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
        var configuration = GIFLoader.Configuration()
        configuration.timeouts = HTTPTimeouts(lowSpeedBytesPerSecond: 1024, lowSpeedWindow: .seconds(1))
        let loader = try GIFLoader(
            indexURL: URL(string: silentURL)!, cacheFolder: URL(fileURLWithPath: work.file("app"), isDirectory: true),
            transport: transport, configuration: configuration)
        let steps = Steps()
        do {
            _ = try await loader.refresh { steps.add($0) }
            Issue.record("a refresh from a silent server succeeded")
        } catch {
            // The loader's window ended it (not the default 30 s), with the limit and what to check.
            guard case .transfer(let url, .timedOut(let message))? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(error)"); return }
            #expect(url.hasPrefix(silentURL) && message == configuration.timeouts.lowSpeedMessage(for: silentURL), "\(message)")
            #expect("\(error)".contains("over 1 s") && "\(error)".contains("check that it answers"), "\(error)")
        }
        #expect(steps.all == [RefreshProgress(stage: .checking)])
        #expect(try await loader.placeholders().isEmpty)
    }

    @Test(
        "a GIF by range from a server that stops sending fails after one window, without retries, saying what to check",
        arguments: ["URLSession", "curl"])
    func stalledRangeRequest(transportName: String) async throws {
        // The index comes at full speed; the packs at one byte a second.
        let (site, loader, configuration) = try await Self.stalledPacks(transportName: transportName)
        defer { site.stop() }
        let (dists, nginx) = (site.dists, site.nginx)
        let id = try #require(LazyGIFCacheTests.distinctGIFs(dists).first)
        let pack = try #require(try dists.index().packs.first)
        let mark = try await nginx.mark()
        do {
            _ = try await loader.gif(for: id)
            Issue.record("a GIF from a stalled server was served")
        } catch {
            guard case .transfer(let url, .timedOut(let message))? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(error)"); return }
            #expect(url.hasSuffix(pack.file) && message == configuration.timeouts.lowSpeedMessage(for: url), "\(message)")
            #expect("\(error)".contains("check that it answers"), "\(error)")
        }
        // One range request: a request that timed out is not made again (three would take three windows).
        let lines = try await CallDeadlineTests.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(lines.filter { $0.path == "/\(pack.file)" }.count == 1, "\(lines)")
        await loader.settle()
        #expect(DirectoryListing.names(dists.workspace.file("app/lazy/gifs")).isEmpty)
    }

    @Test(
        "a refresh whose pack download stops sending fails after one window, without retries, the cache as it was",
        arguments: ["URLSession", "curl"])
    func stalledPackDownload(transportName: String) async throws {
        // The index comes at full speed; the packs at one byte a second.
        let (site, loader, configuration) = try await Self.stalledPacks(transportName: transportName)
        defer { site.stop() }
        let (dists, nginx) = (site.dists, site.nginx)
        let files = try dists.index().packs.map { "/" + $0.file }
        let mark = try await nginx.mark()
        var stalled = ""
        do {
            _ = try await loader.refresh()
            Issue.record("a refresh from a stalled server installed")
        } catch {
            guard case .transfer(let url, .timedOut(let message))? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(error)"); return }
            stalled = String(url.dropFirst(nginx.baseURL.count))
            #expect(files.contains(stalled) && message == configuration.timeouts.lowSpeedMessage(for: url), "\(url): \(message)")
            #expect("\(error)".contains("check that it answers"), "\(error)")
        }
        // One request for the pack: a transfer that timed out is not sent again in the same call (each
        // retry would cost another window); what arrived stays for the next call to resume.
        let lines = try await CallDeadlineTests.linesOnceLogged(nginx, since: mark, path: stalled)
        #expect(lines.filter { $0.path == stalled }.count == 1, "\(lines)")
        #expect(try await loader.placeholders().isEmpty, "nothing installed")
    }

    /// A 20-exercise site on nginx that sends the index at full speed and the packs at one byte a
    /// second, and a loader on it whose low-speed window is 1 s.
    static func stalledPacks(transportName: String) async throws -> (ServedUpgradeDist, GIFLoader, GIFLoader.Configuration) {
        let site = try await UpgradeDist.servedByNginx(count: 20, nginx: { $0.packsLimitRate = 1 })
        do {
            let transport = try #require(try GIFLoaderTests.transports().first { $0.name == transportName }).transport
            var configuration = GIFLoader.Configuration()
            configuration.timeouts = HTTPTimeouts(lowSpeedBytesPerSecond: 1024, lowSpeedWindow: .seconds(1))
            let loader = try GIFLoader(
                indexURL: URL(string: site.url)!,
                cacheFolder: URL(fileURLWithPath: site.dists.workspace.file("app"), isDirectory: true),
                transport: transport, configuration: configuration)
            return (site, loader, configuration)
        } catch {
            site.stop()
            throw error
        }
    }
}

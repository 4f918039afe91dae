import Foundation
import GifPackHTTP
import Synchronization

/// The whole build: manifest → catalog → plan → fetch → verify → pack → index → prune → report.
///
/// `run()` never throws: every failure ends in a report whose ``ExitStatus`` and message say what
/// went wrong. Nothing in the output directory changes unless the build succeeds (or, with several
/// resolutions, a quota or budget stop in a later one writes those fetched whole before it:
/// ``writesBefore(_:renditions:indexes:)``); pack files are
/// written before the index, and the index is replaced atomically last (and only when its bytes
/// change), so readers always see a complete index whose packs exist.
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "manifests/demo.yaml", environment: env)
/// let options = try BuildOptions.resolve(manifest: manifest, outputDirectory: "dist", cacheDirectory: nil, environment: env)
/// let report = await BuildPipeline(manifest: manifest, options: options).run()
/// exit(report.exitStatus.rawValue)
/// ```
package struct BuildPipeline: Sendable {
    package let manifest: Manifest
    package let options: BuildOptions
    package let observer: BuildObserver?

    package init(manifest: Manifest, options: BuildOptions, observer: BuildObserver? = nil) {
        self.manifest = manifest
        self.options = options
        self.observer = observer
    }

    package var indexPath: String { "\(options.outputDirectory)/index.json" }
    package var reportPath: String { "\(options.outputDirectory)/report.json" }

    package func run() async -> BuildReport {
        var report = BuildReport(generator: options.generator, exitStatus: .failed, message: "")
        let clock = ContinuousClock()
        let started = clock.now
        let startDate = Date()
        var disposition = BuildFailure.ReportDisposition.written
        do throws(BuildFailure) {
            try await build(into: &report, clock: clock)
        } catch {
            report.exitStatus = error.exitStatus
            report.message = error.message
            if let detail = error.stateError { report.stateErrors.append(detail) }
            disposition = error.reportDisposition
        }
        if disposition == .written, let recovery = report.stateRecovery { report.message += "; \(recovery.sentence)" }
        report.stageSeconds[BuildReport.totalSecondsKey] = (clock.now - started).seconds
        report.complete(startedAt: startDate, finishedAt: Date())
        // Whatever path the key came by (an error body, a header, a record), the report written,
        // printed, turned into metrics or a step summary never holds it.
        report = SecretRedactor(source: manifest.source).redact(report)
        switch disposition {
        case .returnedOnly: return report
        case .notWrittenIntoForeignOutput:
            observer?(.finished(report))
            return report
        case .written: break
        }
        let finalReport = report
        if let problem = await BlockingWork.run("gifpack.report", { writeReport(finalReport) }) {
            // The file cannot say it was not written: the returned report and the log do.
            report.stateErrors.append(problem)
        }
        observer?(.finished(report))
        return report
    }

    /// The build as straight stages, each handing the next what it made: catalog (``Catalog``) →
    /// plan (``PackPlan``, one ``RenditionPlan`` per resolution) → fetch (``FetchResults``, every
    /// resolution in turn) → describe and verify (each pack's
    /// ``PackMaker/Decision``, every frame an assembly copies checked; a damaged GIF's
    /// exercises go back to the fetcher once) → pack (``PackDescription``s) → index (``PackIndex``)
    /// → prune. Whatever stops it is a ``BuildFailure``.
    private func build(into report: inout BuildReport, clock: ContinuousClock) async throws(BuildFailure) {
        let started = clock.now
        let cache = try await stage { try await openCache() }
        report.stateRecovery = cache.recovery
        // Closed before the locks are released: the next build holding the cache finds the state
        // file whole and nobody else writing it.
        defer { cache.close() }
        // No more transfers at once than the fetch window's cap: the fetcher queues a few requests
        // behind those in flight, and the client's own line holds them until a slot frees.
        let client: HTTPClient
        do { client = try HTTPClient(maxConnections: FetchGovernor.cap(for: manifest.fetch), caFile: manifest.fetch.caFile) } catch {
            throw .other(error)
        }
        defer { client.shutdown() }
        // Every request sent counts, those of a run that stops early (a 401 on the first page) too.
        defer { report.http.requests = client.statistics.requestsStarted }
        let indexes = try await stage { try await readIndexes(client: client) }
        // The catalog's retries count with the GIFs' (added last, whatever ends the build).
        let catalogRetries = CatalogRetryCount()
        defer { report.http.retries += catalogRetries.value.withLock { $0 } }
        var stages = StageClock(clock: clock, observer: observer)

        let tools = GIFTools(
            manifest: manifest, layout: cache.layout, state: cache.state, client: client,
            options: options, startedAt: started, observer: observer)
        // GIF requests start with the first page's image ids, bounded until the checks pass (EarlyFetch).
        let (feed, early) = startEarlyFetch(tools: tools, recovered: cache.recovery != nil, rebuild: cache.expectedCount != nil)
        let catalog: Catalog, plan: PackPlan, renditions: [RenditionPlan]
        do throws(BuildFailure) {
            catalog = try await stage { try await catalogStage(cache: cache, client: client, retries: catalogRetries, early: feed, into: &report) }
            stages.end(.catalog, into: &report)
            do {
                plan = try planStage(catalog, into: &report)
                renditions = try RenditionPlan.all(for: manifest.source, plan: plan, catalog: catalog)
            } catch { throw BuildFailure(error) }
            stages.end(.plan, into: &report)
        } catch {
            await early?.finish()
            // A page cut short by the caller's cancel is the cancel, not a catalog that failed.
            if Task.isCancelled { throw .cancelled(after: stages.current) }
            // The early requests are back: the message says how many were sent.
            throw error.spent(gifRequests: tools.governor.gifRequestsSent)
        }
        let fetched: FetchedRenditions
        do { fetched = try await fetchRenditions(renditions, tools: tools, early: early, into: &report) } catch {
            await early?.finish()
            let failure = BuildFailure(error)
            if case .ended = failure { stages.record(.fetch, into: &report) }
            throw failure
        }
        if let stop = fetched.stop, !writesBefore(fetched, renditions: renditions, indexes: indexes) {
            await early?.finish()
            stages.record(.fetch, into: &report)
            throw .ended(stop)
        }
        await early?.finish()
        stages.end(.fetch, into: &report)
        // The fetch's frames are made: their compression contexts are not kept through the pack stage.
        ZstdContextPool.drain()
        // A cancelled fetch ends its requests as cancelled: never packed as missing GIFs.
        if Task.isCancelled { throw .cancelled(after: .fetch) }
        do { try checkMissing(wanted: renditions[0].plan.wanted.count, into: &report) } catch { throw .ended(error) }
        // After a quota or budget stop in a later resolution, the resolutions fetched whole before it
        // (`fetched.results` holds theirs only).
        let (descriptions, renditionPacks, formatPacks) = try await stage {
            try await packRenditions(renditions, results: fetched.results, tools: tools, indexes: indexes, into: &report)
        }
        stages.end(.pack, into: &report)
        // The index is what apps see: not written once the caller has cancelled.
        if Task.isCancelled { throw .cancelled(after: .pack) }
        let index = try await stage {
            try await indexStage(
                descriptions, renditionPacks: renditionPacks, formatPacks: formatPacks, state: cache.state,
                indexes: indexes, into: &report)
        }
        stages.end(.index, into: &report)
        report.pruned = try await stage { try await pruneStage(index, cache: cache) }
        stages.end(.prune, into: &report)
        if let stop = fetched.stop {
            concludeStopped(stop, renditions: renditions, fetched: fetched.results.count, into: &report)
        } else {
            conclude(&report)
        }
    }

    /// Runs a stage whose errors are untyped and names what stopped it (``BuildFailure/init(_:)``).
    private func stage<T>(_ body: () async throws -> T) async throws(BuildFailure) -> T {
        do { return try await body() } catch { throw BuildFailure(error) }
    }

    /// Writes `report.json`; returns what went wrong, if anything.
    private func writeReport(_ report: BuildReport) -> String? {
        guard FileSystem.exists(options.outputDirectory) else { return nil }
        do {
            try report.write(toDirectory: options.outputDirectory)
            return nil
        } catch {
            return "\(reportPath) was not written: \(error)"
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

// MARK: - Opening the cache and the indexes known before the first request

/// The cache a build holds: its directories claimed and locked, and its state open.
struct OpenedCache {
    let layout: CacheLayout
    let state: BuildState
    /// The size of the last catalog (nil before the first run): the catalog's pages are fetched
    /// in parallel without a request past the end, and the shrink guard compares with it.
    let expectedCount: Int?
    /// What was done about a damaged state, if anything.
    let recovery: StateRecovery?
    private let locks: [BuildLock]

    init(layout: CacheLayout, state: BuildState, expectedCount: Int?, recovery: StateRecovery?, locks: [BuildLock]) {
        (self.layout, self.state, self.expectedCount, self.recovery, self.locks) = (layout, state, expectedCount, recovery, locks)
    }

    /// Closes the state, then frees the locks (whatever still holds this value, the locks go with
    /// the last reference; the state is closed before).
    func close() {
        state.close()
        withExtendedLifetime(locks) {}
    }
}

/// The indexes a build compares with: the live one (`--previous-index`) and the output
/// directory's own, read before the first request.
struct KnownIndexes: Sendable {
    var previous: PreviousIndex?
    var local: PackIndex?

    /// The descriptions of the pack `name` in either index (the output's, `--previous-index`).
    func packs(named name: String) -> [PackDescription] {
        [local?.pack(named: name), previous?.index.pack(named: name)].compactMap { $0 }
    }
}

extension BuildPipeline {
    /// Claims and locks the output and cache directories, and opens (or recovers) the state.
    func openCache() async throws -> OpenedCache {
        let layout = CacheLayout(root: options.cacheDirectory)
        try claimDirectories()
        let locks = try BuildLock.acquire([options.outputDirectory, options.cacheDirectory])
        let sourceKey = manifest.source.stateKey
        let (state, expectedCount, recovery) = try await BlockingWork.run {
            try layout.prepare()
            let (state, recovery) = try StateOpener.open(layout: layout, source: sourceKey)
            return (state, try state.lastCatalogCount(), recovery)
        }
        return OpenedCache(layout: layout, state: state, expectedCount: expectedCount, recovery: recovery, locks: locks)
    }

    /// The live index first: without it the build cannot know which names and sequence are taken.
    /// Then the output directory's own index (which it holds under the lock), read before the first
    /// request: an unreadable one stops the build before any quota is spent. Its exercise lists
    /// are let go once it is checked.
    func readIndexes(client: HTTPClient) async throws -> KnownIndexes {
        let previous: PreviousIndex? =
            if let location = options.previousIndex {
                try await PreviousIndex.load(location, client: client)
            } else { nil }
        let indexPath = self.indexPath
        let local = try await BlockingWork.run("gifpack.index") { () throws(OutputIndexUnreadable) -> PackIndex? in
            guard var index = try BuilderIndexReader.readOutputIndex(indexPath) else { return nil }
            // Checked whole, then kept without its exercise lists (about 1 MB at 100,000 exercises
            // for the whole build): the catalog gives them, and the index writer compares its bytes.
            for at in index.packs.indices { index.packs[at].exercises = [] }
            for at in index.renditionPacks?.indices ?? 0..<0 { index.renditionPacks?[at].exercises = [] }
            return index
        }
        return KnownIndexes(previous: previous, local: local)
    }

    /// Refuses an output or cache directory that is neither empty nor gifpack's, and marks the
    /// ones it takes (see ``DirectoryClaim``), before anything is written, created or deleted.
    func claimDirectories() throws {
        func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        if canonical(options.outputDirectory) == canonical(options.cacheDirectory) {
            try DirectoryClaim.claim(options.outputDirectory, roles: [.output, .cache])
        } else {
            // Both are checked before either is created or marked.
            try DirectoryClaim.check(options.outputDirectory, roles: [.output])
            try DirectoryClaim.check(options.cacheDirectory, roles: [.cache])
            try DirectoryClaim.claim(options.outputDirectory, roles: [.output])
            try DirectoryClaim.claim(options.cacheDirectory, roles: [.cache])
        }
    }
}

/// Times the build's stages into the report (`stageSeconds`) and tells the observer as each
/// one starts.
struct StageClock {
    let clock: ContinuousClock
    let observer: BuildObserver?
    private var started: ContinuousClock.Instant
    private var stages: IndexingIterator<[BuildStage]>
    /// The stage running (the last one once every stage has ended).
    private(set) var current: BuildStage = .catalog

    /// Starts the first stage.
    init(clock: ContinuousClock, observer: BuildObserver?) {
        self.clock = clock
        self.observer = observer
        started = clock.now
        stages = BuildStage.allCases.makeIterator()
        if let first = stages.next() {
            current = first
            observer?(.stageStarted(first))
        }
    }

    /// Ends `stage` and starts the next.
    mutating func end(_ stage: BuildStage, into report: inout BuildReport) {
        record(stage, into: &report)
        started = clock.now
        if let next = stages.next() {
            current = next
            observer?(.stageStarted(next))
        }
    }

    /// Records the time of `stage` so far (a stage that ended the build).
    func record(_ stage: BuildStage, into report: inout BuildReport) {
        report.stageSeconds[stage.rawValue] = (clock.now - started).seconds
    }
}

// MARK: - Catalog and plan stages

extension BuildPipeline {
    /// The catalog stage: the exercise list, fetched page by page into a spool in the cache, then
    /// compared with the last one (a catalog that lost more than `max_removed` allows stops the
    /// build here, before the fetch stage; the early fetch sent at most one GIF request per list
    /// request) and remembered in the state, which a recovered state is rebuilt from.
    func catalogStage(
        cache: OpenedCache, client: HTTPClient, retries: CatalogRetryCount, early: EarlyFeed,
        into report: inout BuildReport
    ) async throws -> Catalog {
        let (layout, state, expectedCount) = (cache.layout, cache.state, cache.expectedCount)
        // The records go to a spool file in the cache as pages arrive; the catalog keeps where they are.
        let spool: RecordSpool
        do { spool = try RecordSpool(directory: layout.temporaryDirectory) } catch { throw CatalogError.spool(error) }
        // Each page request is logged like a GIF's, and its retries counted.
        let catalogObserver: BuildObserver = { [observer] event in
            if case .catalogAttempt(let attempt) = event, attempt.outcome == .retry { retries.value.withLock { $0 += 1 } }
            observer?(event)
        }
        var pager = CatalogPager(source: manifest.source, fetch: manifest.fetch, client: client, expectedCount: expectedCount, spool: spool)
        pager.observer = catalogObserver
        pager.early = early
        pager.reusePages(at: layout.catalogPagesPath)
        let catalog = try await CatalogSources.make(pager).fetchCatalog()
        report.catalog = .init(
            exercises: catalog.exercises.count, pages: catalog.pagesFetched, pagesReused: catalog.pagesReused,
            rejectedRecords: catalog.rejected, duplicateIDs: catalog.duplicateIDs)
        let listLimit = options.reportListLimit
        // A catalog that lost more of the last one's exercises than max_removed allows stops here,
        // before the fetch stage, and the state keeps the last catalog to compare the next run with.
        let (maxRemoved, lastCount, count) = (manifest.fetch.maxRemoved, expectedCount, catalog.exercises.count)
        report.catalogChanges = try await BlockingWork.run {
            try state.replaceCatalog(
                each: CatalogFingerprint.fingerprints(of: catalog), digest: CatalogFingerprint.digest(of: catalog),
                listLimit: listLimit
            ) { removed in
                guard let lastCount, removed > 0, !maxRemoved.allows(missing: removed, of: lastCount) else { return }
                throw CatalogShrank(removed: removed, previous: lastCount, now: count, limit: maxRemoved)
            }
        }
        if let damaged = report.stateRecovery {
            let (indexPath, resolution, fetch) = (self.indexPath, manifest.source.resolution, manifest.fetch)
            report.stateRecovery = try await BlockingWork.run {
                var rebuilt = damaged
                try StateOpener.rebuild(
                    &rebuilt, state: state, indexPath: indexPath, catalog: catalog.exercises, layout: layout,
                    resolution: resolution, fetch: fetch)
                return rebuilt
            }
        }
        observer?(.catalogFetched(exercises: catalog.exercises.count, pages: catalog.pagesFetched))
        return catalog
    }

    /// The feed the catalog's pages fill, and the early fetch reading it: nil after a recovered
    /// state (its GIFs are rebuilt from the index once the list is in, before any is asked for).
    /// The feed counts the list requests against `max_requests` either way. On a rebuild (`rebuild`:
    /// the state remembers the last catalog) only revalidations go early (``EarlyFeed/revalidationsOnly``).
    func startEarlyFetch(tools: GIFTools, recovered: Bool, rebuild: Bool) -> (EarlyFeed, EarlyFetch?) {
        let resolution = manifest.source.resolution
        let packs = manifest.packs.filter { $0.takes(resolution) }
        let feed = EarlyFeed(
            cap: tools.governor.cap, governor: tools.governor, revalidationsOnly: rebuild,
            wants: { [recovered] exercise in !recovered && packs.contains { $0.selector.matches(exercise) } })
        return (feed, recovered ? nil : EarlyFetch(fetcher: tools.fetcher(), feed: feed))
    }

    /// The plan stage: which exercises go into which pack. A pack that would be empty is a
    /// selector that names nothing the catalog has (``EmptySelector``); a spooled catalog that
    /// cannot be read back throws ``SpoolReadError``.
    func planStage(_ catalog: Catalog, into report: inout BuildReport) throws -> PackPlan {
        let plan = try PackPlan(specs: manifest.packs, catalog: catalog)
        if let empty = try plan.emptySelector(catalog: catalog) { throw empty }
        report.gifs.wanted = plan.wanted.count
        return plan
    }
}

/// The catalog's retries, counted from its attempt events (which arrive from the pager's tasks).
final class CatalogRetryCount: Sendable {
    let value = Mutex(0)
}

// MARK: - Fetch stage

/// What the fetch, verify and pack stages share: the caches of frames and placeholders, the
/// governor (window, budget and stops over every GIF request of the run) and the fetcher's parts.
struct GIFTools: Sendable {
    let source: SourceSettings
    /// The resolution this build's fetcher asks for (``at(_:)`` gives the tools of another).
    private(set) var resolution: Resolution
    let fetch: FetchSettings
    let layout: CacheLayout
    let state: BuildState
    let client: HTTPClient
    let frames: FrameCache
    let placeholders: PlaceholderCache
    /// The WebP renditions' cache, when the manifest asks for `webp` (`output.formats`).
    let webp: WebPCache?
    let governor: FetchGovernor
    let observer: BuildObserver?

    init(
        manifest: Manifest, layout: CacheLayout, state: BuildState, client: HTTPClient, options: BuildOptions,
        startedAt started: ContinuousClock.Instant, observer: BuildObserver?
    ) {
        (source, fetch, self.layout, self.state, self.client, self.observer) = (manifest.source, manifest.fetch, layout, state, client, observer)
        resolution = manifest.source.resolution
        frames = FrameCache(layout: layout, level: manifest.output.zstdLevel, mtime: options.sourceDateEpoch)
        placeholders = PlaceholderCache(
            layout: layout, settings: manifest.output.placeholderSettings,
            posterFrames: manifest.output.posterSizes.isEmpty
                ? nil
                : PosterFrameCache(level: frames.level, mtime: frames.mtime))
        webp = manifest.output.makesWebP ? WebPCache(layout: layout) : nil
        governor = FetchGovernor(
            settings: manifest.fetch, requestsAlreadySent: client.statistics.requestsStarted,
            startedAt: started)
    }

    /// The same tools fetching at `resolution`: the caches, the client and the governor (window,
    /// budget and stops) are shared.
    func at(_ resolution: Resolution) -> GIFTools {
        var tools = self
        tools.resolution = resolution
        return tools
    }

    /// A fetcher of GIFs into the store at ``resolution``, sharing the governor with every other of this run.
    func fetcher() -> GIFFetcher {
        GIFFetcher(
            client: client, source: source, resolution: resolution, settings: fetch, layout: layout, frames: frames,
            state: state, governor: governor, placeholders: placeholders, webp: webp,
            observer: observer)
    }
}

extension BuildPipeline {
    /// The fetch stage: every wanted exercise's GIF downloaded, revalidated or reused, validated
    /// and stored with its frame; failures an earlier run's GIF can stand in for covered by it.
    /// A stopped fetch ends the build (``BuildEnded``) with what it fetched kept for the next run.
    /// With `early`, its window goes on with this fetch's plan, the requests in flight at the
    /// hand-over still in it (one count of slots), and the plan passes over what it holds or settled.
    func fetchStage(
        _ wanted: ExerciseList, tools: GIFTools, early: EarlyFetch? = nil,
        into report: inout BuildReport
    ) async throws -> FetchResults {
        let (fetchStarted, before) = (ContinuousClock.now, tools.client.statistics)
        let fetcher = early?.fetcher ?? tools.fetcher()
        // The early fetch's requests in flight stay in flight: its window sends this fetch's plan too.
        var outcome = try await fetcher.fetch(wanted, handingOverFrom: early)
        if let fetched = outcome.freshFetchedAt, let refresh = manifest.fetch.refreshAfter {
            // When the GIFs refresh_after spared are asked for again: the summary says so.
            let seconds = refresh.milliseconds / 1000
            report.gifs.freshRecheckFrom = BuildReport.timestamp(fetched.lowerBound.addingTimeInterval(seconds))
            report.gifs.freshRecheckBy = BuildReport.timestamp(fetched.upperBound.addingTimeInterval(seconds))
        }
        let (fetchEnded, after) = (ContinuousClock.now, tools.client.statistics)
        // Taken out of the outcome, so the results have one owner and change in place below.
        var results = outcome.results
        outcome.results = FetchResults()
        if tools.resolution != manifest.source.resolution {
            try refuseOtherSizes(&results, wanted: wanted, resolution: tools.resolution, into: &report)
        }
        report.stateErrors += fetcher.processor.stateWriteErrors
        report.http = .init(
            requests: after.requestsStarted, retries: outcome.retries, rateLimited: outcome.rateLimited,
            quotaRemaining: outcome.quotaRemaining, maxInFlight: after.maxInFlight,
            connectionsOpened: after.connectionsOpened)
        if after.requestsStarted > before.requestsStarted, fetchEnded > fetchStarted {
            let slots = Double(manifest.fetch.concurrency) * (fetchEnded - fetchStarted).seconds
            let busy = after.inFlightSeconds(at: fetchEnded) - before.inFlightSeconds(at: fetchStarted)
            report.http.fetchWindowUse = busy / slots
            report.http.fetchWindowIdleSlotSeconds = max(0, slots - busy)
        }
        if let stop = outcome.stop {
            try summarise(results, wanted: wanted, resolution: tools.resolution, into: &report)
            throw stopped(stop, notAttempted: outcome.notAttempted, into: &report)
        }
        // The step reads the results and says what to change; they change here, in place: a copy
        // of every exercise's result (megabytes at 100,000) is never made.
        let (state, layout, resolution) = (tools.state, tools.layout, tools.resolution)
        let cover = try await BlockingWork.run("gifpack.last-known-good") { [results] () throws(StateUnreadable) in
            try lastKnownGood(for: results, wanted: wanted, state: state, store: BlobStore(layout: layout), resolution: resolution)
        }
        for (gif, _) in cover { results[gif.exerciseID] = .stored(gif) }
        if tools.resolution != manifest.source.resolution {
            try refuseOtherSizes(&results, wanted: wanted, resolution: tools.resolution, into: &report)
        }
        report.reusedLastGood += cover.lazy.map(\.rejection).prefix(max(0, options.reportListLimit - report.reusedLastGood.count))
        try summarise(results, wanted: wanted, resolution: tools.resolution, into: &report)
        return results
    }

    /// The report of a fetch the governor stopped, and how the build ends.
    private func stopped(_ stop: StopReason, notAttempted: [String], into report: inout BuildReport) -> BuildEnded {
        report.stopReason = stop
        if !notAttempted.isEmpty { report.notAttempted = .init(ids: notAttempted) }
        observer?(.stopped(stop))
        let skipped = report.notAttempted.map { "; \($0.sentence)" } ?? ""
        var message = "\(stop)\(skipped); no pack or index was written. Every GIF fetched so far is kept, and the next run goes on from there"
        if case .authRejected = stop, let variable = manifest.source.apiKeyEnvironmentVariable {
            message = "\(stop): check the key in the environment variable \(variable)\(skipped); no pack or index was written"
        }
        return BuildEnded(status: stop.exitStatus, message: message)
    }

    /// Ends the build when more exercises than `max_missing` allows have no valid GIF.
    func checkMissing(wanted: Int, into report: inout BuildReport) throws(BuildEnded) {
        let missing = report.gifs.missing
        guard manifest.fetch.maxMissing.allows(missing: missing, of: wanted) else {
            throw BuildEnded(
                status: .failed,
                message: "\(missing) of \(wanted) exercises have no valid GIF, more than "
                    + "max_missing (\(manifest.fetch.maxMissing)); no pack or index was written")
        }
    }

    /// The failures of this run an earlier run's GIF can stand in for, each with the GIF that
    /// earlier run stored for the same exercise; `results` is only read (the caller changes them).
    /// Throws when the state cannot be read: going on would silently drop GIFs an earlier pack had.
    func lastKnownGood(
        for results: FetchResults, wanted: ExerciseList, state: BuildState, store: BlobStore,
        resolution: Resolution
    ) throws(StateUnreadable) -> [(gif: StoredGIF, rejection: FetchRejection)] {
        var covered: [(gif: StoredGIF, rejection: FetchRejection)] = []
        var anyRejected = false
        var scan = wanted.makeIterator()
        while !anyRejected, let exercise = try scan.nextInFetch() {
            if case .rejected? = results[exercise.id] { anyRejected = true }
        }
        guard anyRejected else { return [] }
        let known: [String: GIFState]
        do { known = try state.gifs(resolution: resolution.stateKey) } catch {
            throw StateUnreadable(step: .lookingUpLastKnownGood, path: state.path, error: String(describing: error))
        }
        var exercises = wanted.makeIterator()
        while let exercise = try exercises.nextInFetch() {
            guard case .rejected(let rejection)? = results[exercise.id],
                let metadata = known[exercise.id]?.metadata, store.contains(sha256: metadata.sha256)
            else { continue }
            covered.append(
                (
                    StoredGIF(exerciseID: exercise.id, reusing: metadata, origin: .lastKnownGood, requestedResolution: resolution),
                    rejection
                ))
        }
        return covered
    }

    /// Counts the results of the wanted exercises into the report's GIF summary and lists.
    func summarise(
        _ results: FetchResults, wanted: ExerciseList, resolution: Resolution,
        into report: inout BuildReport
    ) throws(StateUnreadable) {
        var exercises = wanted.makeIterator()
        while let exercise = try exercises.nextInFetch() {
            switch results[exercise.id] {
            case .stored(let gif)?:
                report.gifs.valid += 1
                switch gif.origin {
                case .downloaded:
                    report.gifs.downloaded += 1
                    report.gifs.bytesDownloaded += gif.bytes
                    if gif.newlyStored { report.gifs.newlyStored += 1 } else { report.gifs.deduplicated += 1 }
                case .notModified: report.gifs.notModified += 1
                case .fresh: report.gifs.skippedFresh += 1
                case .lastKnownGood: report.gifs.reusedLastGood += 1
                }
                if gif.resolutionMismatch, let requested = resolution.pixels {
                    report.gifs.resolutionMismatches += 1
                    guard report.resolutionMismatches.count < options.reportListLimit else { break }
                    report.resolutionMismatches.append(
                        .init(
                            exerciseID: gif.exerciseID, requested: requested,
                            width: gif.info.width, height: gif.info.height))
                }
            case .rejected(let rejection)?:
                report.gifs.rejected += 1
                report.gifs.missing += 1
                report.gifs.rejectedByReason[rejection.reason.code, default: 0] += 1
                // Never-attempted exercises are counted in `notAttempted`, not listed one by one.
                if rejection.reason != .notAttempted, report.rejections.count < options.reportListLimit {
                    report.rejections.append(rejection)
                }
            case nil:
                report.gifs.missing += 1
            }
        }
    }
}

extension ExerciseList.Iterator {
    /// ``next()`` for the fetch's steps, whose one error is the state they could not read: a
    /// catalog spool that cannot be read back is reported as that (``StateUnreadable/Step/readingCatalog``).
    mutating func nextInFetch() throws(StateUnreadable) -> Exercise? {
        do { return try next() } catch { throw StateUnreadable(error) }
    }
}

// MARK: - Describe and verify stage

extension BuildPipeline {
    /// Each pack's decision (keep the one written before, or assemble) once every frame an assembly
    /// will copy is verified: the describe step decides, the verify stage checks the frames of the
    /// packs to assemble. A GIF whose cached bytes no longer match their hash is dropped and its
    /// exercises downloaded again, whole, before any pack is written; the packs are then decided
    /// again with the new results (a pack may now be current, or hold new GIFs to check).
    func describeAndVerify(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> DecidedPacks {
        var results = results
        while true {
            let decisions = try await describeStage(plan, results: results, tools: tools, indexes: indexes)
            guard
                let repaired = try await verifyStage(
                    decisions, results: results, wanted: plan.wanted, tools: tools,
                    into: &report)
            else {
                return DecidedPacks(decisions: decisions, results: results)
            }
            results = repaired
        }
    }

    /// Decides every pack of the plan (see ``PackMaker/decide(_:results:history:)``).
    private func describeStage(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools,
        indexes: KnownIndexes
    ) async throws -> [PackMaker.Decision] {
        let (maker, state) = (packMaker(tools), tools.state)
        return try await BlockingWork.run("gifpack.describe") {
            try plan.entries.map { entry in
                let name = entry.spec.name
                let history = PackMaker.History(
                    references: indexes.packs(named: name),
                    recorded: try state.writtenPacks(pack: name))
                return try maker.decide(entry, results: results, history: history)
            }
        }
    }

    /// The verify stage: checks the frame of every GIF a pack to assemble copies (see
    /// ``FrameCache/verify(sha256:size:)``), on both cores. Returns nil when all are sound, or the
    /// results with each damaged GIF's exercises downloaded again. Bytes that no longer match their
    /// hash never enter a pack; a GIF found damaged twice in one run fails the build.
    private func verifyStage(
        _ decisions: [PackMaker.Decision], results: FetchResults, wanted: ExerciseList,
        tools: GIFTools, into report: inout BuildReport
    ) async throws -> FetchResults? {
        let sizes = decisions.reduce(into: [String: Int64]()) { sizes, decision in
            sizes.merge(decision.gifSizes) { first, _ in first }
        }
        let frames = tools.frames
        let hashes = sizes.keys.filter { !frames.isVerified(sha256: $0) }.sorted()
        guard !hashes.isEmpty else { return nil }
        let parts = hashes.count < 64 ? 1 : 2
        let damaged = try await withThrowingTaskGroup(of: [String].self) { group in
            for part in 0..<parts {
                group.addTask {
                    try await BlockingWork.run("gifpack.verify") {
                        try stride(from: part, to: hashes.count, by: parts).map { hashes[$0] }
                            .filter { try !frames.verify(sha256: $0, size: sizes[$0] ?? 0) }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        guard !damaged.isEmpty else { return nil }
        var repaired = results
        for hash in damaged.sorted() {
            try await replace(damaged: hash, results: &repaired, wanted: wanted, tools: tools, into: &report)
        }
        return repaired
    }

    /// Drops a damaged blob (its file, its frame and what the state knows of it) and downloads its
    /// exercises again, whole; their new results replace the old in `results`.
    private func replace(
        damaged hash: String, results: inout FetchResults, wanted: ExerciseList, tools: GIFTools,
        into report: inout BuildReport
    ) async throws {
        let current = results
        let users = try wanted.filtered { if case .stored(let gif)? = current[$0.id] { gif.sha256 == hash } else { false } }.array()
        let (layout, framePath, state) = (tools.layout, tools.frames.path(sha256: hash), tools.state)
        try await BlockingWork.run {
            FileSystem.remove(layout.blobPath(sha256: hash))
            FileSystem.remove(framePath)
            try state.forgetBlob(sha256: hash)
        }
        let ids = users.prefix(5).map(\.id).joined(separator: ", ")
        let failure = "the cached GIF \(hash) of exercise(s) \(ids) was damaged (its bytes no longer match their hash)"
        guard !report.damagedBlobs.contains(hash) else {
            throw BuildEnded(status: .failed, message: failure + " again after it was downloaded again; the index was not changed")
        }
        report.damagedBlobs.append(hash)
        let again = try await tools.fetcher().fetch(ExerciseList(users))
        if let stop = again.stop {
            report.stopReason = stop
            throw BuildEnded(
                status: stop.exitStatus,
                message: failure + "; downloading it again stopped: \(stop). It was removed "
                    + "from the cache and the next run downloads it; the index was not changed")
        }
        again.results.forEach { results[$0] = $1 }
        report.gifs = BuildReport.GIFSummary()
        report.gifs.wanted = wanted.count
        report.rejections = []
        report.resolutionMismatches = []
        try summarise(results, wanted: wanted, resolution: tools.resolution, into: &report)
        guard manifest.fetch.maxMissing.allows(missing: report.gifs.missing, of: wanted.count) else {
            throw BuildEnded(
                status: .failed,
                message: failure + "; downloading it again failed, leaving \(report.gifs.missing) of "
                    + "\(wanted.count) exercises without a valid GIF, more than max_missing "
                    + "(\(manifest.fetch.maxMissing)); the index was not changed")
        }
    }

    /// The maker of this build's packs at the tools' resolution.
    func packMaker(_ tools: GIFTools) -> PackMaker {
        var source = sourceDescription
        (source.resolution, source.resolutions) = (tools.resolution.pixels, nil)
        return PackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames, source: source,
            placeholders: tools.placeholders)
    }

    /// The source as the index describes it (`resolutions` only when there are several).
    var sourceDescription: SourceDescription {
        let resolutions = manifest.source.resolutions
        return SourceDescription(
            kind: manifest.source.kind.rawValue,
            baseURL: manifest.output.writesBaseURL ? manifest.source.baseURL : nil,
            resolution: manifest.source.resolution.pixels,
            resolutions: resolutions.count > 1 ? resolutions.compactMap(\.pixels) : nil,
            formats: manifest.output.makesWebP ? manifest.output.formats.map { ImageFormat(rawValue: $0.rawValue) } : nil)
    }
}

/// What the verify stage hands the pack stage: each pack's decision (in the plan's order), every
/// frame an assembly copies verified, and the results the decisions were made from.
struct DecidedPacks: Sendable {
    var decisions: [PackMaker.Decision]
    var results: FetchResults
}

// MARK: - Pack, index and prune stages

extension BuildPipeline {
    /// The pack stage: each pack kept or assembled as decided, from frames the verify stage
    /// checked, with its posters pack made beside it; every pack reported as it is finished.
    func packStage(
        _ plan: PackPlan, decided: DecidedPacks, tools: GIFTools, posters: Bool, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> [PackDescription] {
        let maker = packMaker(tools)
        let results = decided.results
        var descriptions: [PackDescription] = []
        for (entry, decision) in zip(plan.entries, decided.decisions) {
            // The posters pack is made on its own thread while the pack is assembled: it needs
            // only the pack's distinct GIFs, which the results already give, and the second core
            // would otherwise sit idle after the last download.
            let postersWork = posters ? startPosters(entry, results: results, tools: tools, indexes: indexes) : nil
            var description: PackDescription, outcome: PackMaker.Outcome
            do {
                switch decision {
                case .current(let current): (description, outcome) = (current, .unchanged)
                case .assemble(let content):
                    (description, outcome) = try await BlockingWork.run { try maker.assemble(content, results: results) }
                }
            } catch {
                // Whatever the posters thread does now, it finishes before the build ends.
                _ = await postersWork?.result
                throw error
            }
            if let (posters, postersOutcome) = try await postersWork?.value {
                description.posters = posters
                if postersOutcome == .written { report.posterPacksPublished.append(posters.file) }
            }
            descriptions.append(description)
            report.packs.append(.init(description, outcome: outcome.rawValue, exercises: entry.exercises.count))
            observer?(.packFinished(report.packs[report.packs.count - 1]))
        }
        report.gifs.placeholdersDerived = tools.placeholders.derivedCount
        return descriptions
    }

    /// The posters pack of `entry`, made in a task of its own; nil when the manifest wants none.
    private func startPosters(
        _ entry: PackPlan.Entry, results: FetchResults, tools: GIFTools,
        indexes: KnownIndexes
    ) -> Task<(PosterPackDescription, PackMaker.Outcome), any Error>? {
        guard !manifest.output.posterSizes.isEmpty else { return nil }
        let posterMaker = PosterPackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames,
            placeholders: tools.placeholders)
        let (name, state) = (entry.spec.name, tools.state)
        return Task {
            var distinct: Set<String> = []  // a few thousand GIFs, however many exercises share them
            try entry.exercises.forEach { exercise in
                if case .stored(let gif)? = results[exercise.id] { distinct.insert(gif.sha256) }
            }
            let hashes = distinct.sorted()
            let references = [
                indexes.local?.pack(named: name)?.posters,
                indexes.previous?.index.pack(named: name)?.posters
            ].compactMap { $0 }
            return try await BlockingWork.run("gifpack.posters") {
                try posterMaker.make(
                    pack: name, gifHashes: hashes, references: references,
                    recorded: try state.writtenPacks(pack: PosterPackMaker.name(forPack: name)))
            }
        }
    }

    /// The index stage: the index of the packs (written last, atomically, only when its
    /// bytes change, signed when the manifest says so), and every listed version recorded as
    /// written in the state.
    func indexStage(
        _ descriptions: [PackDescription], renditionPacks: [PackDescription], formatPacks: [PackDescription] = [],
        state: BuildState, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> PackIndex {
        let index = PackIndex(
            generator: options.generator, source: sourceDescription, packs: descriptions,
            renditionPacks: renditionPacks, formatPacks: formatPacks)
        let indexWriter = IndexWriter(outputDirectory: options.outputDirectory)
        let (signing, now) = (manifest.signing, options.now ?? Date())
        report.index = try await BlockingWork.run {
            let summary = try indexWriter.write(
                index, localIndex: indexes.local, signing: signing, previous: indexes.previous,
                state: state, now: now)
            // Every listed version counts as written from now on (earlier records are kept as they are).
            for description in descriptions + renditionPacks + formatPacks {
                try state.recordWritten(
                    pack: description.name, version: description.version, file: description.file,
                    sha256: description.sha256, contentDigest: description.contentDigest, at: now)
                if let posters = description.posters {
                    try state.recordWritten(
                        pack: posters.name, version: posters.version, file: posters.file,
                        sha256: posters.sha256, contentDigest: posters.contentDigest, at: now)
                }
            }
            return summary
        }
        return index
    }

    /// The prune stage: what nothing needs any more (see ``Pruner``).
    func pruneStage(_ index: PackIndex, cache: OpenedCache) async throws -> Pruner.Result {
        let pruner = Pruner(outputDirectory: options.outputDirectory, layout: cache.layout, keep: manifest.output.keepVersions)
        let state = cache.state
        return try await BlockingWork.run { try pruner.prune(index: index, state: state) }
    }

    /// The status and message of a build that went through every stage.
    func conclude(_ report: inout BuildReport) {
        let newVersions = report.packs.filter { $0.outcome == PackMaker.Outcome.written.rawValue }.count
        let stillMissing = report.gifs.missing
        report.exitStatus = stillMissing > 0 ? .partial : .success
        report.message =
            newVersions == 0
            ? "nothing changed: \(report.packs.count) pack(s) already current"
            : "wrote \(newVersions) new pack version(s) of \(report.packs.count)"
        if newVersions == 0, let summary = report.index, summary.signed, summary.written, let sequence = summary.sequence {
            report.message += "; index signed anew (sequence \(sequence), expires \(summary.expires ?? "?"))"
        }
        if stillMissing > 0 { report.message += "; \(stillMissing) exercise(s) have no GIF" }
        concludeRenditions(&report)
        if !report.damagedBlobs.isEmpty {
            report.message += "; \(report.damagedBlobs.count) damaged cached GIF(s) were downloaded again"
        }
    }
}

// MARK: - WebP stage

extension BuildPipeline {
    /// The WebP renditions of the distinct GIFs `plan`'s packs hold (`output.formats` with
    /// `webp`): the fetch's processing workers encoded them beside the transfers (``GIFIntake``),
    /// so here they are cache hits; a GIF the fetch did not get to (its encoding failed, or the
    /// cache lost it) is encoded now, and a failure ends the build. Counted in ``BuildReport/webp``.
    /// Then each pack's WebP rendition at this resolution (``FormatPackMaker``), for `formatPacks[]`.
    func webpStage(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> [PackDescription] {
        guard let cache = tools.webp, let resolution = tools.resolution.pixels else { return [] }
        var distinct: [String: Int64] = [:]
        for entry in plan.entries {
            try entry.exercises.forEach { exercise in
                if case .stored(let gif)? = results[exercise.id] { distinct[gif.sha256] = gif.bytes }
            }
        }
        let hashes = distinct.keys.sorted()
        let layout = tools.layout
        let records = try await BlockingWork.run("gifpack.webp") {
            try hashes.map { hash in (hash, try cache.ensure(sha256: hash, blobPath: layout.blobPath(sha256: hash))) }
        }
        var summary = report.webp ?? BuildReport.WebPSummary()
        for (hash, record) in records {
            summary.add(record, gifBytes: distinct[hash] ?? 0)
        }
        summary.encoded = cache.encodedCount
        report.webp = summary
        let byHash = Dictionary(uniqueKeysWithValues: records)
        var source = sourceDescription
        (source.baseURL, source.resolution, source.resolutions, source.formats) = (nil, resolution, nil, nil)
        let maker = FormatPackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames, webp: cache,
            placeholders: tools.placeholders, source: source)
        var descriptions: [PackDescription] = []
        for entry in plan.entries {
            let name = FormatPackMaker.name(pack: entry.spec.name, resolution: resolution)
            let state = tools.state
            let (description, outcome) = try await BlockingWork.run("gifpack.webp-pack") {
                let history = PackMaker.History(references: indexes.packs(named: name), recorded: try state.writtenPacks(pack: name))
                return try maker.make(entry, resolution: resolution, results: results, records: byHash, history: history)
            }
            descriptions.append(description)
            report.packs.append(.init(description, outcome: outcome.rawValue, exercises: entry.exercises.count))
            observer?(.packFinished(report.packs[report.packs.count - 1]))
        }
        return descriptions
    }
}

extension BuildReport.WebPSummary {
    /// Counts one GIF's rendition.
    mutating func add(_ record: WebPCache.Record, gifBytes: Int64) {
        gifs += 1
        outcomes[record.outcome, default: 0] += 1
        self.gifBytes += gifBytes
        renditionBytes += record.webpBytes ?? gifBytes
        ratio = self.gifBytes > 0 ? Double(renditionBytes) / Double(self.gifBytes) : nil
        guard let mean = record.meanSSIM, let worst = record.worstSSIM else { return }
        let webps = gifs - (outcomes["gif"] ?? 0)
        meanSSIM = ((meanSSIM ?? 0) * Double(webps - 1) + mean) / Double(webps)
        worstSSIM = min(worstSSIM ?? worst, worst)
        worstSSIMDistribution[Self.bucket(worst), default: 0] += 1
    }

    static func bucket(_ ssim: Double) -> String {
        switch ssim {
        case ..<0.98: "<0.98"
        case ..<0.99: "0.98-0.99"
        case ..<0.995: "0.99-0.995"
        case ..<0.999: "0.995-0.999"
        default: ">=0.999"
        }
    }
}

// MARK: - Renditions: the fetch and packs of each further resolution

extension BuildPipeline {
    /// The fetch stage of every resolution in the manifest's order: the first for every exercise
    /// before the next starts, so a quota or budget that runs out takes the sharper renditions, never
    /// the essential one. Each resolution's counts go to ``BuildReport/renditions`` (``BuildReport/gifs``
    /// keeps the first's). A stop ends the build with what it fetched kept in the cache and state;
    /// a quota or budget stop after the first resolution was fetched whole comes back as
    /// ``FetchedRenditions/stop``, with the results of the resolutions before it. The first
    /// resolution's fetch goes on from `early`'s (the GIFs asked for while the list arrived).
    func fetchRenditions(
        _ renditions: [RenditionPlan], tools: GIFTools, early: EarlyFetch?,
        into report: inout BuildReport
    ) async throws -> FetchedRenditions {
        var all: [FetchResults] = []
        for rendition in renditions {
            guard !rendition.plan.entries.isEmpty else {
                all.append(FetchResults())
                continue
            }
            let tools = tools.at(rendition.resolution)
            if renditions.count > 1, let pixels = rendition.resolution.pixels {
                observer?(.renditionStarted(resolution: pixels, position: all.count + 1, count: renditions.count))
            }
            do {
                all.append(
                    try await withCounts(of: rendition, among: renditions.count, report: &report) { report in
                        try await fetchStage(rendition.plan.wanted, tools: tools, early: rendition.isFirst ? early : nil, into: &report)
                    })
            } catch let stop as BuildEnded where !all.isEmpty && stop.status == .quotaExhausted {
                return FetchedRenditions(results: all, stop: stop)
            }
        }
        return FetchedRenditions(results: all, stop: nil)
    }

    /// Whether a build whose fetch `stop`ped in a later resolution writes the resolutions before
    /// it: only when neither index (the output's, `--previous-index`) lists a pack of a resolution
    /// the stop leaves out, so the stop never takes a rendition away from apps (that index then
    /// stays as it is, whole), and some pack takes those resolutions.
    func writesBefore(_ stop: FetchedRenditions, renditions: [RenditionPlan], indexes: KnownIndexes) -> Bool {
        guard renditions.prefix(stop.results.count).contains(where: { !$0.plan.entries.isEmpty }) else { return false }
        let waiting = Set(renditions.dropFirst(stop.results.count).compactMap(\.resolution.pixels))
        let listed = [indexes.local, indexes.previous?.index].compactMap { $0 }.flatMap(\.allPacks)
        return !listed.contains { $0.resolution.map(waiting.contains) ?? false }
    }

    /// The status and message of a build whose fetch stopped in a later resolution and wrote
    /// the resolutions before it: the stop's status (5), what was written, what waits.
    func concludeStopped(_ stop: BuildEnded, renditions: [RenditionPlan], fetched: Int, into report: inout BuildReport) {
        let newVersions = report.packs.filter { $0.outcome == PackMaker.Outcome.written.rawValue }.count
        let pixels = { (renditions: ArraySlice<RenditionPlan>) in
            renditions.compactMap(\.resolution.pixels).map { "\($0) px" }.joined(separator: ", ")
        }
        let reason = report.stopReason.map { "\($0)" } ?? "the fetch stopped"
        let skipped = report.notAttempted.map { "; \($0.sentence)" } ?? ""
        let missing = report.gifs.missing > 0 ? ", \(report.gifs.missing) exercise(s) without a GIF" : ""
        report.exitStatus = stop.status
        report.message =
            "\(reason)\(skipped); wrote \(pixels(renditions.prefix(fetched))), fetched whole "
            + "(\(newVersions) new pack version(s) of \(report.packs.count)\(missing)); \(pixels(renditions.dropFirst(fetched))) "
            + "not written. Every GIF fetched so far is kept, and the next run goes on from there"
    }

    /// Each resolution's packs decided, verified and made: the first's (``PackIndex/packs``, with
    /// posters) and the others' (``PackIndex/renditionPacks``). A pack of another resolution none of
    /// whose exercises has a GIF at it is not made: the index lists the renditions the build got.
    /// `results` may hold fewer resolutions than `renditions` (a stop): only theirs are packed.
    func packRenditions(
        _ renditions: [RenditionPlan], results: [FetchResults], tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    )
        async throws -> (packs: [PackDescription], renditionPacks: [PackDescription], formatPacks: [PackDescription])
    {
        var (packs, renditionPacks, formatPacks): ([PackDescription], [PackDescription], [PackDescription]) = ([], [], [])
        for (rendition, results) in zip(renditions, results) {
            var plan = rendition.plan
            if !rendition.isFirst {
                plan.entries = try plan.entries.filter { entry in
                    try entry.exercises.contains { if case .stored? = results[$0.id] { true } else { false } }
                }
            }
            guard !plan.entries.isEmpty else { continue }
            let tools = tools.at(rendition.resolution)
            let decided = try await withCounts(of: rendition, among: renditions.count, report: &report) { report in
                try await describeAndVerify(plan, results: results, tools: tools, indexes: indexes, into: &report)
            }
            var descriptions = try await packStage(
                plan, decided: decided, tools: tools, posters: rendition.isFirst,
                indexes: indexes, into: &report)
            formatPacks += try await webpStage(plan, results: results, tools: tools, indexes: indexes, into: &report)
            if renditions.count > 1 {
                for position in descriptions.indices { descriptions[position].resolution = rendition.resolution.pixels }
                if let position = report.renditions?.firstIndex(where: { $0.resolution == rendition.resolution.pixels }) {
                    report.renditions?[position].packs = descriptions.count
                }
            }
            if rendition.isFirst { packs = descriptions } else { renditionPacks += descriptions }
        }
        return (packs, renditionPacks, formatPacks)
    }

    /// Runs a stage of `rendition` with ``BuildReport/gifs`` holding that resolution's counts, and
    /// records them in ``BuildReport/renditions`` (when there are several resolutions) however the
    /// stage ends.
    private func withCounts<T>(
        of rendition: RenditionPlan, among count: Int, report: inout BuildReport,
        _ stage: (inout BuildReport) async throws -> T
    ) async throws -> T {
        let first = report.gifs
        if !rendition.isFirst {
            report.gifs = report.renditions?.first { $0.resolution == rendition.resolution.pixels }?.gifs ?? BuildReport.GIFSummary()
        }
        report.gifs.wanted = rendition.plan.wanted.count
        func finish(_ report: inout BuildReport) {
            if count > 1, let pixels = rendition.resolution.pixels {
                var summary = BuildReport.RenditionSummary(resolution: pixels, gifs: report.gifs)
                summary.planCeiling = report.gifs.rejectedByReason[RejectionReason.planCeiling.code] ?? 0
                var renditions = report.renditions ?? []
                if let position = renditions.firstIndex(where: { $0.resolution == pixels }) {
                    summary.packs = renditions[position].packs
                    renditions[position] = summary
                } else {
                    renditions.append(summary)
                }
                report.renditions = renditions
            }
            if !rendition.isFirst { report.gifs = first }
        }
        do {
            let value = try await stage(&report)
            finish(&report)
            return value
        } catch {
            finish(&report)
            throw error
        }
    }

    /// At a resolution other than the first, a GIF of another size (the API plan's ceiling serves
    /// a smaller one, still 200) is never packed under that resolution: it becomes a
    /// `plan-ceiling` rejection, and its exercise keeps its other renditions. The sizes served are
    /// recorded (``BuildReport/GIFSummary/otherSizesServed``) for the message.
    func refuseOtherSizes(
        _ results: inout FetchResults, wanted: ExerciseList, resolution: Resolution,
        into report: inout BuildReport
    ) throws(StateUnreadable) {
        guard let pixels = resolution.pixels else { return }
        var sides = Set(report.gifs.otherSizesServed ?? [])
        var exercises = wanted.makeIterator()
        while let exercise = try exercises.nextInFetch() {
            guard case .stored(let gif)? = results[exercise.id], gif.resolutionMismatch else { continue }
            let side = max(gif.info.width, gif.info.height)
            sides.insert(side)
            results[exercise.id] = .rejected(
                FetchRejection(
                    exerciseID: exercise.id, url: exercise.imageURL, reason: .planCeiling,
                    detail: "served \(gif.info.width)×\(gif.info.height), not \(pixels) px"
                        + (side < pixels ? ": the API plan's resolution limit" : ""),
                    status: 200))
        }
        report.gifs.otherSizesServed = sides.isEmpty ? nil : sides.sorted()
    }

    /// The message and status of a build with several resolutions: one line per resolution some
    /// exercises lack, saying what was served when the API served another size than asked (the
    /// size asked for and the sizes got, naming the plan's limit only when every one was smaller),
    /// and exit 3 unless `--allow-missing-renditions`.
    func concludeRenditions(_ report: inout BuildReport) {
        guard let renditions = report.renditions else { return }
        var missing = 0
        for rendition in renditions.dropFirst() where rendition.gifs.missing > 0 {
            missing += rendition.gifs.missing
            let kept =
                rendition.packs == 0
                ? "no \(rendition.resolution) px pack was made"
                : "those exercises keep their other renditions"
            if rendition.planCeiling > 0 {
                let sides = rendition.gifs.otherSizesServed ?? []
                let smaller = !sides.isEmpty && sides.allSatisfy { $0 < rendition.resolution }
                report.message +=
                    "; \(rendition.resolution) px: the API served \(rendition.planCeiling) of \(rendition.gifs.wanted) "
                    + "GIFs at \(Self.pixelList(sides)), not the \(rendition.resolution) px asked for"
                    + (smaller ? ", the limit of its plan (BASIC serves 180 px only, PRO up to 360 px)" : "") + "; \(kept)"
            } else {
                report.message += "; \(rendition.gifs.missing) exercise(s) have no \(rendition.resolution) px rendition; \(kept)"
            }
        }
        if missing > 0, report.exitStatus == .success, !options.allowMissingRenditions {
            report.exitStatus = .partial
            report.message += " (--allow-missing-renditions: exit 0)"
        }
    }

    /// "180 px", "180 and 720 px", "180, 360 and 720 px"; "another size" when none was recorded.
    static func pixelList(_ sides: [Int]) -> String {
        guard let last = sides.last else { return "another size" }
        let numbers = sides.map(String.init)
        return (sides.count == 1 ? numbers[0] : numbers.dropLast().joined(separator: ", ") + " and " + String(last)) + " px"
    }
}

/// The fetch of every resolution: the results of those fetched (all of them, or those before a
/// quota or budget ``stop`` in a resolution after the first).
struct FetchedRenditions: Sendable {
    var results: [FetchResults]
    var stop: BuildEnded?
}

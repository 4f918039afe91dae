import Foundation
import GifPackHTTP

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

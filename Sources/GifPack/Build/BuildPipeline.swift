import Foundation
import GifPackHTTP

/// The whole build: manifest → catalog → plan → fetch → verify → pack → index → prune → report.
///
/// `run()` never throws: every failure ends in a report whose ``ExitStatus`` and message say what
/// went wrong. Nothing in the output directory changes unless the build succeeds; pack files are
/// published before the index, and the index is replaced atomically last (and only when its bytes
/// change), so readers always see a complete index whose packs exist.
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "manifests/demo.yaml", environment: env)
/// let options = try BuildOptions.resolve(manifest: manifest, outputDirectory: "dist", cacheDirectory: nil, environment: env)
/// let report = await BuildPipeline(manifest: manifest, options: options).run()
/// exit(report.exitStatus.rawValue)
/// ```
public struct BuildPipeline: Sendable {
    public let manifest: Manifest
    public let options: BuildOptions
    public let observer: BuildObserver?

    public init(manifest: Manifest, options: BuildOptions, observer: BuildObserver? = nil) {
        self.manifest = manifest
        self.options = options
        self.observer = observer
    }

    public var indexPath: String { "\(options.outputDirectory)/index.json" }
    public var reportPath: String { "\(options.outputDirectory)/report.json" }

    public func run() async -> BuildReport {
        var report = BuildReport(generator: options.generator, exitStatus: .failed, message: "")
        let clock = ContinuousClock()
        let started = clock.now
        let startDate = Date()
        do {
            try await build(into: &report, clock: clock)
        } catch let error as CatalogError {
            switch error {
            case .authRejected: report.exitStatus = .authRejected
            case .quotaExhausted: report.exitStatus = .quotaExhausted
            default: report.exitStatus = .failed
            }
            report.message = error.description
        } catch let end as BuildEnded {
            report.exitStatus = end.status
            report.message = end.message
        } catch let error as CatalogShrank {
            report.exitStatus = .catalogShrank
            report.message = error.description
        } catch let error as EmptySelector {
            report.exitStatus = .usage
            report.message = error.description
        } catch let error as DirectoryClaimError {
            report.exitStatus = .usage
            report.message = error.description + "; nothing was fetched"
            if error.concernsOutput {
                // Not even report.json goes into a directory that is not gifpack's.
                report.stageSeconds["total"] = (clock.now - started).seconds
                report.complete(startedAt: startDate, finishedAt: Date())
                report = SecretRedactor(source: manifest.source).redact(report)
                observer?(.finished(report))
                return report
            }
        } catch let error as StateUnreadable {
            report.exitStatus = .failed
            report.message = error.description
            report.stateErrors.append(error.detail)
        } catch let error as BuildLock.LockError {
            report.exitStatus = if case .held = error { .locked } else { .failed }
            report.message = error.description
            report.stageSeconds["total"] = (clock.now - started).seconds
            report.complete(startedAt: startDate, finishedAt: Date())
            return SecretRedactor(source: manifest.source).redact(report) // the report file belongs to the run holding the lock
        } catch {
            report.exitStatus = .failed
            report.message = String(describing: error)
        }
        if let recovery = report.stateRecovery { report.message += "; \(recovery.sentence)" }
        report.stageSeconds["total"] = (clock.now - started).seconds
        report.complete(startedAt: startDate, finishedAt: Date())
        // Whatever path the key came by (an error body, a header, a record), the report written,
        // printed, turned into metrics or a step summary never holds it.
        report = SecretRedactor(source: manifest.source).redact(report)
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
    /// ``PackPublisher/Decision``, every frame an assembly copies checked) → pack
    /// (``PackDescription``s) → index (``PackIndex``) → prune. A stage that ends the build early
    /// throws ``BuildEnded`` (or the error that stopped it); nothing flows back to an earlier stage.
    private func build(into report: inout BuildReport, clock: ContinuousClock) async throws {
        let started = clock.now
        let cache = try await openCache()
        report.stateRecovery = cache.recovery
        // Closed before the locks are released: the next build holding the cache finds the state
        // file whole and nobody else writing it.
        defer { cache.close() }
        // No more transfers at once than the fetch window's cap: the fetcher queues a few requests
        // behind those in flight, and the client's own line holds them until a slot frees.
        let client = try HTTPClient(maxConnections: FetchGovernor.cap(for: manifest.fetch), caFile: manifest.fetch.caFile)
        defer { client.shutdown() }
        // Every request sent counts, those of a run that stops early (a 401 on the first page) too.
        defer { report.http.requests = client.statistics.requestsStarted }
        let indexes = try await readIndexes(client: client)
        // The catalog's retries count with the GIFs' (added last, whatever ends the build).
        let catalogRetries = CatalogRetryCount()
        defer { report.http.retries += catalogRetries.value.withLock { $0 } }
        var stages = StageClock(clock: clock, observer: observer)

        let tools = GIFTools(manifest: manifest, layout: cache.layout, state: cache.state, client: client,
                             options: options, startedAt: started, observer: observer)
        // GIF requests start with the first page's image ids, bounded until the checks pass (EarlyFetch).
        let (feed, early) = startEarlyFetch(tools: tools, recovered: cache.recovery != nil)
        let catalog: Catalog, plan: PackPlan
        do {
            catalog = try await catalogStage(cache: cache, client: client, retries: catalogRetries, early: feed, into: &report)
            stages.end("catalog", into: &report)
            plan = try planStage(catalog, into: &report)
            stages.end("plan", into: &report)
        } catch {
            await early?.finish()
            throw error
        }
        let renditions = RenditionPlan.all(for: manifest.source, plan: plan, catalog: catalog)
        let results: [FetchResults]
        do { results = try await fetchRenditions(renditions, tools: tools, early: early, into: &report) } catch {
            await early?.finish()
            if error is BuildEnded { stages.record("fetch", into: &report) }
            throw error
        }
        await early?.finish()
        stages.end("fetch", into: &report)
        try checkMissing(wanted: renditions[0].plan.wanted.count, into: &report)
        let (descriptions, renditionPacks) = try await packRenditions(renditions, results: results, tools: tools,
                                                                      indexes: indexes, into: &report)
        stages.end("pack", into: &report)
        let index = try await indexStage(descriptions, renditionPacks: renditionPacks, state: cache.state, indexes: indexes,
                                         into: &report)
        stages.end("index", into: &report)
        report.pruned = try await pruneStage(index, cache: cache)
        stages.end("prune", into: &report)
        conclude(&report)
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

/// How a stage ends the build early with a report that says why (a stop of the fetch, too many
/// exercises without a GIF, a damaged GIF that could not be replaced): the report's status and
/// message; anything else the stage set on the report stays.
struct BuildEnded: Error {
    var status: ExitStatus
    var message: String
}

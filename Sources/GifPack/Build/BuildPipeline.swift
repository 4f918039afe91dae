import Foundation
import GifPackHTTP
import Synchronization

/// The whole build: manifest → catalog → plan → fetch → validate → store → pack → index → report.
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

    private func build(into report: inout BuildReport, clock: ContinuousClock) async throws {
        let started = clock.now
        let layout = CacheLayout(root: options.cacheDirectory)
        try claimDirectories()
        let locks = try BuildLock.acquire([options.outputDirectory, options.cacheDirectory])
        defer { withExtendedLifetime(locks) {} }
        let sourceKey = manifest.source.stateKey
        let (state, expectedCount, recovery) = try await BlockingWork.run {
            try layout.prepare()
            let (state, recovery) = try StateOpener.open(layout: layout, source: sourceKey)
            return (state, try state.lastCatalogCount(), recovery)
        }
        report.stateRecovery = recovery
        // Closed before the locks are released (defers run last-declared first): the next build
        // holding the cache finds the state file whole and nobody else writing it.
        defer { state.close() }
        // No more transfers at once than the fetch window's cap: the fetcher queues a few requests
        // behind those in flight, and the client's own line holds them until a slot frees.
        let client = try HTTPClient(maxConnections: FetchGovernor.cap(for: manifest.fetch), caFile: manifest.fetch.caFile)
        defer { client.shutdown() }
        // Every request sent counts, those of a run that stops early (a 401 on the first page) too.
        defer { report.http.requests = client.statistics.requestsStarted }
        // The live index first: without it the build cannot know which names and sequence are taken.
        let previous: PreviousIndex? = if let location = options.previousIndex {
            try await PreviousIndex.load(location, client: client)
        } else { nil }

        // The output directory's own index (which it holds under the lock), read before the first
        // request: an unreadable one stops the build before any quota is spent. Its exercise lists
        // are left out: the catalog gives them, and at 100,000 exercises they are tens of megabytes.
        let indexPath = self.indexPath
        let local = try await BlockingWork.run("gifpack.index") { () throws(PublishedIndexUnreadable) in
            try PackIndex.loadPublished(from: indexPath, omittingExercises: true)
        }

        var stage = clock.now
        var stages = BuildStage.allCases.makeIterator()
        observer?(.stageStarted(stages.next()!))
        func endStage(_ name: String) {
            report.stageSeconds[name] = (clock.now - stage).seconds
            stage = clock.now
            if let next = stages.next() { observer?(.stageStarted(next)) }
        }

        // The records go to a spool file in the cache as pages arrive; the catalog keeps where they are.
        let spool: RecordSpool
        do { spool = try RecordSpool(directory: layout.temporaryDirectory) } catch { throw CatalogError.spool(error) }
        // The catalog's retries count with the GIFs' (added last, whatever ends the build), and
        // each page request is logged like a GIF's.
        let catalogRetries = CatalogRetryCount()
        defer { report.http.retries += catalogRetries.value.withLock { $0 } }
        let catalogObserver: BuildObserver = { [observer] event in
            if case .catalogAttempt(let attempt) = event, attempt.outcome == .retry { catalogRetries.value.withLock { $0 += 1 } }
            observer?(event)
        }
        let catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client,
                                                    expectedCount: expectedCount, spool: spool,
                                                    pagesPath: layout.catalogPagesPath, observer: catalogObserver).fetchCatalog()
        report.catalog = .init(exercises: catalog.exercises.count, pages: catalog.pagesFetched, pagesReused: catalog.pagesReused,
                               rejectedRecords: catalog.rejected, duplicateIDs: catalog.duplicateIDs)
        let listLimit = options.reportListLimit
        // A catalog that lost more of the last one's exercises than max_removed allows stops here,
        // before any GIF request, and the state keeps the last catalog to compare the next run with.
        let (maxRemoved, lastCount, count) = (manifest.fetch.maxRemoved, expectedCount, catalog.exercises.count)
        report.catalogChanges = try await BlockingWork.run {
            try state.replaceCatalog(CatalogFingerprint.fingerprints(of: catalog), digest: CatalogFingerprint.digest(of: catalog),
                                     listLimit: listLimit) { removed in
                guard let lastCount, removed > 0, !maxRemoved.allows(missing: removed, of: lastCount) else { return }
                throw CatalogShrank(removed: removed, previous: lastCount, now: count, limit: maxRemoved)
            }
        }
        if let damaged = report.stateRecovery {
            let (indexPath, resolution, fetch) = (self.indexPath, manifest.source.resolution ?? 0, manifest.fetch)
            report.stateRecovery = try await BlockingWork.run {
                var rebuilt = damaged
                try StateOpener.rebuild(&rebuilt, state: state, indexPath: indexPath, catalog: catalog.exercises, layout: layout,
                                        resolution: resolution, fetch: fetch)
                return rebuilt
            }
        }
        observer?(.catalogFetched(exercises: catalog.exercises.count, pages: catalog.pagesFetched))
        endStage("catalog")

        let plan = PackPlan(specs: manifest.packs, catalog: catalog)
        // A pack that would be empty is a selector that names nothing the catalog has.
        if let empty = plan.emptySelector(catalog: catalog) { throw empty }
        let wanted = plan.wanted
        report.gifs.wanted = wanted.count
        endStage("plan")

        let frames = FrameCache(layout: layout, level: manifest.output.zstdLevel, mtime: options.sourceDateEpoch)
        let placeholders = PlaceholderCache(layout: layout, settings: manifest.output.placeholderSettings,
                                            posterFrames: manifest.output.posterSizes.isEmpty ? nil
                                                : PosterFrameCache(level: frames.level, mtime: frames.mtime))
        let governor = FetchGovernor(settings: manifest.fetch, requestsAlreadySent: client.statistics.requestsStarted,
                                     startedAt: started)
        let fetcher = GIFFetcher(client: client, source: manifest.source, settings: manifest.fetch, layout: layout,
                                 frames: frames, state: state, governor: governor, placeholders: placeholders, observer: observer)
        let (fetchStarted, before) = (ContinuousClock.now, client.statistics)
        var outcome = try await fetcher.fetch(wanted)
        if let fetched = outcome.freshFetchedAt, let refresh = manifest.fetch.refreshAfter {
            // When the GIFs refresh_after spared are asked for again: the summary says so.
            let seconds = refresh.milliseconds / 1000
            report.gifs.freshRecheckFrom = BuildReport.timestamp(fetched.lowerBound.addingTimeInterval(seconds))
            report.gifs.freshRecheckBy = BuildReport.timestamp(fetched.upperBound.addingTimeInterval(seconds))
        }
        let (fetchEnded, after) = (ContinuousClock.now, client.statistics)
        // Taken out of the outcome, so the results have one owner and change in place below.
        var results = outcome.results
        outcome.results = FetchResults()
        report.stateErrors = fetcher.processor.stateWriteErrors
        let statistics = client.statistics
        report.http = .init(requests: statistics.requestsStarted, retries: outcome.retries, rateLimited: outcome.rateLimited,
                            quotaRemaining: outcome.quotaRemaining, maxInFlight: statistics.maxInFlight,
                            connectionsOpened: statistics.connectionsOpened)
        if after.requestsStarted > before.requestsStarted, fetchEnded > fetchStarted {
            let slots = Double(manifest.fetch.concurrency) * (fetchEnded - fetchStarted).seconds
            let busy = after.inFlightSeconds(at: fetchEnded) - before.inFlightSeconds(at: fetchStarted)
            report.http.fetchWindowUse = busy / slots
            report.http.fetchWindowIdleSlotSeconds = max(0, slots - busy)
        }
        if let stop = outcome.stop {
            report.stageSeconds["fetch"] = (clock.now - stage).seconds
            summarise(results, wanted: wanted, into: &report)
            report.stopReason = stop
            if !outcome.notAttempted.isEmpty { report.notAttempted = .init(ids: outcome.notAttempted) }
            observer?(.stopped(stop))
            report.exitStatus = stop.exitStatus
            let skipped = report.notAttempted.map { "; \($0.sentence)" } ?? ""
            report.message = "\(stop)\(skipped); nothing was published. Every GIF fetched so far is kept, and the next run goes on from there"
            if case .authRejected = stop, let variable = manifest.source.apiKeyEnvironmentVariable {
                report.message = "\(stop): check the key in the environment variable \(variable)\(skipped); nothing was published"
            }
            return
        }
        // The step reads the results and says what to change; they change here, in place: a copy
        // of every exercise's result (megabytes at 100,000) is never made.
        let cover = try await BlockingWork.run("gifpack.last-known-good") { [results] () throws(StateUnreadable) in
            try lastKnownGood(for: results, wanted: wanted, state: state, store: BlobStore(layout: layout))
        }
        for (gif, _) in cover { results[gif.exerciseID] = .stored(gif) }
        report.reusedLastGood = Array(cover.lazy.map(\.rejection).prefix(options.reportListLimit))
        summarise(results, wanted: wanted, into: &report)
        endStage("fetch")

        let missing = report.gifs.missing
        guard manifest.fetch.maxMissing.allows(missing: missing, of: wanted.count) else {
            report.exitStatus = .failed
            report.message = "\(missing) of \(wanted.count) exercises have no valid GIF, more than max_missing (\(manifest.fetch.maxMissing)); nothing was published"
            return
        }

        let sourceDescription = SourceDescription(kind: manifest.source.kind.rawValue,
                                                  baseURL: manifest.output.publishBaseURL ? manifest.source.baseURL : nil,
                                                  resolution: manifest.source.resolution)
        let publisher = PackPublisher(outputDirectory: options.outputDirectory, frames: frames, source: sourceDescription,
                                      placeholders: placeholders)
        let posterPublisher = PosterPackPublisher(outputDirectory: options.outputDirectory, frames: frames,
                                                  placeholders: placeholders)
        var descriptions: [PackDescription] = []
        var finalResults = results
        var position = 0
        while position < plan.entries.count {
            let entry = plan.entries[position]
            let current = finalResults
            var description: PackDescription, outcome: PackPublisher.Outcome
            var postersResult: (PosterPackDescription, PackPublisher.Outcome)?
            do {
                let name = entry.spec.name
                // The posters pack is made on its own thread while the pack is assembled: it needs
                // only the pack's distinct GIFs, which the results already give, and the second
                // core would otherwise sit idle after the last download. (Should the pack find a
                // damaged GIF, this posters pack is dropped and made again with the new one.)
                let postersWork: Task<(PosterPackDescription, PackPublisher.Outcome), any Error>? =
                    manifest.output.posterSizes.isEmpty ? nil : Task {
                        var distinct: Set<String> = [] // a few thousand GIFs, however many exercises share them
                        for exercise in entry.exercises {
                            if case .stored(let gif)? = current[exercise.id] { distinct.insert(gif.sha256) }
                        }
                        let hashes = distinct.sorted()
                        let references = [local?.pack(named: name)?.posters, previous?.index.pack(named: name)?.posters].compactMap { $0 }
                        return try await BlockingWork.run("gifpack.posters") {
                            try posterPublisher.publish(pack: name, gifHashes: hashes, references: references,
                                                        recorded: try state.publishedPacks(pack: PosterPackPublisher.name(forPack: name)))
                        }
                    }
                do {
                    (description, outcome) = try await BlockingWork.run {
                        let references = [local?.pack(named: name), previous?.index.pack(named: name)].compactMap { $0 }
                        let history = PackPublisher.History(references: references, recorded: try state.publishedPacks(pack: name))
                        return try publisher.publish(entry, results: current, history: history)
                    }
                } catch {
                    // Whatever the posters thread does now, it finishes before the pack is tried again.
                    _ = await postersWork?.result
                    throw error
                }
                postersResult = try await postersWork?.value
            } catch PackPublishError.damagedBlob(let hash) {
                // Bytes that no longer match their hash never enter a pack. The blob and what the
                // state knows of it go; its exercises are downloaded again, whole, and the pack is
                // assembled again. A second damage of the same GIF in one run fails the build.
                let users = wanted.filter { if case .stored(let gif)? = current[$0.id] { gif.sha256 == hash } else { false } }
                let framePath = frames.path(sha256: hash)
                try await BlockingWork.run {
                    FileSystem.remove(layout.blobPath(sha256: hash))
                    FileSystem.remove(framePath)
                    try state.forgetBlob(sha256: hash)
                }
                let ids = users.prefix(5).map(\.id).joined(separator: ", ")
                let failure = "the cached GIF \(hash) of exercise(s) \(ids) was damaged (its bytes no longer match their hash)"
                guard !report.damagedBlobs.contains(hash) else {
                    report.exitStatus = .failed
                    report.message = failure + " again after it was downloaded again; the index was not changed"
                    return
                }
                report.damagedBlobs.append(hash)
                let again = try await GIFFetcher(client: client, source: manifest.source, settings: manifest.fetch, layout: layout,
                                             frames: frames, state: state, governor: governor, placeholders: placeholders,
                                             observer: observer).fetch(ExerciseList(users))
                if let stop = again.stop {
                    report.exitStatus = stop.exitStatus
                    report.stopReason = stop
                    report.message = failure + "; downloading it again stopped: \(stop). It was removed from the cache and "
                        + "the next run downloads it; the index was not changed"
                    return
                }
                again.results.forEach { finalResults[$0] = $1 }
                report.gifs = BuildReport.GIFSummary()
                report.gifs.wanted = wanted.count
                report.rejections = []
                report.resolutionMismatches = []
                summarise(finalResults, wanted: wanted, into: &report)
                guard manifest.fetch.maxMissing.allows(missing: report.gifs.missing, of: wanted.count) else {
                    report.exitStatus = .failed
                    report.message = failure + "; downloading it again failed, leaving \(report.gifs.missing) of \(wanted.count) "
                        + "exercises without a valid GIF, more than max_missing (\(manifest.fetch.maxMissing)); the index was not changed"
                    return
                }
                continue
            }
            position += 1
            if let (posters, postersOutcome) = postersResult {
                description.posters = posters
                if postersOutcome == .published { report.posterPacksPublished.append(posters.file) }
            }
            descriptions.append(description)
            report.packs.append(.init(name: description.name, version: description.version, file: description.file,
                                      outcome: outcome.rawValue, exercises: entry.exercises.count,
                                      missing: description.exercises.filter { $0.gif == nil }.count,
                                      distinctGIFs: description.gifs.count, bytes: description.bytes,
                                      uncompressedBytes: description.uncompressedBytes))
            observer?(.packFinished(report.packs[report.packs.count - 1]))
        }
        report.gifs.placeholdersDerived = placeholders.derivedCount
        endStage("pack")

        let index = PackIndex(generator: options.generator, source: sourceDescription, packs: descriptions)
        let finalDescriptions = descriptions
        let indexPublisher = IndexPublisher(outputDirectory: options.outputDirectory)
        let signing = manifest.signing
        let now = options.now ?? Date()
        report.index = try await BlockingWork.run {
            let summary = try indexPublisher.publish(index, localIndex: local, signing: signing, previous: previous,
                                                     state: state, now: now)
            // Every listed version counts as published from now on (earlier records are kept as they are).
            for description in finalDescriptions {
                try state.recordPublished(pack: description.name, version: description.version, file: description.file,
                                          sha256: description.sha256, contentDigest: description.contentDigest, at: now)
                if let posters = description.posters {
                    try state.recordPublished(pack: posters.name, version: posters.version, file: posters.file,
                                              sha256: posters.sha256, contentDigest: posters.contentDigest, at: now)
                }
            }
            return summary
        }
        endStage("index")

        let pruner = Pruner(outputDirectory: options.outputDirectory, layout: layout, keep: manifest.output.keepVersions)
        report.pruned = try await BlockingWork.run { try pruner.prune(index: index, state: state) }
        endStage("prune")

        let published = report.packs.filter { $0.outcome == PackPublisher.Outcome.published.rawValue }.count
        let stillMissing = report.gifs.missing
        report.exitStatus = stillMissing > 0 ? .partial : .success
        report.message = published == 0
            ? "nothing changed: \(report.packs.count) pack(s) already current"
            : "published \(published) new pack version(s) of \(report.packs.count)"
        if published == 0, let summary = report.index, summary.signed, summary.written, let sequence = summary.sequence {
            report.message += "; index signed anew (sequence \(sequence), expires \(summary.expires ?? "?"))"
        }
        if stillMissing > 0 { report.message += "; \(stillMissing) exercise(s) have no GIF" }
        if !report.damagedBlobs.isEmpty {
            report.message += "; \(report.damagedBlobs.count) damaged cached GIF(s) were downloaded again"
        }
    }

    /// Refuses an output or cache directory that is neither empty nor gifpack's, and marks the
    /// ones it takes (see ``DirectoryClaim``), before anything is written, created or deleted.
    private func claimDirectories() throws {
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

    /// The failures of this run an earlier run's GIF can stand in for, each with the GIF that
    /// earlier run stored for the same exercise; `results` is only read (the caller changes them).
    /// Throws when the state cannot be read: going on would silently drop GIFs an earlier pack had.
    func lastKnownGood(for results: FetchResults, wanted: ExerciseList, state: BuildState,
                       store: BlobStore) throws(StateUnreadable) -> [(gif: StoredGIF, rejection: FetchRejection)] {
        var covered: [(gif: StoredGIF, rejection: FetchRejection)] = []
        guard wanted.contains(where: { if case .rejected? = results[$0.id] { true } else { false } }) else { return [] }
        let known: [String: GIFState]
        do { known = try state.gifs(resolution: manifest.source.resolution ?? 0) } catch {
            throw StateUnreadable(step: .lookingUpLastKnownGood, path: state.path, error: String(describing: error))
        }
        for exercise in wanted {
            guard case .rejected(let rejection)? = results[exercise.id],
                  let metadata = known[exercise.id]?.metadata, store.contains(sha256: metadata.sha256) else { continue }
            covered.append((StoredGIF(exerciseID: exercise.id, reusing: metadata, origin: .lastKnownGood, requestedResolution: nil),
                            rejection))
        }
        return covered
    }

    private func summarise(_ results: FetchResults, wanted: ExerciseList, into report: inout BuildReport) {
        for exercise in wanted {
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
                if gif.resolutionMismatch, let requested = manifest.source.resolution {
                    report.gifs.resolutionMismatches += 1
                    guard report.resolutionMismatches.count < options.reportListLimit else { break }
                    report.resolutionMismatches.append(.init(exerciseID: gif.exerciseID, requested: requested,
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

/// The catalog's retries, counted from its attempt events (which arrive from the pager's tasks).
private final class CatalogRetryCount: Sendable {
    let value = Mutex(0)
}

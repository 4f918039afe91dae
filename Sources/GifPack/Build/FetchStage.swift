import Foundation
import GifPackHTTP

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

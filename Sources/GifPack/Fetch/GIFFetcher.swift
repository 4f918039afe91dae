import Foundation
import GifPackHTTP
import Synchronization

/// What the fetch stage produced.
struct FetchOutcome: Sendable {
    var results: FetchResults
    var stop: StopReason?
    var retries: Int
    var rateLimited: Int
    var quotaRemaining: Int?
    /// Exercises a stopped build never sent a request for, by id.
    var notAttempted: [String] = []
    /// When the GIFs not asked for because of `refresh_after` were fetched: the earliest and the latest.
    var freshFetchedAt: ClosedRange<Date>? = nil
}

/// The earliest and latest fetch times of the GIFs a fetch reuses as fresh (planned a batch at a time).
final class FreshFetchTimes: Sendable {
    private let range = Mutex<ClosedRange<Date>?>(nil)

    func note(_ date: Date) {
        range.withLock { range in
            range = range.map { min($0.lowerBound, date)...max($0.upperBound, date) } ?? date...date
        }
    }

    var value: ClosedRange<Date>? { range.withLock { $0 } }
}

/// Downloads the GIFs of a list of exercises with at most `concurrency` requests in flight,
/// retries included.
///
/// The window is a `TaskGroup` that never holds more than the governor's current window of
/// download tasks: it starts that many, and each time one finishes it hands the file to the
/// ``GIFProcessor`` and starts the next — a sliding window, not one task per exercise parked on a
/// semaphore. A retry goes back into the queue with a `notBefore` time (backoff or `Retry-After`);
/// a timer task in the same group wakes the loop when it is due. Child tasks only await curl (which
/// runs on its own thread); decoding and storing happen on the processor's queue.
///
/// While the window is whole, ``lookahead`` more requests wait in the HTTP client's own queue
/// behind the ones in flight, so a finished transfer's slot is refilled on the client's loop thread
/// at once rather than after the task hops back here (about 0.6 ms a request, a quarter of a
/// slot-second per hundred requests). The client never runs more than the window's cap, and each
/// request passes the governor's admission check (window, cool-down, budget) only when it reaches
/// curl: one turned away comes back as ``AttemptResult/notSent(_:)`` and waits its turn again.
///
/// ```swift
/// let outcome = await fetcher.fetch(catalog.exercises)
/// ```
struct GIFFetcher: Sendable {
    let attempt: FetchAttempt
    let processor: GIFProcessor
    let planner: FetchPlanner
    let state: BuildState?
    let governor: FetchGovernor
    let retry: RetryPolicy
    let resolution: Resolution
    let observer: BuildObserver?
    /// The files downloads are written to (shared by the attempts and the processor).
    let downloads: DownloadFiles
    let freshTimes = FreshFetchTimes()
    /// The exercises the early fetch settled while the list arrived (``EarlyFetch``): passed over here.
    let early = EarlySettled()

    /// Fetches at `resolution` (one of `source.resolutions`; the exercises handed to ``fetch(_:)``
    /// carry its image URLs).
    init(
        client: HTTPClient, source: SourceSettings, resolution: Resolution, settings: FetchSettings, layout: CacheLayout,
        frames: FrameCache, state: BuildState?, governor: FetchGovernor, placeholders: PlaceholderCache? = nil,
        webp: WebPCache? = nil, observer: BuildObserver? = nil
    ) {
        self.observer = observer
        let limits = GIFLimits(
            maxWidth: settings.maxWidth, maxHeight: settings.maxHeight,
            maxFrames: settings.maxFrames, maxTotalPixels: settings.maxTotalPixels)
        let store = BlobStore(layout: layout)
        self.resolution = resolution
        downloads = DownloadFiles(layout: layout)
        attempt = FetchAttempt(client: client, source: source, settings: settings, downloads: downloads, governor: governor)
        processor = GIFProcessor(
            store: store, downloads: downloads, frames: frames, limits: limits, resolution: resolution,
            state: state, placeholders: placeholders, webp: webp, observer: observer,
            onDiskFull: { [governor] path in governor.stop(.diskFull(path: path)) })
        planner = FetchPlanner(settings: settings, store: store, now: Date())
        self.state = state
        self.governor = governor
        self.retry = settings.retry
    }

    private enum Event: Sendable {
        case finished(AttemptResult, elapsed: Duration)
        case timer
        /// The work changed from outside (``FetchWork/changed(after:)``).
        case changed
    }

    /// Requests queued in the HTTP client behind the ones in flight while the window is at its cap.
    static let lookahead = 2

    /// Exercises planned at a time: what the state knows of them is read in one query, and only
    /// their work items wait in memory.
    static let planBatch = 512

    /// Throws ``StateUnreadable`` before sending any request when the state cannot be read: without
    /// it every GIF would be requested in full (no conditional requests, nothing fresh), spending
    /// quota for nothing.
    ///
    /// Every exercise is decided once, in batches of ``planBatch`` (the state read a batch at a
    /// time), before the first request: fresh and known-missing ones are recorded there and then,
    /// and those to request are remembered by position, one bit each. The window then plans only
    /// those, a batch at a time as it needs more work (their state read again, for the validators
    /// of a conditional request), so memory does not grow with the catalog and a build where
    /// nothing is due reads the state once.
    ///
    /// With `early` (this fetcher's ``EarlyFetch``), the list is whole and checked: the early fetch
    /// is released (what it holds is sent without its allowance, and the plan passes over it) and
    /// keeps its window while this plan is made, then sends the plan in the same window, so the
    /// requests in flight at the hand-over and the plan's share one count of slots.
    func fetch(_ exercises: ExerciseList, handingOverFrom early: EarlyFetch? = nil) async throws(StateUnreadable) -> FetchOutcome {
        early?.feed.release(settling: self.early)
        processor.reserveResults(exercises.count)
        observer?(.fetchStarted(total: exercises.count))
        // What the early fetch settled is told now, after the count starts.
        processor.releaseNotifications()
        var queue: FetchQueue
        do throws(StateUnreadable) {
            let due = try await settle(exercises)
            // With the requests the early fetch sent or holds (those it planned fresh or missing are not asked for).
            observer?(.fetchPlanned(total: exercises.count, toRequest: due.count + (early == nil ? 0 : self.early.toRequest)))
            queue = FetchQueue(exercises: exercises, due: due)
            try await queue.refill(self)
        } catch {
            await early?.finish()
            throw error
        }
        let notAttempted: [String]
        if let early {
            var (work, planFailure) = await early.takeOver(queue)
            if let planFailure { throw planFailure }
            notAttempted = try await recordUnsent(&work)
        } else {
            let planFailure: StateUnreadable?
            (queue, planFailure) = await send(queue)
            if let planFailure { throw planFailure }
            notAttempted = try await recordUnsent(&queue)
        }
        let results = await processor.drain()
        downloads.removeSpares()
        return FetchOutcome(
            results: results, stop: governor.stopReason, retries: governor.retries,
            rateLimited: governor.rateLimited, quotaRemaining: governor.quotaRemaining,
            notAttempted: notAttempted, freshFetchedAt: freshTimes.value)
    }

    /// The sliding window: sends `queue`'s work until it is done, the governor stops the build or
    /// the state cannot be read to plan more (the requests in flight finish first). Returns what is
    /// left of the queue, and that failure.
    func send<Work: FetchWork>(_ queue: Work) async -> (Work, StateUnreadable?) {
        await withTaskGroup(of: Event.self, returning: (Work, StateUnreadable?).self) { group in
            var queue = queue
            var planFailure: StateUnreadable?
            var running = 0
            var (timerPending, watching) = (false, false)
            // Nothing more is sent once the governor stopped the build, the state could not be read
            // or the caller cancelled (then the requests in flight end cancelled, and the pipeline
            // writes no index: ``BuildFailure/cancelled``).
            func halted() -> Bool { governor.stopReason != nil || planFailure != nil || Task.isCancelled }
            while true {
                // Work that changes from outside (the early fetch's feed) is watched from before it is read.
                let version = queue.changeVersion
                // Back-pressure: never run further ahead of validation and storage than a couple of
                // GIFs, so a crash loses little besides the requests in flight.
                await processor.waitForBacklog()
                // Fill the window with items that are due: retries first, then the plan in id order.
                // The budget is claimed at admission, when a request reaches curl.
                filling: while !halted(), running < queue.limit(window: governor.window, cap: governor.cap) {
                    let item: FetchWorkItem
                    do throws(StateUnreadable) {
                        guard let next = try await queue.next(self) else { break filling }
                        item = next
                    } catch {
                        // A state that became unreadable mid-run: nothing more is sent; the
                        // requests in flight finish and the build fails with the reason.
                        planFailure = error
                        break filling
                    }
                    running += 1
                    group.addTask {
                        let started = ContinuousClock.now
                        let (result, sentAt) = await attempt.run(item)
                        // Timed from when the request reached curl, not from its wait in the queue.
                        return .finished(result, elapsed: .now - (sentAt ?? started))
                    }
                }
                if running == 0 && (queue.exhausted || halted()) { break }
                if !timerPending, !halted(), running < governor.window, let due = queue.nextRetry, due > .now {
                    timerPending = true
                    group.addTask {
                        try? await Task.sleep(until: due, clock: .continuous)
                        return .timer
                    }
                }
                if !watching, !halted(), let version, !queue.exhausted {
                    watching = true
                    group.addTask { [queue] in
                        await queue.changed(after: version)
                        return .changed
                    }
                }
                guard let event = await group.next() else { break }
                switch event {
                case .timer: timerPending = false
                case .changed: watching = false
                case .finished(.notSent(let item), _):
                    // Turned away at admission: next in line again (a stop records it as not attempted).
                    running -= 1
                    queue.putBack(item)
                case .finished(let result, let elapsed):
                    running -= 1
                    let requeued = handle(result)
                    report(result, elapsed: elapsed, retryAt: requeued?.notBefore)
                    if let requeued { queue.retry(requeued) }
                }
            }
            group.cancelAll()
            return (queue, planFailure)
        }
    }

    /// After a stop: records what was never sent (retries waiting, this batch's requests, then the
    /// rest of the plan, whose fresh and known-missing exercises are recorded as usual while it is
    /// made) and returns the ids of those never attempted, sorted. Nothing when the build did not stop.
    private func recordUnsent<Work: FetchWork>(_ queue: inout Work) async throws(StateUnreadable) -> [String] {
        guard let reason = governor.stopReason else { return [] }
        var notAttempted: [String] = []
        for item in try await queue.unsent(self) {
            if let failure = item.lastFailure {
                processor.record(.rejected(failure), for: item.exercise.id)
            } else {
                // Not one event (one log line) per exercise: a budget stop can leave 100,000 of
                // them. They are counted and summarised once, in the report and its message.
                notAttempted.append(item.exercise.id)
                processor.record(
                    .rejected(
                        FetchRejection(
                            exerciseID: item.exercise.id, url: item.exercise.imageURL, reason: .notAttempted,
                            detail: "the build stopped before this GIF was fetched: \(reason)", status: nil)),
                    for: item.exercise.id, notify: false)
            }
        }
        return notAttempted.sorted()
    }

    /// The planner's decision for each exercise of a batch, in order, from what the state knows of
    /// them (one range query), made off the cooperative pool (the planner looks at the blob store).
    private func decide(_ batch: ArraySlice<Exercise>) async throws(StateUnreadable) -> [FetchPlanner.Decision] {
        let (state, resolution, planner) = (self.state, self.resolution, self.planner)
        return try await BlockingWork.run("gifpack.plan") { () throws(StateUnreadable) -> [FetchPlanner.Decision] in
            var known: [String: GIFState] = [:]
            if let state, let low = batch.lazy.map(\.id).min(), let high = batch.lazy.map(\.id).max() {
                do { known = try state.gifs(resolution: resolution.stateKey, from: low, through: high) } catch {
                    throw StateUnreadable(step: .planningFetches, path: state.path, error: String(describing: error))
                }
            }
            var stored: [String: Bool] = [:]  // many exercises share a GIF: one look at the store each
            return batch.map { planner.decide($0, known: known[$0.id], stored: &stored) }
        }
    }

    /// Decides every exercise, a batch at a time: fresh and known-missing ones are recorded (as
    /// ``plan(_:)`` does), and the positions of those to request are returned.
    private func settle(_ exercises: ExerciseList) async throws(StateUnreadable) -> PositionSet {
        var due = PositionSet(range: exercises.startIndex..<exercises.endIndex)
        var start = exercises.startIndex
        while start < exercises.endIndex {
            // A batch of fresh GIFs is one job for the processor: never more than a few wait, so a
            // build where nothing is due does not hold every exercise's state row at once.
            await processor.waitForBacklog()
            let batch: ArraySlice<Exercise>
            do { batch = try exercises[start..<min(start + Self.planBatch, exercises.endIndex)].array()[...] } catch { throw StateUnreadable(error) }
            for (offset, _) in try await planned(batch) { due.insert(start + offset) }
            start += batch.count
        }
        return due
    }

    /// Decides a batch: fresh and known-missing exercises are recorded at once; the work items of
    /// those to request are returned in the batch's order. `holding`: the batch is the early
    /// fetch's own (taken from its feed, so in ``early`` already), not passed over.
    func plan(_ batch: ArraySlice<Exercise>, holding: Bool = false) async throws(StateUnreadable) -> [FetchWorkItem] {
        try await planned(batch, holding: holding).map(\.item)
    }

    /// ``plan(_:holding:)``, with each work item's offset in the batch.
    /// The exercises the early fetch holds or settled are passed over: their results are in the processor.
    private func planned(_ batch: ArraySlice<Exercise>, holding: Bool = false) async throws(StateUnreadable) -> [(offset: Int, item: FetchWorkItem)] {
        var requests: [(offset: Int, item: FetchWorkItem)] = []
        var fresh: [(exercise: Exercise, known: GIFState)] = []
        defer { processor.reuse(fresh, origin: .fresh) }
        let offsets = holding || early.count == 0 ? Array(batch.indices) : batch.indices.filter { !early.contains(batch[$0].id) }
        let open = offsets.map { batch[$0] }[...]
        for (offset, (exercise, decision)) in zip(offsets.map { $0 - batch.startIndex }, zip(open, try await decide(open))) {
            switch decision {
            case .reuseFresh(let gif):
                fresh.append((exercise, gif))
                if let fetchedAt = gif.fetchedAt { freshTimes.note(fetchedAt) }
            case .knownMissing(let gif):
                processor.record(
                    .rejected(
                        FetchRejection(
                            exerciseID: exercise.id, url: exercise.imageURL, reason: .knownMissing,
                            detail: "HTTP 404 at the last try (\(gif.lastError ?? "missing")); not asked again until missing_ttl passes",
                            status: 404)), for: exercise.id)
            case .request(let conditional): requests.append((offset, FetchWorkItem(exercise: exercise, conditional: conditional)))
            }
        }
        return requests
    }

    private func report(_ result: AttemptResult, elapsed: Duration, retryAt: ContinuousClock.Instant?) {
        guard let observer else { return }
        let event: AttemptEvent
        switch result {
        case .downloaded(let item, let download, _):
            event = AttemptEvent(
                exerciseID: item.exercise.id, url: item.exercise.imageURL, attempt: item.attempt, status: 200,
                elapsed: elapsed, outcome: .downloaded, reason: nil, bytes: download.bytesWritten, retryIn: nil)
        case .notModified(let item, _):
            event = AttemptEvent(
                exerciseID: item.exercise.id, url: item.exercise.imageURL, attempt: item.attempt, status: 304,
                elapsed: elapsed, outcome: .notModified, reason: nil, bytes: 0, retryIn: nil)
        case .retry(let item, let failure, _):
            event = AttemptEvent(
                exerciseID: item.exercise.id, url: item.exercise.imageURL, attempt: item.attempt,
                status: failure.status, elapsed: elapsed, outcome: retryAt == nil ? .failed : .retry,
                reason: failure.reason, bytes: 0, retryIn: retryAt.map { $0 - .now })
        case .notSent: return
        case .failed(let item, let failure, _):
            event = AttemptEvent(
                exerciseID: item.exercise.id, url: item.exercise.imageURL, attempt: item.attempt,
                status: failure.status, elapsed: elapsed, outcome: .failed, reason: failure.reason,
                bytes: 0, retryIn: nil)
        }
        observer(.attempt(event))
    }

    /// Acts on one finished attempt; returns the item to try again, if any.
    private func handle(_ result: AttemptResult) -> FetchWorkItem? {
        switch result {
        // The circuit breaker heard each of these on the HTTP client's thread (FetchAttempt.noteAnswer).
        case .downloaded(let item, let download, let path):
            processor.submit(exercise: item.exercise, download: download, path: path)
        case .notModified(let item, let known):
            processor.reuse(exercise: item.exercise, known: known, origin: .notModified)
        case .retry(var item, let failure, let wait):
            if item.attempt < retry.maxAttempts, governor.stopReason == nil {
                governor.noteRetry()
                item.attempt += 1
                item.lastFailure = failure
                item.notBefore = .now + max(wait ?? .zero, retry.delay(beforeAttempt: item.attempt))
                return item
            }
            var final = failure
            if item.attempt > 1 { final.detail += " (after \(item.attempt) attempts)" }
            processor.recordFailure(final, missing: false)
        case .notSent(let item):
            return item
        case .failed(let item, let failure, let missing):
            _ = item
            processor.recordFailure(failure, missing: missing)
        }
        return nil
    }
}

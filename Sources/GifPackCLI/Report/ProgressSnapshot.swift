import Foundation
import GifPack

/// Where a running build stands at one moment: the numbers a progress line shows.
///
/// A value built by ``ProgressTracker/snapshot(at:)`` from the ``BuildEvent``s seen so far. The
/// rate and the ETA are derived: the rate is bytes downloaded over the time since the fetch
/// started; the ETA divides the GIFs still to come by the pace of those that needed a request
/// (GIFs skipped as fresh or known missing finish at once and would make the pace look better
/// than it is).
///
/// ```swift
/// let snapshot = ProgressSnapshot(stage: .fetch, total: 200, done: 50, toRequest: 200, requestedDone: 50,
///                                 bytesDownloaded: 1_000_000, fetchSeconds: 10)
/// snapshot.etaSeconds     // 30: 150 to go at 5 per second
/// ```
struct ProgressSnapshot: Sendable, Equatable {
    /// The stage running now; nil before the first and after the last.
    var stage: BuildStage?
    /// With several resolutions: the one being fetched, e.g. `360 px (2/2)`.
    var rendition: String?
    /// GIFs wanted, once the fetch is planned.
    var total: Int?
    /// GIFs with a final result (stored, reused, or refused).
    var done: Int
    /// GIFs the plan sends a request for (the rest are fresh or known missing).
    var toRequest: Int
    /// Of `done`, those that needed a request.
    var requestedDone: Int
    var bytesDownloaded: Int64
    /// Attempts that will be tried again.
    var retries: Int
    /// GIFs refused in this run (known-missing ones excluded: they were not asked for).
    var failures: Int
    var packsDone: Int
    /// Seconds since the fetch was planned; 0 before.
    var fetchSeconds: Double
    /// Seconds since the current stage started.
    var stageSeconds: Double

    init(
        stage: BuildStage? = nil, total: Int? = nil, done: Int = 0, toRequest: Int = 0, requestedDone: Int = 0,
        bytesDownloaded: Int64 = 0, retries: Int = 0, failures: Int = 0, packsDone: Int = 0,
        fetchSeconds: Double = 0, stageSeconds: Double = 0
    ) {
        self.stage = stage
        self.total = total
        self.done = done
        self.toRequest = toRequest
        self.requestedDone = requestedDone
        self.bytesDownloaded = bytesDownloaded
        self.retries = retries
        self.failures = failures
        self.packsDone = packsDone
        self.fetchSeconds = fetchSeconds
        self.stageSeconds = stageSeconds
    }

    /// `done / total`, between 0 and 1; nil until the total is known (or when nothing is wanted).
    var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(done) / Double(total))
    }

    /// Whole percent done, rounded down (so 100 means really done).
    var percent: Int? { fraction.map { Int(($0 * 100).rounded(.down)) } }

    /// Bytes per second since the fetch started; nil in its first half second.
    var bytesPerSecond: Double? {
        guard fetchSeconds >= 0.5 else { return nil }
        return Double(bytesDownloaded) / fetchSeconds
    }

    /// Seconds until every wanted GIF is done at the pace so far; nil until a requested GIF finished.
    var etaSeconds: Double? {
        guard let total, requestedDone > 0, fetchSeconds > 0 else { return nil }
        let remaining = max(0, total - done)
        return Double(remaining) * fetchSeconds / Double(requestedDone)
    }
}

import Foundation
import GifPack
import Synchronization

/// Folds ``BuildEvent``s into the counters a progress line shows. Thread-safe: the pipeline calls
/// ``observe(_:)`` from the fetch loop and the processing workers, a renderer reads
/// ``snapshot(at:)`` from its own thread.
///
/// ```swift
/// let tracker = ProgressTracker()
/// let pipeline = BuildPipeline(manifest: manifest, options: options) { tracker.observe($0) }
/// // elsewhere, ten times a second:
/// let line = ProgressLine.live(tracker.snapshot(), width: 80, color: false)
/// ```
final class ProgressTracker: Sendable {
    private struct State {
        var snapshot = ProgressSnapshot()
        var fetchStarted: ContinuousClock.Instant?
        /// When the fetch ended (a later stage began, or the build stopped): the rate freezes there.
        var fetchEnded: ContinuousClock.Instant?
        var stageStarted: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    init() {}

    func observe(_ event: BuildEvent, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            switch event {
            case .stageStarted(let stage):
                if state.snapshot.stage == .fetch, state.fetchEnded == nil { state.fetchEnded = now }
                state.snapshot.stage = stage
                state.stageStarted = now
            case .fetchStarted(let total):
                // Each fetch reports each of its exercises once: a second fetch (the exercises of a
                // damaged cached GIF, downloaded again) counts from zero, so no set of every id
                // finished is kept (at 100,000 exercises it was megabytes).
                state.snapshot.total = total
                state.snapshot.toRequest = 0
                state.snapshot.done = 0
                state.snapshot.requestedDone = 0
                state.fetchStarted = now
            case .renditionStarted(let resolution, let position, let count):
                state.snapshot.rendition = "\(resolution) px (\(position)/\(count))"
            case .fetchPlanned(let total, let toRequest):
                // After the fresh and known-missing exercises, which already count as done.
                state.snapshot.total = total
                state.snapshot.toRequest = toRequest
                if state.fetchStarted == nil { state.fetchStarted = now }
            case .attempt(let attempt):
                if attempt.outcome == .downloaded { state.snapshot.bytesDownloaded += attempt.bytes }
                if attempt.outcome == .retry { state.snapshot.retries += 1 }
            case .gifFinished(_, let result):
                guard state.snapshot.total.map({ state.snapshot.done < $0 }) ?? true else { return }
                state.snapshot.done += 1
                switch result {
                case .stored(let gif) where gif.origin == .fresh: break
                case .stored: state.snapshot.requestedDone += 1
                case .rejected(let rejection) where rejection.reason == .knownMissing: break
                case .rejected:
                    state.snapshot.requestedDone += 1
                    state.snapshot.failures += 1
                }
            case .packFinished:
                state.snapshot.packsDone += 1
            case .stopped:
                if state.fetchEnded == nil { state.fetchEnded = now }
            case .finished:
                if state.fetchEnded == nil { state.fetchEnded = now }
                state.snapshot.stage = nil
            case .catalogAttempt(let attempt):
                if attempt.outcome == .retry { state.snapshot.retries += 1 }
            case .catalogFetched:
                break
            }
        }
    }

    func snapshot(at now: ContinuousClock.Instant = .now) -> ProgressSnapshot {
        state.withLock { state in
            var snapshot = state.snapshot
            snapshot.fetchSeconds = state.fetchStarted.map { (min(now, state.fetchEnded ?? now) - $0).secondsValue } ?? 0
            snapshot.stageSeconds = state.stageStarted.map { (now - $0).secondsValue } ?? 0
            return snapshot
        }
    }
}

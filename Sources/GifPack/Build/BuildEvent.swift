import Foundation

/// What a running build reports as it goes, for progress lines, logs and metrics.
///
/// Events arrive from several threads (the fetch loop, the processing queue); an observer must be
/// thread-safe and quick. URLs never carry the API key (it travels in a header).
///
/// ```swift
/// let pipeline = BuildPipeline(manifest: manifest, options: options) { event in
///     if case .gifFinished(let id, _) = event { print("done", id) }
/// }
/// ```
package enum BuildEvent: Sendable {
    case stageStarted(BuildStage)
    case catalogFetched(exercises: Int, pages: Int)
    /// A fetch of `total` exercises' GIFs begins (a build has a second one when a damaged cached
    /// GIF's exercises are downloaded again): fresh and known-missing ones finish first, then
    /// ``fetchPlanned(total:toRequest:)`` says how many need a request.
    case fetchStarted(total: Int)
    /// With several resolutions: the fetch of the `position`th (from 1) of `count` begins, at
    /// `resolution` pixels; its ``fetchStarted(total:)`` follows.
    case renditionStarted(resolution: Int, position: Int, count: Int)
    /// `total` GIFs are wanted; `toRequest` of them need a request (the rest are fresh or known missing).
    case fetchPlanned(total: Int, toRequest: Int)
    case attempt(AttemptEvent)
    /// One request for a page of the catalog (logged like ``attempt(_:)``; its retries count in the report).
    case catalogAttempt(CatalogAttemptEvent)
    /// The final result for one exercise in this run.
    case gifFinished(exerciseID: String, result: GIFFetchResult)
    case packFinished(BuildReport.PackResult)
    case stopped(StopReason)
    case finished(BuildReport)
}

/// The stages of a build, in order.
package enum BuildStage: String, Sendable, CaseIterable, Codable {
    case catalog, plan, fetch, pack, index, prune
}

/// One HTTP attempt for one exercise's GIF.
package struct AttemptEvent: Sendable, Equatable {
    /// How the attempt ended.
    package enum Outcome: String, Sendable, Equatable {
        case downloaded, notModified = "not-modified", retry, failed
    }

    package var exerciseID: String
    package var url: String
    package var attempt: Int
    package var status: Int?
    package var elapsed: Duration
    package var outcome: Outcome
    /// The rejection reason for `retry` and `failed`.
    package var reason: RejectionReason?
    package var bytes: Int64
    /// For `retry`: how long until the next attempt.
    package var retryIn: Duration?
}

/// One HTTP attempt for a page of the catalog.
package struct CatalogAttemptEvent: Sendable, Equatable {
    package enum Outcome: String, Sendable, Equatable {
        case received, retry, failed
    }

    package var url: String
    package var attempt: Int
    package var elapsed: Duration
    package var outcome: Outcome
    /// Why a `retry` or `failed` attempt did not give a page.
    package var reason: String?
    /// For `retry`: how long until the next attempt.
    package var retryIn: Duration?
}

/// Receives ``BuildEvent``s.
package typealias BuildObserver = @Sendable (BuildEvent) -> Void

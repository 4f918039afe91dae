import Foundation
import GifPack

/// What a ``BuildEvent`` says in the log: a severity, a short human message and typed fields.
///
/// The library emits events and knows nothing of logging back ends; the command line turns these
/// entries into swift-log records. Every entry has an `event` field (`stage`, `catalog`, `plan`,
/// `attempt`, `gif`, `pack`, `stopped`, `finished`), so JSON logs can be filtered by it. Each
/// attempt carries `exercise_id`, `url`, `attempt`, `status` (absent when no response came),
/// `duration_ms`, `outcome` (`downloaded`, `not-modified`, `retry`, `failed`), and for failures
/// `reason` and `retry_in_ms`.
///
/// Levels: successful attempts and stored GIFs are `debug`/`trace` (shown with `--verbose`),
/// stages, retries and final summaries `info`/`notice`, refused GIFs `warning`, a stopped build
/// `error`.
///
/// ```swift
/// if let entry = BuildEventLog.entry(for: event) {
///     logger.log(level: Logger.Level(rawValue: entry.level.rawValue)!, "\(entry.message)", metadata: …)
/// }
/// ```
enum BuildEventLog {
    /// One log entry, without its timestamp and label (the logger adds those).
    struct Entry: Sendable, Equatable {
        var level: LogSeverity
        var message: String
        var fields: [String: LogField]
    }

    /// The level of ``entry(for:)``'s entry for `event`, without making it: per-GIF and per-request
    /// events are most of a build's, and a logger that drops their level need not build their text.
    static func level(for event: BuildEvent) -> LogSeverity? {
        switch event {
        case .gifFinished(_, let result): gifLevel(result)
        case .attempt(let attempt): attemptLevel(attempt.outcome)
        case .catalogAttempt(let attempt): attempt.outcome == .received ? .debug : .info
        default: entry(for: event)?.level
        }
    }

    /// Successes only with --verbose; retries and failures at info.
    private static func attemptLevel(_ outcome: AttemptEvent.Outcome) -> LogSeverity {
        switch outcome {
        case .downloaded, .notModified: .debug
        case .retry, .failed: .info
        }
    }

    private static func gifLevel(_ result: GIFFetchResult) -> LogSeverity {
        switch result {
        case .stored: .trace
        case .rejected(let rejection): rejection.reason == .knownMissing ? .info : .warning
        }
    }

    static func entry(for event: BuildEvent) -> Entry? {
        switch event {
        case .stageStarted(let stage):
            return Entry(
                level: .info, message: "stage \(stage.rawValue) started",
                fields: ["event": .string("stage"), "stage": .string(stage.rawValue)])
        case .catalogFetched(let exercises, let pages):
            return Entry(
                level: .info, message: "catalog: \(exercises) exercises in \(pages) page(s)",
                fields: ["event": .string("catalog"), "exercises": .int(Int64(exercises)), "pages": .int(Int64(pages))])
        case .fetchStarted:
            return nil  // the plan's line says it all, once the plan is made
        case .renditionStarted(let resolution, let position, let count):
            return Entry(
                level: .info, message: "fetch: \(resolution) px, resolution \(position) of \(count)",
                fields: [
                    "event": .string("rendition"), "resolution": .int(Int64(resolution)),
                    "position": .int(Int64(position)), "count": .int(Int64(count))
                ])
        case .fetchPlanned(let total, let toRequest):
            return Entry(
                level: .info, message: "fetch: \(total) GIFs wanted, \(toRequest) to request, \(total - toRequest) not asked for (fresh or known missing)",
                fields: ["event": .string("plan"), "total": .int(Int64(total)), "to_request": .int(Int64(toRequest))])
        case .attempt(let attempt):
            return attemptEntry(attempt)
        case .catalogAttempt(let attempt):
            var fields: [String: LogField] = [
                "event": .string("catalog-attempt"), "url": .string(attempt.url), "attempt": .int(Int64(attempt.attempt)),
                "outcome": .string(attempt.outcome.rawValue), "duration_ms": .double(milliseconds(attempt.elapsed))
            ]
            if let reason = attempt.reason { fields["reason"] = .string(reason) }
            if let wait = attempt.retryIn { fields["retry_in_ms"] = .double(max(0, milliseconds(wait))) }
            let message =
                switch attempt.outcome {
                case .received: "GET catalog page: received"
                case .retry: "GET catalog page: \(attempt.reason ?? "failed"), trying again"
                case .failed: "GET catalog page: \(attempt.reason ?? "failed"), giving up"
                }
            return Entry(level: attempt.outcome == .received ? .debug : .info, message: message, fields: fields)
        case .gifFinished(let id, let result):
            return gifEntry(id: id, result: result)
        case .packFinished(let pack):
            return Entry(
                level: .notice, message: "pack \(pack.name) v\(pack.version) \(pack.outcome): \(pack.exercises) exercises, \(pack.distinctGIFs) GIFs, \(HumanUnits.bytes(pack.bytes))",
                fields: [
                    "event": .string("pack"), "pack": .string(pack.name), "version": .int(Int64(pack.version)),
                    "outcome": .string(pack.outcome), "bytes": .int(pack.bytes), "file": .string(pack.file),
                    "exercises": .int(Int64(pack.exercises)), "gifs": .int(Int64(pack.distinctGIFs))
                ])
        case .stopped(let reason):
            return Entry(
                level: .error, message: "build stopped: \(reason)",
                fields: ["event": .string("stopped"), "exit_status": .int(Int64(reason.exitStatus.rawValue))])
        case .finished(let report):
            let level: LogSeverity =
                switch report.exitStatus {
                case .success: .notice
                case .partial: .warning
                default: .error
                }
            return Entry(
                level: level, message: "build finished: \(report.message)",
                fields: [
                    "event": .string("finished"), "exit_status": .int(Int64(report.exitStatus.rawValue)),
                    "duration_ms": .double(((report.totalSeconds ?? 0) * 1_000_000).rounded() / 1000),
                    "requests": .int(Int64(report.http.requests)), "downloaded": .int(Int64(report.gifs.downloaded)),
                    "missing": .int(Int64(report.gifs.missing))
                ])
        }
    }

    private static func attemptEntry(_ attempt: AttemptEvent) -> Entry {
        var fields: [String: LogField] = [
            "event": .string("attempt"), "exercise_id": .string(attempt.exerciseID), "url": .string(attempt.url),
            "attempt": .int(Int64(attempt.attempt)), "outcome": .string(attempt.outcome.rawValue),
            "duration_ms": .double(milliseconds(attempt.elapsed)), "bytes": .int(attempt.bytes)
        ]
        if let status = attempt.status { fields["status"] = .int(Int64(status)) }
        if let reason = attempt.reason { fields["reason"] = .string(reason.code) }
        if let wait = attempt.retryIn { fields["retry_in_ms"] = .double(max(0, milliseconds(wait))) }
        let message =
            switch attempt.outcome {
            case .downloaded, .notModified: "GET \(attempt.exerciseID): \(attempt.outcome.rawValue)"
            case .retry: "GET \(attempt.exerciseID): \(attempt.reason?.code ?? "failed"), trying again"
            case .failed: "GET \(attempt.exerciseID): \(attempt.reason?.code ?? "failed"), giving up"
            }
        return Entry(level: attemptLevel(attempt.outcome), message: message, fields: fields)
    }

    private static func gifEntry(id: String, result: GIFFetchResult) -> Entry {
        switch result {
        case .stored(let gif):
            return Entry(
                level: gifLevel(result), message: "GIF \(id) stored (\(gif.origin.rawValue))",
                fields: [
                    "event": .string("gif"), "exercise_id": .string(id), "outcome": .string(gif.origin.rawValue),
                    "sha256": .string(gif.sha256), "bytes": .int(gif.bytes)
                ])
        case .rejected(let rejection):
            var fields: [String: LogField] = [
                "event": .string("gif"), "exercise_id": .string(id), "outcome": .string("rejected"),
                "reason": .string(rejection.reason.code), "url": .string(rejection.url)
            ]
            if let status = rejection.status { fields["status"] = .int(Int64(status)) }
            return Entry(
                level: gifLevel(result), message: "GIF \(id) refused: \(rejection.reason) — \(rejection.detail)",
                fields: fields)
        }
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        (duration.secondsValue * 1_000_000).rounded() / 1000
    }
}

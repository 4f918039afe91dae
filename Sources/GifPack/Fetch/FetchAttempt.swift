import Foundation
import GifPackHTTP
import Synchronization

/// One exercise waiting to be fetched, and how many times it was tried.
struct FetchWorkItem: Sendable {
    var exercise: Exercise
    var conditional: GIFState?
    var attempt: Int = 1
    var notBefore: ContinuousClock.Instant = .now
    var lastFailure: FetchRejection?
}

/// What one attempt ended in, as the scheduler sees it.
enum AttemptResult: Sendable {
    /// A 200 that passed the cheap checks: hand the file to the processor.
    case downloaded(FetchWorkItem, HTTPDownload, path: String)
    /// A 304 for a conditional request: the stored blob is current.
    case notModified(FetchWorkItem, GIFState)
    /// Worth another attempt, after `wait` if the server said so.
    case retry(FetchWorkItem, FetchRejection, wait: Duration?)
    /// Final for this run; `missing` marks a 404.
    case failed(FetchWorkItem, FetchRejection, missing: Bool)
    /// Turned away at its turn by the governor (``FetchGovernor/admit(inFlight:now:)``): nothing
    /// was sent, and the attempt does not count.
    case notSent(FetchWorkItem)
}

/// Sends one request for one exercise and classifies the answer: retryable (connection errors,
/// resets, timeouts, truncated bodies, 408/429/5xx, a 200 with an HTML page or non-GIF body) or
/// final (other 4xx, too large). 401/403 and the monthly-quota 429 also stop the whole build.
struct FetchAttempt: Sendable {
    let client: HTTPClient
    let source: SourceSettings
    let settings: FetchSettings
    /// The files downloads are written to; one not kept is handed back.
    let downloads: DownloadFiles
    let governor: FetchGovernor

    /// Sends the request once the governor admits it; returns the answer and when the request
    /// was admitted (nil if it never was).
    func run(_ item: FetchWorkItem) async -> (AttemptResult, sentAt: ContinuousClock.Instant?) {
        let sent = AdmissionInstant()
        let result = await run(item, noting: sent)
        return (result, sent.instant)
    }

    private func run(_ item: FetchWorkItem, noting sent: AdmissionInstant) async -> AttemptResult {
        let url = item.exercise.imageURL
        func rejection(_ reason: RejectionReason, _ detail: String, _ status: Int?) -> FetchRejection {
            FetchRejection(exerciseID: item.exercise.id, url: url, reason: reason, detail: detail, status: status)
        }
        do { try await governor.waitForCoolDown() } catch {
            // Cancelled while a 429's cool-down lasts: ends as a cancelled transfer would, unsent.
            return .failed(
                item,
                rejection(
                    .cancelled, "the build was cancelled while this request waited out a rate limit's cool-down",
                    nil), missing: false)
        }
        let path = downloads.take()
        // What the answer means for the requests behind it (quota, key, rate limit, the circuit
        // breaker) was told to the governor on the HTTP client's thread as the transfer ended:
        // see `noteAnswer`. Here it is only judged again, the same way, for this exercise.
        let answer: HTTPAnswer, download: HTTPDownload?
        do {
            let body = try await client.download(request(for: item, noting: sent), to: path, maxBytes: settings.maxGIFBytes)
            (answer, download) = (.response(body.head, bodyPrefix: body.prefix, bodyBytes: body.bytesWritten), body)
        } catch {
            if case .notAdmitted = error { downloads.giveBack(path); return .notSent(item) }
            if case .fileError(let file, let code) = error, FetchGovernor.isDiskFull(code) {
                // The first full-disk error stops the build: later downloads would only be dropped.
                governor.stop(.diskFull(path: file))
            }
            (answer, download) = (.failed(error), nil)
        }
        switch Self.judge(answer, conditional: item.conditional != nil, source: source, settings: settings) {
        case .downloaded:
            return .downloaded(item, download!, path: path)
        case .notModified:
            downloads.giveBack(path)
            return .notModified(item, item.conditional!)
        case .retry(let reason, let detail, let status, let wait):
            downloads.giveBack(path)
            return .retry(item, rejection(reason, detail, status), wait: wait)
        case .failed(let reason, let detail, let status, let missing):
            downloads.giveBack(path)
            return .failed(item, rejection(reason, detail, status), missing: missing)
        }
    }

    /// What an answer is worth, judged alike by the attempt's task and, for the circuit breaker,
    /// on the HTTP client's thread as the transfer ends.
    enum Judgement: Equatable {
        /// A 200 that passed the cheap checks.
        case downloaded
        /// A 304 to a conditional request.
        case notModified
        /// Worth another attempt (after `wait` if the server said so); counts towards the circuit breaker.
        case retry(RejectionReason, String, status: Int?, wait: Duration?)
        /// Final for this run; `missing` marks a 404.
        case failed(RejectionReason, String, status: Int?, missing: Bool)

        /// What the circuit breaker and the window's growth make of it: true a success, false a
        /// failure, nil neither (a final 4xx, a redirect hop).
        var breakerOutcome: Bool? {
            switch self {
            case .downloaded, .notModified: true
            case .retry: false
            case .failed: nil
            }
        }
    }

    /// Judges one transfer's end: retryable (connection errors, resets, timeouts, truncated bodies,
    /// 408/429/5xx, a 200 with an HTML page or non-GIF body) or final (other 4xx, too large).
    static func judge(_ answer: HTTPAnswer, conditional: Bool, source: SourceSettings, settings: FetchSettings) -> Judgement {
        let head: HTTPResponseHead, prefix: [UInt8], bytes: Int64
        switch answer {
        case .failed(let error):
            if case .bodyTooLarge = error {
                return .failed(.tooLarge, "the body exceeds max_gif_bytes (\(settings.maxGIFBytes) bytes)", status: nil, missing: false)
            }
            let reason = RejectionReason(error)
            return reason.isRetryable
                ? .retry(reason, String(describing: error), status: nil, wait: nil)
                : .failed(reason, String(describing: error), status: nil, missing: false)
        case .response(let answered, let bodyPrefix, let bodyBytes):
            (head, prefix, bytes) = (answered, bodyPrefix, bodyBytes)
        }
        let status = head.status
        switch status {
        case 200:
            if let problem = ResponseChecks.problem(head: head, prefix: prefix, bytesWritten: bytes) {
                return problem.reason.isRetryable
                    ? .retry(problem.reason, problem.detail, status: status, wait: nil)
                    : .failed(problem.reason, problem.detail, status: status, missing: false)
            }
            return .downloaded
        case 304 where conditional:
            return .notModified
        case 401, 403:
            let variable = source.apiKeyEnvironmentVariable.map { " (check the key in \($0))" } ?? ""
            return .failed(.httpStatus(status), "the API rejected the key\(variable)", status: status, missing: false)
        case 429 where ResponseChecks.isMonthlyQuotaBody(prefix):
            return .failed(.quotaExhausted, "the monthly quota is used up", status: status, missing: false)
        case 429, 503:
            let wait = settings.retry.retryAfter(head.headers["retry-after"])
            return .retry(
                .httpStatus(status),
                "the server answered HTTP \(status)"
                    + (wait.map { " (Retry-After \($0.milliseconds / 1000) s)" } ?? ""), status: status, wait: wait)
        case 404:
            return .failed(.httpStatus(404), "the API has no image for this exercise", status: status, missing: true)
        case let code where RetryPolicy.retryableStatuses.contains(code):
            return .retry(.httpStatus(code), "the server answered HTTP \(code)", status: code, wait: nil)
        default:
            return .failed(.httpStatus(status), "the server answered HTTP \(status)", status: status, missing: false)
        }
    }

    private func request(for item: FetchWorkItem, noting sent: AdmissionInstant) -> HTTPRequest {
        var headers = source.kind == .rapidAPI ? CatalogSources.headers(for: source) : HTTPHeaders()
        if let known = item.conditional {
            if let etag = known.etag { headers.append(name: "If-None-Match", value: etag) }
            if let lastModified = known.lastModified { headers.append(name: "If-Modified-Since", value: lastModified) }
        }
        var request = HTTPRequest(
            url: item.exercise.imageURL, headers: headers,
            timeouts: settings.httpTimeouts,
            acceptCompressedBody: false)
        request.followRedirects = source.kind == .v1
        // The budget, the window and a cool-down are checked when the request reaches curl, not
        // when it is queued behind the ones in flight (see GIFFetcher.lookahead).
        let (governor, source, settings, attempt) = (governor, source, settings, item.attempt)
        let conditional = item.conditional != nil
        request.admission = HTTPAdmission(
            { inFlight in
                guard governor.admit(inFlight: inFlight) else { return false }
                sent.note()
                return true
            },
            answered: { answer in
                Self.noteAnswer(answer, conditional: conditional, attempt: attempt, governor: governor, source: source, settings: settings)
            },
            // Only a cancelled fetch cancels its requests: no request queued behind is sent after.
            cancelled: { governor.noteCancelled() })
        return request
    }

    /// Tells the governor what an answer means for the requests behind it: the quota left
    /// (`x-ratelimit-requests-remaining`), a rejected key (401, 403) or a spent monthly quota
    /// (stop), a rate limit (429: cool-down, smaller window), and a success or one more failure in
    /// a row for the circuit breaker (which may stop the build). Called on the HTTP client's
    /// thread as the transfer ends, before the next queued request's admission, so a breaker that
    /// opens stops the requests queued behind the window too.
    static func noteAnswer(
        _ answer: HTTPAnswer, conditional: Bool, attempt: Int, governor: FetchGovernor,
        source: SourceSettings, settings: FetchSettings
    ) {
        if case .response(let head, _, _) = answer,
            let remaining = head.headers["x-ratelimit-requests-remaining"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        {
            governor.noteQuota(remaining: remaining)
        }
        // The same judgement the attempt's task makes, so the two never read an answer differently.
        let judgement = judge(answer, conditional: conditional, source: source, settings: settings)
        switch judgement {
        case .failed(.quotaExhausted, _, status: _?, _):
            governor.stop(.monthlyQuotaExhausted)
        case .failed(.httpStatus(let status), _, _, _) where status == 401 || status == 403:
            governor.stop(.authRejected(status: status))
        case .retry(.httpStatus(429), _, _, let wait):
            governor.noteRateLimited(coolDown: wait ?? settings.retry.delay(beforeAttempt: attempt + 1))
        default:
            break
        }
        switch judgement.breakerOutcome {
        case true?: governor.noteSuccess()
        case false?: governor.noteFailure()
        case nil: break
        }
    }
}

/// When the governor admitted a request (set on the HTTP client's loop thread, read by the task).
private final class AdmissionInstant: Sendable {
    private let value = Mutex<ContinuousClock.Instant?>(nil)

    func note() { value.withLock { $0 = .now } }

    var instant: ContinuousClock.Instant? { value.withLock { $0 } }
}

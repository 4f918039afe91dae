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
    let layout: CacheLayout
    let governor: FetchGovernor

    /// Sends the request once the governor admits it; returns the answer and when the request
    /// was admitted (nil if it never was).
    func run(_ item: FetchWorkItem) async -> (AttemptResult, sentAt: ContinuousClock.Instant?) {
        let sent = AdmissionInstant()
        let result = await run(item, noting: sent)
        return (result, sent.instant)
    }

    private func run(_ item: FetchWorkItem, noting sent: AdmissionInstant) async -> AttemptResult {
        await governor.waitForCoolDown()
        let path = layout.newTemporaryDownloadPath()
        let url = item.exercise.imageURL
        func rejection(_ reason: RejectionReason, _ detail: String, _ status: Int?) -> FetchRejection {
            FetchRejection(exerciseID: item.exercise.id, url: url, reason: reason, detail: detail, status: status)
        }
        let download: HTTPDownload
        do {
            download = try await client.download(request(for: item, noting: sent), to: path, maxBytes: settings.maxGIFBytes)
        } catch {
            FileSystem.remove(path)
            if case .notAdmitted = error { return .notSent(item) }
            if case .fileError(let file, let code) = error, FetchGovernor.isDiskFull(code) {
                // The first full-disk error stops the build: later downloads would only be dropped.
                governor.stop(.diskFull(path: file))
            }
            if case .bodyTooLarge = error {
                return .failed(item, rejection(.tooLarge, "the body exceeds max_gif_bytes (\(settings.maxGIFBytes) bytes)", nil), missing: false)
            }
            let failure = rejection(RejectionReason(error), String(describing: error), nil)
            return failure.reason.isRetryable ? .retry(item, failure, wait: nil) : .failed(item, failure, missing: false)
        }
        // What the answer means for the requests behind it (quota, key, rate limit) was told to the
        // governor on the HTTP client's thread as the transfer ended: see `noteAnswer`.
        let head = download.head
        let status = head.status
        if status != 200 { FileSystem.remove(path) }
        switch status {
        case 200:
            if let problem = ResponseChecks.problem(with: download) {
                FileSystem.remove(path)
                let failure = rejection(problem.reason, problem.detail, status)
                return failure.reason.isRetryable ? .retry(item, failure, wait: nil) : .failed(item, failure, missing: false)
            }
            return .downloaded(item, download, path: path)
        case 304 where item.conditional != nil:
            return .notModified(item, item.conditional!)
        case 401, 403:
            let variable = source.apiKeyEnvironmentVariable.map { " (check the key in \($0))" } ?? ""
            return .failed(item, rejection(.httpStatus(status), "the API rejected the key\(variable)", status), missing: false)
        case 429 where ResponseChecks.isMonthlyQuotaBody(download.prefix):
            return .failed(item, rejection(.quotaExhausted, "the monthly quota is used up", status), missing: false)
        case 429, 503:
            let wait = settings.retry.retryAfter(head.headers["retry-after"])
            return .retry(item, rejection(.httpStatus(status), "the server answered HTTP \(status)"
                + (wait.map { " (Retry-After \($0.milliseconds / 1000) s)" } ?? ""), status), wait: wait)
        case 404:
            return .failed(item, rejection(.httpStatus(404), "the API has no image for this exercise", status), missing: true)
        case let code where RetryPolicy.retryableStatuses.contains(code):
            return .retry(item, rejection(.httpStatus(code), "the server answered HTTP \(code)", code), wait: nil)
        default:
            return .failed(item, rejection(.httpStatus(status), "the server answered HTTP \(status)", status), missing: false)
        }
    }

    private func request(for item: FetchWorkItem, noting sent: AdmissionInstant) -> HTTPRequest {
        var headers = source.kind == .rapidAPI ? CatalogSources.headers(for: source) : HTTPHeaders()
        if let known = item.conditional {
            if let etag = known.etag { headers.append(name: "If-None-Match", value: etag) }
            if let lastModified = known.lastModified { headers.append(name: "If-Modified-Since", value: lastModified) }
        }
        var request = HTTPRequest(url: item.exercise.imageURL, headers: headers,
                                  timeouts: settings.httpTimeouts,
                                  acceptCompressedBody: false)
        request.followRedirects = source.kind == .v1
        // The budget, the window and a cool-down are checked when the request reaches curl, not
        // when it is queued behind the ones in flight (see GIFFetcher.lookahead).
        let (governor, retry, attempt) = (governor, settings.retry, item.attempt)
        request.admission = HTTPAdmission({ inFlight in
            guard governor.admit(inFlight: inFlight) else { return false }
            sent.note()
            return true
        }, answered: { head, prefix in
            Self.noteAnswer(head, prefix: prefix, attempt: attempt, governor: governor, retry: retry)
        })
        return request
    }

    /// Tells the governor what an answer means for the requests behind it: the quota left
    /// (`x-ratelimit-requests-remaining`), a rejected key (401, 403) or a spent monthly quota
    /// (stop), a rate limit (429: cool-down, smaller window). Called on the HTTP client's thread as
    /// the transfer ends, before the next queued request's admission.
    static func noteAnswer(_ head: HTTPResponseHead, prefix: [UInt8], attempt: Int, governor: FetchGovernor, retry: RetryPolicy) {
        if let remaining = head.headers["x-ratelimit-requests-remaining"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            governor.noteQuota(remaining: remaining)
        }
        switch head.status {
        case 401, 403: governor.stop(.authRejected(status: head.status))
        case 429 where ResponseChecks.isMonthlyQuotaBody(prefix): governor.stop(.monthlyQuotaExhausted)
        case 429:
            governor.noteRateLimited(coolDown: retry.retryAfter(head.headers["retry-after"]) ?? retry.delay(beforeAttempt: attempt + 1))
        default: break
        }
    }
}

/// When the governor admitted a request (set on the HTTP client's loop thread, read by the task).
private final class AdmissionInstant: Sendable {
    private let value = Mutex<ContinuousClock.Instant?>(nil)

    func note() { value.withLock { $0 = .now } }

    var instant: ContinuousClock.Instant? { value.withLock { $0 } }
}

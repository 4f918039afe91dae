import Foundation
import GifPackHTTP

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

    func run(_ item: FetchWorkItem) async -> AttemptResult {
        await governor.waitForCoolDown()
        let path = layout.newTemporaryDownloadPath()
        let url = item.exercise.imageURL
        func rejection(_ reason: RejectionReason, _ detail: String, _ status: Int?) -> FetchRejection {
            FetchRejection(exerciseID: item.exercise.id, url: url, reason: reason, detail: detail, status: status)
        }
        let download: HTTPDownload
        do {
            download = try await client.download(request(for: item), to: path, maxBytes: settings.maxGIFBytes)
        } catch {
            FileSystem.remove(path)
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
        let head = download.head
        if let remaining = head.headers["x-ratelimit-requests-remaining"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            governor.noteQuota(remaining: remaining)
        }
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
            governor.stop(.authRejected(status: status))
            let variable = source.apiKeyEnvironmentVariable.map { " (check the key in \($0))" } ?? ""
            return .failed(item, rejection(.httpStatus(status), "the API rejected the key\(variable)", status), missing: false)
        case 429 where ResponseChecks.isMonthlyQuotaBody(download.prefix):
            governor.stop(.monthlyQuotaExhausted)
            return .failed(item, rejection(.quotaExhausted, "the monthly quota is used up", status), missing: false)
        case 429, 503:
            let wait = settings.retry.retryAfter(head.headers["retry-after"])
            if status == 429 {
                governor.noteRateLimited(coolDown: wait ?? settings.retry.delay(beforeAttempt: item.attempt + 1))
            }
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

    private func request(for item: FetchWorkItem) -> HTTPRequest {
        var headers = source.kind == .rapidAPI ? CatalogSources.headers(for: source) : HTTPHeaders()
        if let known = item.conditional {
            if let etag = known.etag { headers.append(name: "If-None-Match", value: etag) }
            if let lastModified = known.lastModified { headers.append(name: "If-Modified-Since", value: lastModified) }
        }
        var request = HTTPRequest(url: item.exercise.imageURL, headers: headers,
                                  timeouts: settings.httpTimeouts,
                                  acceptCompressedBody: false)
        request.followRedirects = source.kind == .v1
        return request
    }
}

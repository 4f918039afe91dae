import Crypto
import Foundation
import GifPackHTTP

/// Shared paging and decoding of list pages.
struct CatalogPager: Sendable {
    let source: SourceSettings
    let fetch: FetchSettings
    let client: HTTPClient
    var expectedCount: Int? = nil
    /// Where the records of each page go as it arrives; nil keeps them in memory.
    var spool: RecordSpool? = nil
    /// The last run's pages, and where this run's go (with a spool only).
    var pageCache: PageCacheUse? = nil
    /// Hears every page request (``BuildEvent/catalogAttempt(_:)``).
    var observer: BuildObserver? = nil
    /// The early fetch's view of the list: every request, and each page's exercises as assembled.
    var early: EarlyFeed? = nil
    static let maxPages = 10_000

    struct PageCacheUse: Sendable {
        var path: String
        var key: RecordDigest
        var previous: CatalogPageCache?
    }

    /// With a ``spool``: pages whose bodies did not change since the run that left its
    /// ``CatalogPageCache`` at `path` are not parsed again, and this run's spool takes its place.
    mutating func reusePages(at path: String) {
        let key = CatalogPageCache.key(for: source)
        pageCache = .init(path: path, key: key, previous: CatalogPageCache.open(path: path, key: key))
    }

    /// A list page as received: its JSON (with the SHA-256 of its body, unless the body holds the
    /// key), or the last run's exercises for the same body.
    enum FetchedPage: Sendable {
        case json(JSONValue, body: RecordDigest?)
        case reused(CatalogPageCache.Page, exercises: [UInt8], body: [UInt8])
    }

    func pageURL(offset: Int) -> String {
        let base = source.baseURL.hasSuffix("/") ? String(source.baseURL.dropLast()) : source.baseURL
        return "\(base)/exercises?limit=\(source.pageSize)&offset=\(offset)"
    }

    /// Fetches one page and decodes it as JSON, retrying transient failures like image requests.
    /// The page's bytes count against `budget`, shared by every page of the catalog.
    func page(offset: Int, budget: CatalogBudget) async throws(CatalogError) -> FetchedPage {
        var attempt = 1
        while true {
            let started = ContinuousClock.now
            func tell(_ outcome: CatalogAttemptEvent.Outcome, reason: String? = nil, retryIn: Duration? = nil) {
                observer?(
                    .catalogAttempt(
                        CatalogAttemptEvent(
                            url: pageURL(offset: offset), attempt: attempt,
                            elapsed: ContinuousClock.now - started, outcome: outcome,
                            reason: reason, retryIn: retryIn)))
            }
            do {
                let page = try await pageOnce(offset: offset, budget: budget)
                tell(.received)
                return page
            } catch let failure {
                guard failure.retryable, attempt < fetch.retry.maxAttempts else {
                    tell(.failed, reason: failure.error.description)
                    throw failure.error
                }
                let wait = max(failure.retryAfter ?? .zero, fetch.retry.delay(beforeAttempt: attempt + 1))
                tell(.retry, reason: failure.error.description, retryIn: wait)
                attempt += 1
                // A cancelled build ends here, as a cancelled request would, without another attempt.
                do { try await Task.sleep(for: wait) } catch { throw .transport(url: pageURL(offset: offset), .cancelled) }
            }
        }
    }

    private struct PageFailure: Error {
        var error: CatalogError
        var retryable: Bool
        var retryAfter: Duration? = nil
    }

    private func pageOnce(offset: Int, budget: CatalogBudget) async throws(PageFailure) -> FetchedPage {
        let url = pageURL(offset: offset)
        var request = HTTPRequest(
            url: url, headers: CatalogSources.headers(for: source),
            timeouts: fetch.httpTimeouts,
            acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        let remaining = budget.remainingBytes
        guard remaining > 0 else { throw PageFailure(error: .catalogTooLarge(limit: fetch.maxCatalogBytes), retryable: false) }
        early?.requestSent()
        do { response = try await client.data(request, maxBytes: remaining) } catch {
            if case .bodyTooLarge = error {
                throw PageFailure(error: .catalogTooLarge(limit: fetch.maxCatalogBytes), retryable: false)
            }
            throw PageFailure(error: .transport(url: url, error), retryable: RejectionReason(error).isRetryable)
        }
        guard budget.spend(bytes: Int64(response.body.count)) else {
            throw PageFailure(error: .catalogTooLarge(limit: fetch.maxCatalogBytes), retryable: false)
        }
        let status = response.head.status
        if status == 401 || status == 403 {
            throw PageFailure(
                error: .authRejected(status: status, environmentVariable: source.apiKeyEnvironmentVariable),
                retryable: false)
        }
        if status == 429, ResponseChecks.isMonthlyQuotaBody(Array(response.body.prefix(512))) {
            throw PageFailure(error: .quotaExhausted(url: url), retryable: false)
        }
        // A body the last run saw: its exercises are in the last run's spool. A body with the key
        // in it gets no digest (the cache keeps no hash of a text holding the key).
        var body: RecordDigest?
        let redactor = SecretRedactor(source: source)
        if status == 200, let pageCache,
            !response.body.withUnsafeBytes({ raw in redactor.secrets.contains { SecretRedactor.occurs($0, in: raw) } })
        {
            let digest = RecordDigest(SHA256.hash(data: response.body))
            body = digest
            if let previous = pageCache.previous, let cached = previous.page(offset: offset, body: digest),
                let exercises = previous.bytes(of: cached)
            {
                return .reused(cached, exercises: exercises, body: response.body)
            }
        }
        // Linear-time parse with bounded nesting; a page nested deeper than the limit is refused with
        // the byte where it happens (a record must still fit the 64 levels readers allow in catalog.json).
        let parsed = Result { () throws(JSONParseError) -> JSONValue in try parsePage(response.body) }
        // A server that echoes the key (in an error message, in a record) must not get it into a
        // report, a log or a pack: the page is redacted before anything reads it.
        let json = (try? parsed.get()).map(redactor.redact)
        guard status == 200 else {
            throw PageFailure(
                error: .status(url: url, status: status, message: json?["message"]?.stringValue),
                retryable: RetryPolicy.retryableStatuses.contains(status),
                retryAfter: fetch.retry.retryAfter(response.head.headers["retry-after"]))
        }
        guard let json else {
            let html = ResponseChecks.looksLikeHTML(Array(response.body.prefix(512)))
            let reason: String
            if case .failure(let error) = parsed { reason = "the body does not parse as JSON: \(error)" } else { reason = "" }
            throw PageFailure(error: .notJSON(url: url, detail: html ? "the body is an HTML page" : reason), retryable: html)
        }
        return .json(json, body: body)
    }

    /// A list page's body as JSON: a linear-time parse with bounded nesting and size.
    private func parsePage(_ body: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(
            body,
            limits: JSONLimits(
                maxDepth: JSONLimits.catalogPageDepth,
                maxBytes: Int(clamping: fetch.maxCatalogBytes)))
    }

    /// `body` (a page the cache offered that could not be reused after all) parsed and redacted as
    /// if it had just arrived.
    func parse(_ body: [UInt8], url: String) throws(CatalogError) -> JSONValue {
        do {
            return SecretRedactor(source: source).redact(try parsePage(body))
        } catch {
            throw .notJSON(url: url, detail: "the body does not parse as JSON: \(error)")
        }
    }

    /// A count the API sent (such as v1's `metadata.totalExercises`): nil when absent or null, a
    /// whole number from 0 to `Int.max`, or a catalog error naming the field and what it held.
    /// No number from the API is converted unchecked: a negative, fractional or huge one stops the
    /// catalog with a message instead of a trap.
    static func count(_ value: JSONValue?, field: String, url: String) throws(CatalogError) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .integer(let number)? where number >= 0:
            guard let count = Int(exactly: number) else { break }
            return count
        default: break
        }
        throw .invalidNumber(url: url, field: field, value: shown(value ?? .null))
    }

    /// A JSON value as a message shows it: numbers as they are, a string escaped and cut short.
    static func shown(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "\(flag)"
        case .integer(let number): "\(number)"
        case .number(let number): "\(number)"
        case .string(let text): "the string \"\(CatalogRejectionReason.display(text) ?? "")\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}

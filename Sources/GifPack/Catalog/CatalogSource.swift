import Foundation
import GifPackHTTP

/// Fetches the exercise list from one API shape. The two implementations page through
/// `GET /exercises?limit=&offset=` until a short page and turn both schemas into ``Exercise``s.
///
/// ```swift
/// let source = CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client)
/// let catalog = try await source.fetchCatalog()
/// ```
public protocol CatalogSource: Sendable {
    func fetchCatalog() async throws(CatalogError) -> Catalog
}

public enum CatalogSources {
    public static func make(for source: SourceSettings, fetch: FetchSettings, client: HTTPClient) -> any CatalogSource {
        let pager = CatalogPager(source: source, fetch: fetch, client: client)
        switch source.kind {
        case .rapidAPI: return RapidAPICatalogSource(pager: pager)
        case .v1: return V1CatalogSource(pager: pager)
        }
    }

    /// Request headers for the source: the RapidAPI key and host headers, or none.
    static func headers(for source: SourceSettings) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let key = source.apiKey { headers.append(name: "X-RapidAPI-Key", value: key.value) }
        if let host = source.hostHeader { headers.append(name: "X-RapidAPI-Host", value: host) }
        return headers
    }
}

/// Shared paging and decoding of list pages.
struct CatalogPager: Sendable {
    let source: SourceSettings
    let fetch: FetchSettings
    let client: HTTPClient
    static let maxPages = 10_000

    func pageURL(offset: Int) -> String {
        let base = source.baseURL.hasSuffix("/") ? String(source.baseURL.dropLast()) : source.baseURL
        return "\(base)/exercises?limit=\(source.pageSize)&offset=\(offset)"
    }

    /// Fetches one page and decodes it as JSON, retrying transient failures like image requests.
    func page(offset: Int) async throws(CatalogError) -> JSONValue {
        var attempt = 1
        while true {
            do {
                return try await pageOnce(offset: offset)
            } catch let failure as PageFailure {
                guard failure.retryable, attempt < fetch.retry.maxAttempts else { throw failure.error }
                attempt += 1
                let wait = max(failure.retryAfter ?? .zero, fetch.retry.delay(beforeAttempt: attempt))
                try? await Task.sleep(for: wait)
            } catch {
                throw error as! CatalogError
            }
        }
    }

    private struct PageFailure: Error {
        var error: CatalogError
        var retryable: Bool
        var retryAfter: Duration? = nil
    }

    private func pageOnce(offset: Int) async throws -> JSONValue {
        let url = pageURL(offset: offset)
        var request = HTTPRequest(url: url, headers: CatalogSources.headers(for: source),
                                  timeouts: HTTPTimeouts(connect: fetch.connectTimeout, total: fetch.requestTimeout,
                                                         lowSpeedBytesPerSecond: fetch.lowSpeedBytesPerSecond,
                                                         lowSpeedWindow: fetch.lowSpeedTime),
                                  acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        do { response = try await client.data(request, maxBytes: fetch.maxCatalogBytes) } catch {
            throw PageFailure(error: .transport(url: url, error), retryable: RetryPolicy.retryableTransport.contains(error.reason))
        }
        let status = response.head.status
        if status == 401 || status == 403 {
            throw PageFailure(error: .authRejected(status: status, environmentVariable: source.apiKeyEnvironmentVariable),
                              retryable: false)
        }
        if status == 429, ResponseChecks.isMonthlyQuotaBody(Array(response.body.prefix(512))) {
            throw PageFailure(error: .quotaExhausted(url: url), retryable: false)
        }
        let json = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body))
        guard status == 200 else {
            throw PageFailure(error: .status(url: url, status: status, message: json?["message"]?.stringValue),
                              retryable: RetryPolicy.retryableStatuses.contains(status),
                              retryAfter: fetch.retry.retryAfter(response.head.headers["retry-after"]))
        }
        guard let json else {
            let html = ResponseChecks.looksLikeHTML(Array(response.body.prefix(512)))
            throw PageFailure(error: .notJSON(url: url, detail: html ? "the body is an HTML page" : "the body does not parse as JSON"),
                              retryable: html)
        }
        return json
    }

    /// Pages until `records(page)` returns fewer than a page of records (or `isLast` says so), then
    /// normalises every record with `normalise`.
    func collect(records: (JSONValue, String) throws(CatalogError) -> (items: [JSONValue], isLast: Bool),
                 normalise: (JSONValue) -> Result<Exercise, CatalogRejectionReason>) async throws(CatalogError) -> Catalog {
        var offset = 0
        var pages = 0
        var all: [JSONValue] = []
        var previousFirst: JSONValue?
        while true {
            guard pages < Self.maxPages else { throw .tooManyPages(limit: Self.maxPages) }
            let json = try await page(offset: offset)
            pages += 1
            let (items, isLast) = try records(json, pageURL(offset: offset))
            if let first = items.first, offset > 0, first == previousFirst {
                throw .pagingDoesNotAdvance(url: pageURL(offset: offset))
            }
            previousFirst = items.first
            all.append(contentsOf: items)
            if isLast || items.count < source.pageSize { break }
            offset += items.count
        }
        return Self.assemble(records: all, pages: pages, normalise: normalise)
    }

    /// Normalises every record, refusing bad ones and keeping the first of duplicate ids.
    static func assemble(records: [JSONValue], pages: Int,
                         normalise: (JSONValue) -> Result<Exercise, CatalogRejectionReason>) -> Catalog {
        var exercises: [Exercise] = []
        var rejected: [CatalogRejection] = []
        var seen: Set<String> = []
        var duplicates: Set<String> = []
        for (position, record) in records.enumerated() {
            switch normalise(record) {
            case .success(let exercise):
                if seen.insert(exercise.id).inserted { exercises.append(exercise) } else { duplicates.insert(exercise.id) }
            case .failure(let reason):
                rejected.append(CatalogRejection(position: position, id: reason.displayID, reason: reason.reason))
            }
        }
        return Catalog(exercises: exercises, rejected: rejected, duplicateIDs: duplicates.sorted(), pagesFetched: pages)
    }
}

/// Why one catalog record was refused.
struct CatalogRejectionReason: Error {
    var displayID: String?
    var reason: String

    /// Shows an untrusted id safely: printable ASCII only, at most 80 characters.
    static func display(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let escaped = raw.unicodeScalars.prefix(80).map { scalar in
            (0x20..<0x7F).contains(scalar.value) ? String(scalar) : String(format: "\\u{%X}", scalar.value)
        }.joined()
        return escaped
    }

    static func invalidID(_ raw: String?) -> CatalogRejectionReason {
        CatalogRejectionReason(displayID: display(raw),
                               reason: raw == nil ? "missing-id" : "invalid-id (must match ^[A-Za-z0-9_-]{1,64}$)")
    }
}

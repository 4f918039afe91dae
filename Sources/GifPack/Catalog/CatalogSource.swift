import Crypto
import Foundation
import GifPackHTTP
import Synchronization

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

/// Makes the ``CatalogSource`` for a manifest's source kind.
public enum CatalogSources {
    /// `expectedCount` (the size of the last catalog, if known) lets the pages be fetched in
    /// parallel without a request past the end. With a `spool`, every page's records go to its file
    /// as the page arrives and the catalog keeps only where they are.
    static func make(for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
                     expectedCount: Int? = nil, spool: RecordSpool?) -> any CatalogSource {
        let pager = CatalogPager(source: source, fetch: fetch, client: client, expectedCount: expectedCount, spool: spool)
        switch source.kind {
        case .rapidAPI: return RapidAPICatalogSource(pager: pager)
        case .v1: return V1CatalogSource(pager: pager)
        }
    }

    /// `expectedCount` (the size of the last catalog, if known) lets the pages be fetched in
    /// parallel without a request past the end. The records stay in memory.
    public static func make(for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
                            expectedCount: Int? = nil) -> any CatalogSource {
        let pager = CatalogPager(source: source, fetch: fetch, client: client, expectedCount: expectedCount, spool: nil)
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
    var expectedCount: Int? = nil
    /// Where the records of each page go as it arrives; nil keeps them in memory.
    var spool: RecordSpool? = nil
    static let maxPages = 10_000

    func pageURL(offset: Int) -> String {
        let base = source.baseURL.hasSuffix("/") ? String(source.baseURL.dropLast()) : source.baseURL
        return "\(base)/exercises?limit=\(source.pageSize)&offset=\(offset)"
    }

    /// Fetches one page and decodes it as JSON, retrying transient failures like image requests.
    /// The page's bytes count against `budget`, shared by every page of the catalog.
    func page(offset: Int, budget: CatalogBudget) async throws(CatalogError) -> JSONValue {
        var attempt = 1
        while true {
            do {
                return try await pageOnce(offset: offset, budget: budget)
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

    private func pageOnce(offset: Int, budget: CatalogBudget) async throws -> JSONValue {
        let url = pageURL(offset: offset)
        var request = HTTPRequest(url: url, headers: CatalogSources.headers(for: source),
                                  timeouts: fetch.httpTimeouts,
                                  acceptCompressedBody: true)
        request.followRedirects = true
        let response: HTTPDataResponse
        let remaining = budget.remainingBytes
        guard remaining > 0 else { throw PageFailure(error: .catalogTooLarge(limit: fetch.maxCatalogBytes), retryable: false) }
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
            throw PageFailure(error: .authRejected(status: status, environmentVariable: source.apiKeyEnvironmentVariable),
                              retryable: false)
        }
        if status == 429, ResponseChecks.isMonthlyQuotaBody(Array(response.body.prefix(512))) {
            throw PageFailure(error: .quotaExhausted(url: url), retryable: false)
        }
        // Linear-time parse with bounded nesting; a page nested deeper than the limit is refused with
        // the byte where it happens (a record must still fit the 64 levels readers allow in catalog.json).
        let parsed = Result { () throws(JSONParseError) -> JSONValue in
            try JSONParser.parse(response.body, limits: JSONLimits(maxDepth: JSONLimits.catalogPageDepth,
                                                                   maxBytes: Int(clamping: fetch.maxCatalogBytes)))
        }
        // A server that echoes the key (in an error message, in a record) must not get it into a
        // report, a log or a pack: the page is redacted before anything reads it.
        let json = (try? parsed.get()).map(SecretRedactor(source: source).redact)
        guard status == 200 else {
            throw PageFailure(error: .status(url: url, status: status, message: json?["message"]?.stringValue),
                              retryable: RetryPolicy.retryableStatuses.contains(status),
                              retryAfter: fetch.retry.retryAfter(response.head.headers["retry-after"]))
        }
        guard let json else {
            let html = ResponseChecks.looksLikeHTML(Array(response.body.prefix(512)))
            let reason: String
            if case .failure(let error) = parsed { reason = "the body does not parse as JSON: \(error)" } else { reason = "" }
            throw PageFailure(error: .notJSON(url: url, detail: html ? "the body is an HTML page" : reason), retryable: html)
        }
        return json
    }

    /// What one list page holds: its records, whether the API says it is the last, and the catalog
    /// size when the API tells it (v1's `metadata.totalExercises`).
    struct PageContent: Sendable {
        var items: [JSONValue]
        var isLast: Bool
        var total: Int?
    }

    /// Pages through the list and normalises every record.
    ///
    /// The first page gives the effective page size (a plan may cap `limit` below `page_size`, so a
    /// page is "short" only when it is shorter than the first one). Later pages are fetched up to
    /// three at a time: exactly as many as needed when the size is known (v1's total, or
    /// `expectedCount` from the last run), and otherwise speculatively, which can cost at most two
    /// requests past the end, on a first run only.
    func collect(expectedCount: Int? = nil, records: @escaping @Sendable (JSONValue, String) throws(CatalogError) -> PageContent,
                 normalise: @escaping @Sendable (JSONValue) -> Result<Exercise, CatalogRejectionReason>) async throws(CatalogError) -> Catalog {
        // Each page is normalised as it arrives, so only compact exercises are kept, never the trees
        // of every page. Later pages are parsed and normalised in their own tasks, in parallel; they
        // are counted, checked and spooled here, one at a time.
        let budget = CatalogBudget(maxBytes: fetch.maxCatalogBytes)
        var recordCount = 0
        var seenPages: Set<SHA256Digest> = []
        /// Counts a page's records against `max_catalog_records` and refuses a page seen before
        /// (same records at another offset: a server ignoring `offset`), as soon as it arrives, then
        /// normalises it. A page is known by the digests of its records' canonical bytes (a
        /// normalised record already has its own; a refused one is encoded for it).
        func admit(_ content: PageContent, normalised: [Result<Exercise, CatalogRejectionReason>],
                   offset: Int) throws(CatalogError) -> [Result<Exercise, CatalogRejectionReason>] {
            recordCount += content.items.count
            guard recordCount <= fetch.maxCatalogRecords else { throw .tooManyRecords(limit: fetch.maxCatalogRecords) }
            guard !content.items.isEmpty else { return normalised }
            var page = SHA256()
            for (item, result) in zip(content.items, normalised) {
                switch result {
                case .success(let exercise): page.update(data: exercise.record.sha256.bytes)
                case .failure:
                    do { page.update(data: Array(SHA256.hash(data: try CanonicalJSON.encode(item)))) } catch {
                        throw .unexpectedShape(url: pageURL(offset: offset), detail: "\(error)")
                    }
                }
            }
            guard seenPages.insert(page.finalize()).inserted else { throw .pagingDoesNotAdvance(url: pageURL(offset: offset)) }
            return normalised
        }
        let first = try records(try await page(offset: 0, budget: budget), pageURL(offset: 0))
        let step = first.items.count
        // Pages are assembled in order as soon as they can be, up to the first short one (pages
        // fetched past the end are dropped), so only the pages that arrived ahead of an earlier one
        // wait here: the catalog is held once, with its lists shared, never page by page beside it.
        var pages: [Int: [Result<Exercise, CatalogRejectionReason>]] = [:]
        var pageCount = 0
        // Room for the size the last run saw (or the server announces), within max_catalog_records.
        var assembler = Assembler(expected: min(expectedCount ?? first.total ?? first.items.count, fetch.maxCatalogRecords),
                                  spool: spool)
        var nextToAssemble = 0
        var assembled = false // the last page is in
        var previousFirst: Result<Exercise, CatalogRejectionReason>?
        func arrived(_ items: [Result<Exercise, CatalogRejectionReason>], offset: Int) throws(CatalogError) {
            pageCount += 1
            guard !assembled else { return }
            pages[offset] = items
            while !assembled, let items = pages.removeValue(forKey: nextToAssemble) {
                if let firstItem = items.first, nextToAssemble > 0, let previousFirst, Self.same(firstItem, previousFirst) {
                    throw .pagingDoesNotAdvance(url: pageURL(offset: nextToAssemble))
                }
                previousFirst = items.first
                try assembler.add(items)
                if items.count < step || items.isEmpty { assembled = true }
                nextToAssemble += step
            }
            if assembled { pages = [:] }
        }
        try arrived(try admit(first, normalised: first.items.map(normalise), offset: 0), offset: 0)
        if !first.isLast, step > 0 {
            let known = first.total ?? expectedCount
            var end: Int? = first.total // offset just past the last record, once known
            var next = step
            var running = 0
            var failure: CatalogError?
            await withTaskGroup(of: (Int, Result<(PageContent, [Result<Exercise, CatalogRejectionReason>]), CatalogError>).self) { group in
                while true {
                    while failure == nil, running < 3, next / step < Self.maxPages, end.map({ next < $0 }) ?? true,
                          running == 0 || known.map({ next <= $0 }) ?? true {
                        let offset = next
                        group.addTask {
                            do throws(CatalogError) {
                                let content = try records(try await page(offset: offset, budget: budget), pageURL(offset: offset))
                                return (offset, .success((content, content.items.map(normalise))))
                            } catch {
                                return (offset, .failure(error))
                            }
                        }
                        next += step
                        running += 1
                    }
                    guard running > 0, let (offset, result) = await group.next() else { break }
                    running -= 1
                    switch result {
                    case .failure(let error):
                        failure = failure ?? error
                        group.cancelAll()
                    case .success(let (content, normalised)):
                        do throws(CatalogError) { try arrived(try admit(content, normalised: normalised, offset: offset), offset: offset) } catch {
                            failure = failure ?? error
                            group.cancelAll()
                            continue
                        }
                        if content.isLast || content.items.count < step {
                            end = min(end ?? .max, offset + content.items.count)
                        }
                    }
                }
            }
            if let failure { throw failure }
            if next / step >= Self.maxPages, end == nil { throw .tooManyPages(limit: Self.maxPages) }
        }
        return try assembler.catalog(pages: pageCount)
    }

    private static func same(_ a: Result<Exercise, CatalogRejectionReason>, _ b: Result<Exercise, CatalogRejectionReason>) -> Bool {
        if case .success(let x) = a, case .success(let y) = b { return x.record == y.record }
        return false
    }

    /// Normalises every record, refusing bad ones and keeping the first of duplicate ids.
    static func assemble(records: [JSONValue], pages: Int,
                         normalise: (JSONValue) -> Result<Exercise, CatalogRejectionReason>) -> Catalog {
        assemble(normalised: records.map(normalise), pages: pages)
    }

    static func assemble(normalised: [Result<Exercise, CatalogRejectionReason>], pages: Int) -> Catalog {
        var assembler = Assembler(expected: normalised.count, spool: nil)
        // Nothing is written without a spool: nothing can fail.
        try! assembler.add(normalised)
        return try! assembler.catalog(pages: pages)
    }

    /// Collects normalised records in order, refusing bad ones and keeping the first of duplicate ids.
    ///
    /// With a spool, each page's exercises are written to it whole as the page is added, and only
    /// where each one is (eight bytes) is kept. In memory, equal body part, equipment and target
    /// lists (a catalog has a few hundred different ones) share one array.
    struct Assembler {
        private let spool: RecordSpool?
        private var exercises: [Exercise] = []
        private var slots: [ExerciseSlot] = []
        private var lists: Set<[String]> = []
        private var rejected: [CatalogRejection] = []
        private var duplicates: Set<String> = []
        private var position = 0
        /// The last id added, and whether every id so far came after the one before it (then the
        /// catalog needs no sort and has no duplicate).
        private var lastID: String?
        private var inOrder = true

        init(expected: Int, spool: RecordSpool?) {
            self.spool = spool
            if spool == nil { exercises.reserveCapacity(expected) } else { slots.reserveCapacity(expected) }
        }

        mutating func add(_ normalised: [Result<Exercise, CatalogRejectionReason>]) throws(CatalogError) {
            var page: [Exercise] = []
            for result in normalised {
                switch result {
                case .success(var exercise):
                    if let lastID, !(lastID < exercise.id) { inOrder = false }
                    lastID = exercise.id
                    // Duplicate ids are dropped once the exercises are sorted (see `catalog(pages:)`),
                    // where they sit side by side: no set of every id is kept.
                    if spool != nil {
                        page.append(exercise)
                    } else {
                        exercise.bodyParts = lists.insert(exercise.bodyParts).memberAfterInsert
                        exercise.equipment = lists.insert(exercise.equipment).memberAfterInsert
                        exercise.targets = lists.insert(exercise.targets).memberAfterInsert
                        exercises.append(exercise)
                    }
                case .failure(let reason):
                    rejected.append(CatalogRejection(position: position, id: reason.displayID, reason: reason.reason))
                }
                position += 1
            }
            if let spool, !page.isEmpty {
                do { slots += try spool.append(exercises: page) } catch { throw .spool(error) }
            }
        }

        /// The catalog, taking the exercises out of the assembler. They are sorted here, once the
        /// array has no other owner, so in place (Catalog's init then finds them in order): a
        /// `consuming` method would sort a copy when the assembler is captured by a closure.
        mutating func catalog(pages: Int) throws(CatalogError) -> Catalog {
            if let spool {
                var list: [ExerciseSlot] = []
                swap(&list, &slots)
                if !inOrder {
                    do { list = try sortedSlots(list, spool: spool) } catch { throw .spool(error) }
                }
                return Catalog(sorted: ExerciseList(spool: spool, slots: list), rejected: rejected,
                               duplicateIDs: duplicates.sorted(), pagesFetched: pages)
            }
            var list: [Exercise] = []
            swap(&list, &exercises)
            Catalog.sortByID(&list)
            // Equal ids are side by side, in catalog order (the sort keeps it): the first stays.
            var kept = 0
            for index in list.indices {
                if kept > 0, list[index].id == list[kept - 1].id {
                    duplicates.insert(list[index].id)
                    continue
                }
                if kept != index { list[kept] = list[index] }
                kept += 1
            }
            list.removeLast(list.count - kept)
            return Catalog(exercises: list, rejected: rejected, duplicateIDs: duplicates.sorted(), pagesFetched: pages)
        }

        /// Spooled exercises that came out of id order, sorted by id (the first of equal ids kept,
        /// the others counted as duplicates) and written again in that order, so that every pass
        /// over the catalog reads the spool straight through. Only the ids are held, for the sort.
        private mutating func sortedSlots(_ slots: [ExerciseSlot], spool: RecordSpool) throws(FileSystemError) -> [ExerciseSlot] {
            let ids = spool.ids(at: slots)
            var order = Array(ids.indices)
            order.sort { ids[$0] < ids[$1] || (ids[$0] == ids[$1] && $0 < $1) }
            var sorted: [ExerciseSlot] = []
            sorted.reserveCapacity(slots.count)
            var previous: Int?
            for index in order {
                if let previous, ids[previous] == ids[index] {
                    duplicates.insert(ids[index])
                    continue
                }
                sorted.append(slots[index])
                previous = index
            }
            return try spool.rewrite(sorted)
        }
    }
}

/// The bytes every page of one catalog may take together (`max_catalog_bytes`), shared by the
/// pages fetched in parallel.
final class CatalogBudget: Sendable {
    private let maxBytes: Int64
    private let used = Mutex<Int64>(0)

    init(maxBytes: Int64) { self.maxBytes = maxBytes }

    /// What a page may still take: the most one response body may be.
    var remainingBytes: Int64 { maxBytes - used.withLock { $0 } }

    /// Counts a page's bytes; false once all pages together exceed the bound.
    func spend(bytes: Int64) -> Bool {
        used.withLock { total in
            total += bytes
            return total <= maxBytes
        }
    }
}

/// Why one catalog record was refused.
struct CatalogRejectionReason: Error {
    var displayID: String?
    var reason: CatalogRejectionCode

    /// Shows an untrusted id safely: printable ASCII only, at most 80 characters.
    static func display(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let escaped = raw.unicodeScalars.prefix(80).map { scalar in
            (0x20..<0x7F).contains(scalar.value) ? String(scalar) : String(format: "\\u{%X}", scalar.value)
        }.joined()
        return escaped
    }

    static func invalidID(_ raw: String?) -> CatalogRejectionReason {
        CatalogRejectionReason(displayID: display(raw), reason: raw == nil ? .missingID : .invalidID)
    }
}

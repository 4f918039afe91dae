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
    /// With `pagesPath` too, pages whose bodies did not change since the run that left its
    /// ``CatalogPageCache`` there are not parsed again, and this run's spool takes its place.
    static func make(for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
                     expectedCount: Int? = nil, spool: RecordSpool?, pagesPath: String? = nil,
                     observer: BuildObserver? = nil) -> any CatalogSource {
        var pager = CatalogPager(source: source, fetch: fetch, client: client, expectedCount: expectedCount, spool: spool)
        pager.observer = observer
        if let pagesPath, spool != nil {
            let key = CatalogPageCache.key(for: source)
            pager.pageCache = .init(path: pagesPath, key: key, previous: CatalogPageCache.open(path: pagesPath, key: key))
        }
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
    /// The last run's pages, and where this run's go (with a spool only).
    var pageCache: PageCacheUse? = nil
    /// Hears every page request (``BuildEvent/catalogAttempt(_:)``).
    var observer: BuildObserver? = nil
    static let maxPages = 10_000

    struct PageCacheUse: Sendable {
        var path: String
        var key: RecordDigest
        var previous: CatalogPageCache?
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
                observer?(.catalogAttempt(CatalogAttemptEvent(url: pageURL(offset: offset), attempt: attempt,
                                                              elapsed: ContinuousClock.now - started, outcome: outcome,
                                                              reason: reason, retryIn: retryIn)))
            }
            do {
                let page = try await pageOnce(offset: offset, budget: budget)
                tell(.received)
                return page
            } catch let failure as PageFailure {
                guard failure.retryable, attempt < fetch.retry.maxAttempts else {
                    tell(.failed, reason: failure.error.description)
                    throw failure.error
                }
                let wait = max(failure.retryAfter ?? .zero, fetch.retry.delay(beforeAttempt: attempt + 1))
                tell(.retry, reason: failure.error.description, retryIn: wait)
                attempt += 1
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

    private func pageOnce(offset: Int, budget: CatalogBudget) async throws -> FetchedPage {
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
        // A body the last run saw: its exercises are in the last run's spool. A body with the key
        // in it gets no digest (the cache keeps no hash of a text holding the key).
        var body: RecordDigest?
        let redactor = SecretRedactor(source: source)
        if status == 200, let pageCache,
           !response.body.withUnsafeBytes({ raw in redactor.secrets.contains { SecretRedactor.occurs($0, in: raw) } }) {
            let digest = RecordDigest(SHA256.hash(data: response.body))
            body = digest
            if let previous = pageCache.previous, let cached = previous.page(offset: offset, body: digest),
               let exercises = previous.bytes(of: cached) {
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
        return .json(json, body: body)
    }

    /// A list page's body as JSON: a linear-time parse with bounded nesting and size.
    private func parsePage(_ body: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(body, limits: JSONLimits(maxDepth: JSONLimits.catalogPageDepth,
                                                      maxBytes: Int(clamping: fetch.maxCatalogBytes)))
    }

    /// `body` (a page the cache offered that could not be reused after all) parsed and redacted as
    /// if it had just arrived.
    private func parse(_ body: [UInt8], url: String) throws(CatalogError) -> JSONValue {
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

    /// What one list page holds: its records, whether the API says it is the last, and the catalog
    /// size when the API tells it (v1's `metadata.totalExercises`).
    struct PageContent: Sendable {
        var items: [JSONValue]
        var isLast: Bool
        var total: Int?
    }

    /// A page ready to be assembled: its records parsed and normalised, or the last run's
    /// exercises for the same body.
    struct ArrivedPage: Sendable {
        var itemCount: Int
        var isLast: Bool
        var total: Int?
        /// SHA-256 of the body (nil when it held the key): what the next run's cache knows it by.
        var body: RecordDigest?
        var content: Content

        enum Content: Sendable {
            case parsed(items: [JSONValue], normalised: [Result<Exercise, CatalogRejectionReason>])
            case reused(CatalogPageCache.Page, exercises: [UInt8], body: [UInt8])
        }

        init(parsed content: PageContent, normalised: [Result<Exercise, CatalogRejectionReason>], body: RecordDigest?) {
            itemCount = content.items.count
            isLast = content.isLast
            total = content.total
            self.body = body
            self.content = .parsed(items: content.items, normalised: normalised)
        }

        init(reused page: CatalogPageCache.Page, exercises: [UInt8], body: [UInt8]) {
            itemCount = page.itemCount
            isLast = page.isLast
            total = page.total
            self.body = page.body
            content = .reused(page, exercises: exercises, body: body)
        }

        /// The first record's hash when it is usable (how a page served again at the next offset is told).
        var firstRecord: RecordDigest? {
            switch content {
            case .parsed(_, let normalised):
                if case .success(let exercise)? = normalised.first { return exercise.record.sha256 }
                return nil
            case .reused(let page, _, _): return page.firstRecord
            }
        }
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
        var seenPages: Set<RecordDigest> = []
        /// A fetched page, parsed and normalised (in the page's own task), or as the cache has it.
        @Sendable func arrive(_ fetched: FetchedPage, offset: Int) throws(CatalogError) -> ArrivedPage {
            switch fetched {
            case .json(let json, let body):
                let content = try records(json, pageURL(offset: offset))
                return ArrivedPage(parsed: content, normalised: content.items.map(normalise), body: body)
            case .reused(let page, let exercises, let body):
                return ArrivedPage(reused: page, exercises: exercises, body: body)
            }
        }
        /// Counts a page's records against `max_catalog_records` and refuses a page seen before
        /// (same records at another offset: a server ignoring `offset`), as soon as it arrives. A
        /// page is known by the digests of its records' canonical bytes (a normalised record
        /// already has its own; a refused one is encoded for it); a reused page, by the digest the
        /// last run made so.
        func admit(_ page: ArrivedPage, offset: Int) throws(CatalogError) -> RecordDigest {
            recordCount += page.itemCount
            guard recordCount <= fetch.maxCatalogRecords else { throw .tooManyRecords(limit: fetch.maxCatalogRecords) }
            let digest: RecordDigest
            switch page.content {
            case .reused(let cached, _, _): digest = cached.pageDigest
            case .parsed(let items, let normalised):
                var hasher = SHA256()
                for (item, result) in zip(items, normalised) {
                    switch result {
                    case .success(let exercise): hasher.update(data: exercise.record.sha256.bytes)
                    case .failure:
                        do { hasher.update(data: Array(SHA256.hash(data: try CanonicalJSON.encode(item)))) } catch {
                            throw .unexpectedShape(url: pageURL(offset: offset), detail: "\(error)")
                        }
                    }
                }
                digest = RecordDigest(hasher.finalize())
            }
            guard page.itemCount > 0 else { return digest }
            guard seenPages.insert(digest).inserted else { throw .pagingDoesNotAdvance(url: pageURL(offset: offset)) }
            return digest
        }
        let first = try arrive(try await page(offset: 0, budget: budget), offset: 0)
        let step = first.itemCount
        // Pages are assembled in order as soon as they can be, up to the first short one (pages
        // fetched past the end are dropped), so only the pages that arrived ahead of an earlier one
        // wait here: the catalog is held once, with its lists shared, never page by page beside it.
        var pages: [Int: (ArrivedPage, RecordDigest)] = [:]
        var pageCount = 0
        // Room for the size the last run saw (or the server announces), within max_catalog_records.
        var assembler = Assembler(expected: max(0, min(expectedCount ?? first.total ?? first.itemCount, fetch.maxCatalogRecords)),
                                  spool: spool)
        var nextToAssemble = 0
        var assembled = false // the last page is in
        var previousFirst: RecordDigest?
        // The records of the pages assembled, and every total those pages announced: checked
        // against each other once the last page is in.
        var assembledRecords = 0
        var announcedTotals: Set<Int> = []
        func arrived(_ page: ArrivedPage, digest: RecordDigest, offset: Int) throws(CatalogError) {
            pageCount += 1
            guard !assembled else { return }
            pages[offset] = (page, digest)
            while !assembled, let (page, digest) = pages.removeValue(forKey: nextToAssemble) {
                let firstRecord = page.firstRecord
                if let firstRecord, nextToAssemble > 0, firstRecord == previousFirst {
                    throw .pagingDoesNotAdvance(url: pageURL(offset: nextToAssemble))
                }
                previousFirst = firstRecord
                assembledRecords += page.itemCount
                if let total = page.total { announcedTotals.insert(total) }
                let entry = Assembler.PageEntry(offset: nextToAssemble, body: page.body, digest: digest, itemCount: page.itemCount,
                                                isLast: page.isLast, total: page.total, firstRecord: firstRecord)
                switch page.content {
                case .reused(let cached, var exercises, let body):
                    if let previous = pageCache?.previous,
                       try assembler.add(reused: cached, exercises: &exercises, tables: previous.tables, page: entry) { break }
                    // Bytes that hashed right but do not read as exercises: the body is parsed after all.
                    let url = pageURL(offset: nextToAssemble)
                    let content = try records(try parse(body, url: url), url)
                    try assembler.add(content.items.map(normalise), page: entry)
                case .parsed(_, let normalised):
                    try assembler.add(normalised, page: entry)
                }
                // The page the API calls the last (v1: `nextPage` null) ends the list, as does a short one.
                if page.isLast || page.itemCount < step || page.itemCount == 0 { assembled = true }
                nextToAssemble += step
            }
            if assembled { pages = [:] }
        }
        try arrived(first, digest: try admit(first, offset: 0), offset: 0)
        if !first.isLast, step > 0 {
            // A total the API announces (v1) only says how many pages to ask for at once: the
            // list ends where `nextPage` does (or at a short page), and a total that disagrees with
            // what the pages held is refused below. Past the announced total, pages are asked for
            // one at a time, each only once the one before it said there is a next.
            let announced = first.total
            let known = expectedCount
            var end: Int? // offset just past the last record, once known
            var next = step
            var running = 0
            var failure: CatalogError?
            await withTaskGroup(of: (Int, Result<ArrivedPage, CatalogError>).self) { group in
                while true {
                    while failure == nil, running < 3, next / step < Self.maxPages, end.map({ next < $0 }) ?? true,
                          running == 0 || announced.map({ next < $0 }) ?? known.map({ next <= $0 }) ?? true {
                        let offset = next
                        group.addTask {
                            do throws(CatalogError) {
                                return (offset, .success(try arrive(try await page(offset: offset, budget: budget), offset: offset)))
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
                    case .success(let page):
                        do throws(CatalogError) { try arrived(page, digest: try admit(page, offset: offset), offset: offset) } catch {
                            failure = failure ?? error
                            group.cancelAll()
                            continue
                        }
                        if page.isLast || page.itemCount < step {
                            end = min(end ?? .max, offset + page.itemCount)
                        }
                    }
                }
            }
            if let failure { throw failure }
            if next / step >= Self.maxPages, end == nil { throw .tooManyPages(limit: Self.maxPages) }
        }
        if let total = announcedTotals.sorted().first(where: { $0 != assembledRecords }) {
            throw .totalMismatch(total: total, seen: assembledRecords)
        }
        var catalog = try assembler.catalog(pages: pageCount)
        catalog.pagesReused = assembler.pagesReused
        if let pageCache {
            // A cache that cannot be written costs the next run its parsing, nothing else.
            assembler.persist(as: pageCache.path, key: pageCache.key, previous: pageCache.previous)
        }
        return catalog
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

        /// What the next run's ``CatalogPageCache`` will know of each page added (with a spool only).
        private var directory: [CatalogPageCache.Page] = []
        /// Pages whose exercises were copied from the last run's spool.
        private(set) var pagesReused = 0
        /// The spool an unsorted catalog was written again into, in id order.
        private var sorted: RecordSpool?

        /// What the pager knows of a page it adds.
        struct PageEntry {
            var offset: Int
            var body: RecordDigest?
            var digest: RecordDigest
            var itemCount: Int
            var isLast: Bool
            var total: Int?
            var firstRecord: RecordDigest?
        }

        init(expected: Int, spool: RecordSpool?) {
            self.spool = spool
            if spool == nil { exercises.reserveCapacity(expected) } else { slots.reserveCapacity(expected) }
        }

        /// Adds a page's records; `page` (with a spool) says what the next run's cache will know of it.
        mutating func add(_ normalised: [Result<Exercise, CatalogRejectionReason>], page entry: PageEntry? = nil) throws(CatalogError) {
            var page: [Exercise] = []
            let pageStart = position
            var pageRejections: [CatalogPageCache.Rejection] = []
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
                    pageRejections.append(.init(position: position - pageStart, id: reason.displayID, reason: reason.reason))
                }
                position += 1
            }
            guard let spool else { return }
            var spooled = RecordSpool.SpooledPage.empty
            if !page.isEmpty {
                do { spooled = try spool.appendPage(exercises: page) } catch { throw .spool(error) }
                slots += spooled.slots
            }
            if let entry, let body = entry.body {
                directory.append(.init(offset: entry.offset, body: body, pageDigest: entry.digest, itemCount: entry.itemCount,
                                       isLast: entry.isLast, total: entry.total, firstRecord: entry.firstRecord,
                                       start: spooled.start, length: spooled.length, exercises: spooled.slots.count,
                                       content: spooled.digest, rejections: pageRejections))
            }
        }

        /// Adds a page the last run's spool holds (`exercises`, numbered by `tables`), copied to
        /// this spool. False, adding nothing, when its bytes do not read as the page's exercises.
        mutating func add(reused cached: CatalogPageCache.Page, exercises bytes: inout [UInt8], tables: RecordSpool.Tables,
                          page entry: PageEntry) throws(CatalogError) -> Bool {
            guard let spool else { return false }
            let written: (RecordSpool.SpooledPage, ids: [String])?
            do { written = try spool.appendReused(&bytes, tables: tables, digest: cached.content) } catch { throw .spool(error) }
            guard let (spooled, ids) = written, ids.count == cached.exercises,
                  cached.rejections.allSatisfy({ $0.position < cached.itemCount }),
                  ids.count + cached.rejections.count == cached.itemCount else { return false }
            for id in ids {
                if let lastID, !(lastID < id) { inOrder = false }
                lastID = id
            }
            for rejection in cached.rejections {
                rejected.append(CatalogRejection(position: position + rejection.position, id: rejection.id, reason: rejection.reason))
            }
            position += cached.itemCount
            slots += spooled.slots
            directory.append(.init(offset: entry.offset, body: cached.body, pageDigest: entry.digest, itemCount: entry.itemCount,
                                   isLast: entry.isLast, total: entry.total, firstRecord: entry.firstRecord,
                                   start: spooled.start, length: spooled.length, exercises: ids.count,
                                   content: spooled.digest, rejections: cached.rejections))
            pagesReused += 1
            return true
        }

        /// Gives the spool the name `path`, with the directory of its pages: the next run's
        /// ``CatalogPageCache``. Nothing happens when the spool cannot be named or written.
        ///
        /// When every page was reused from `previous` and it has no other page, it already says
        /// all this: it is kept, and nothing is written.
        func persist(as path: String, key: RecordDigest, previous: CatalogPageCache?) {
            guard let spool, spool.linkable else { return }
            if let previous, pagesReused == directory.count, previous.pageCount == directory.count { return }
            try? spool.persist(trailer: CatalogPageCache.trailer(key: key, tables: spool.tablesNow, pages: directory), as: path)
        }

        /// The catalog, taking the exercises out of the assembler. They are sorted here, once the
        /// array has no other owner, so in place (Catalog's init then finds them in order): a
        /// `consuming` method would sort a copy when the assembler is captured by a closure.
        mutating func catalog(pages: Int) throws(CatalogError) -> Catalog {
            if let spool {
                var list: [ExerciseSlot] = []
                swap(&list, &slots)
                if !inOrder {
                    do { try sortSlots(&list, spool: spool) } catch { throw .spool(error) }
                }
                return Catalog(sorted: ExerciseList(spool: sorted ?? spool, slots: list), rejected: rejected,
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
        /// over the catalog reads the spool straight through. Only the ids are held, in one buffer,
        /// for the sort, with four bytes of order each; the slots are replaced, not copied beside.
        private mutating func sortSlots(_ slots: inout [ExerciseSlot], spool: RecordSpool) throws(FileSystemError) {
            let ids = spool.ids(at: slots)
            var order = (0..<Int32(slots.count)).map { $0 }
            order.sort { a, b in
                let order = ids.compare(Int(a), Int(b))
                return order < 0 || (order == 0 && a < b)
            }
            var sorted: [ExerciseSlot] = []
            sorted.reserveCapacity(slots.count)
            var previous: Int?
            for index in order.lazy.map(Int.init) {
                if let previous, ids.compare(previous, index) == 0 {
                    duplicates.insert(ids[index])
                    continue
                }
                sorted.append(slots[index])
                previous = index
            }
            slots = []
            order = []
            // Into a spool of their own: this one, as the pages wrote it, is the next run's page cache.
            try spool.rewrite(&sorted, into: try sortedSpool(beside: spool))
            slots = sorted
        }

        /// The spool an unsorted catalog is written again into, in id order.
        private mutating func sortedSpool(beside spool: RecordSpool) throws(FileSystemError) -> RecordSpool {
            let sorted = try RecordSpool(directory: spool.directory)
            self.sorted = sorted
            return sorted
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

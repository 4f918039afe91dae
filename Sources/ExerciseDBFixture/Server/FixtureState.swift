import Foundation

/// The server state that changes while it runs, behind one lock: the catalog (GIFs can be
/// replaced), the latency, the remaining quota and the base URL v1 `gifUrl`s point at.
///
/// ```swift
/// let state = FixtureState(catalog: catalog, configuration: configuration)
/// guard state.spendQuota() else { /* 429 monthly quota */ }
/// ```
final class FixtureState: @unchecked Sendable {  // @unchecked: every stored variable is read and written under `lock`.
    private let lock = NSLock()
    private var catalogValue: FixtureCatalog
    private var latency: Int
    private var remaining: Int?
    private var base: String?
    let quotaLimit: Int?
    /// List pages held unanswered (``FixtureServer/holdListPages(fromOffset:)``).
    let listGate = ListGate()

    init(catalog: FixtureCatalog, configuration: FixtureConfiguration) {
        catalogValue = catalog
        latency = configuration.latencyMilliseconds
        remaining = configuration.quota
        quotaLimit = configuration.quota
    }

    var catalog: FixtureCatalog {
        lock.lock()
        defer { lock.unlock() }
        return catalogValue
    }

    var latencyMilliseconds: Int {
        get {
            lock.lock()
            defer { lock.unlock() }
            return latency
        }
        set {
            lock.lock()
            latency = max(0, newValue)
            lock.unlock()
        }
    }

    /// `http://127.0.0.1:PORT` while listening.
    var baseURL: String? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return base
        }
        set {
            lock.lock()
            base = newValue
            lock.unlock()
        }
    }

    var quotaRemaining: Int? {
        lock.lock()
        defer { lock.unlock() }
        return remaining
    }

    /// Sets the requests left of the quota (a new month, or a plan upgrade); nil removes the quota.
    func setQuota(_ value: Int?) {
        lock.lock()
        remaining = value
        lock.unlock()
    }

    /// Spends one request of the quota; false when it is used up (or true with no quota).
    func spendQuota() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let left = remaining else { return true }
        guard left > 0 else { return false }
        remaining = left - 1
        return true
    }

    /// A RapidAPI list page as served: which records, and whether it is zstd-compressed.
    struct ListPageKey: Hashable {
        var range: Range<Int>
        var compressed: Bool
    }

    private var listPages: [ListPageKey: HTTPResponse] = [:]

    /// The list page for `key`, made by `make` the first time and then served as made: the
    /// records never change while the server runs (only GIFs do), and encoding and compressing a
    /// page each time made the server, not the client, the bottleneck of a 100,000-exercise catalog.
    func listPage(_ key: ListPageKey, make: () -> HTTPResponse) -> HTTPResponse {
        lock.lock()
        let cached = listPages[key]
        lock.unlock()
        if let cached { return cached }
        let made = make()
        guard made.status == 200 else { return made }
        lock.lock()
        listPages[key] = made
        lock.unlock()
        return made
    }

    private var listed: Int?
    private var reportedTotal: Int?

    /// When set, the list routes serve only the first this many exercises (an API answering half
    /// its list); nil: all of them.
    var listedCount: Int? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return listed
        }
        set {
            lock.lock()
            listed = newValue.map { max(0, $0) }
            listPages = [:]
            lock.unlock()
        }
    }

    /// When set, v1 pages say this in `metadata.totalExercises` (a lying or negative total),
    /// whatever they serve; nil: the true count.
    var v1ReportedTotal: Int? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return reportedTotal
        }
        set {
            lock.lock()
            reportedTotal = newValue
            lock.unlock()
        }
    }

    func renameExercise(id: String, to name: String) {
        lock.lock()
        catalogValue.rename(id: id, to: name)
        listPages = [:]
        lock.unlock()
    }

    func replaceGIF(id: String, with bytes: [UInt8]) {
        lock.lock()
        catalogValue.replaceGIF(id: id, with: bytes, at: HTTPDate.now())
        lock.unlock()
    }
}

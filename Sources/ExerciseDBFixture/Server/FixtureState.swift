import Foundation
import Synchronization

/// The server state that changes while it runs, behind one lock: the catalog (GIFs can be
/// replaced), the latency, the remaining quota and the base URL v1 `gifUrl`s point at.
///
/// ```swift
/// let state = FixtureState(catalog: catalog, configuration: configuration)
/// guard state.spendQuota() else { /* 429 monthly quota */ }
/// ```
final class FixtureState: Sendable {
    private struct State {
        var catalog: FixtureCatalog
        var latency: Int
        var remaining: Int?
        var base: String?
        var listPages: [ListPageKey: HTTPResponse] = [:]
        var listed: Int?
        var reportedTotal: Int?
        var listFault: ListFault?
    }

    private let state: Mutex<State>
    let quotaLimit: Int?
    /// List pages held unanswered (``FixtureServer/holdListPages(fromOffset:)``).
    let listGate = ListGate()
    /// GIF requests held unanswered (``FixtureServer/holdImages(_:)``).
    let imageGate = ImageGate()

    init(catalog: FixtureCatalog, configuration: FixtureConfiguration) {
        state = Mutex(
            State(
                catalog: catalog, latency: configuration.latencyMilliseconds, remaining: configuration.quota,
                listFault: configuration.listFault))
        quotaLimit = configuration.quota
    }

    var catalog: FixtureCatalog { state.withLock { $0.catalog } }

    var latencyMilliseconds: Int {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = max(0, newValue) } }
    }

    /// `http://127.0.0.1:PORT` while listening.
    var baseURL: String? {
        get { state.withLock { $0.base } }
        set { state.withLock { $0.base = newValue } }
    }

    var quotaRemaining: Int? { state.withLock { $0.remaining } }

    /// Sets the requests left of the quota (a new month, or a plan upgrade); nil removes the quota.
    func setQuota(_ value: Int?) {
        state.withLock { $0.remaining = value }
    }

    /// Spends one request of the quota; false when it is used up (or true with no quota).
    func spendQuota() -> Bool {
        state.withLock { state in
            guard let left = state.remaining else { return true }
            guard left > 0 else { return false }
            state.remaining = left - 1
            return true
        }
    }

    /// A RapidAPI list page as served: which records, and whether it is zstd-compressed.
    struct ListPageKey: Hashable {
        var range: Range<Int>
        var compressed: Bool
    }

    /// The list page for `key`, made by `make` the first time and then served as made: the
    /// records never change while the server runs (only GIFs do), and encoding and compressing a
    /// page each time made the server, not the client, the bottleneck of a 100,000-exercise catalog.
    func listPage(_ key: ListPageKey, make: () -> HTTPResponse) -> HTTPResponse {
        if let cached = state.withLock({ $0.listPages[key] }) { return cached }
        let made = make()
        guard made.status == 200 else { return made }
        state.withLock { $0.listPages[key] = made }
        return made
    }

    /// When set, the list routes serve only the first this many exercises (an API answering half
    /// its list); nil: all of them.
    var listedCount: Int? {
        get { state.withLock { $0.listed } }
        set {
            state.withLock { state in
                state.listed = newValue.map { max(0, $0) }
                state.listPages = [:]
            }
        }
    }

    /// The RapidAPI list route's fault (``FixtureConfiguration/listFault`` to begin with); nil: none.
    var listFault: ListFault? {
        get { state.withLock { $0.listFault } }
        set { state.withLock { $0.listFault = newValue } }
    }

    /// When set, v1 pages say this in `metadata.totalExercises` (a lying or negative total),
    /// whatever they serve; nil: the true count.
    var v1ReportedTotal: Int? {
        get { state.withLock { $0.reportedTotal } }
        set { state.withLock { $0.reportedTotal = newValue } }
    }

    func renameExercise(id: String, to name: String) {
        state.withLock { state in
            state.catalog.rename(id: id, to: name)
            state.listPages = [:]
        }
    }

    func replaceGIF(id: String, with bytes: [UInt8]) {
        state.withLock { $0.catalog.replaceGIF(id: id, with: bytes, at: HTTPDate.now()) }
    }

    func replaceGIF(id: String, resolution: Int, with bytes: [UInt8]) {
        state.withLock { $0.catalog.replaceGIF(id: id, resolution: resolution, with: bytes, at: HTTPDate.now()) }
    }
}

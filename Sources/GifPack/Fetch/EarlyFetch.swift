import Foundation
import Synchronization

/// What the catalog's pages hand the fetch while the list still arrives: the exercises of each page
/// as it is assembled, and the list requests sent and still running.
///
/// The pager tells it of every list request (``requestSent()``) and of the pages it waits for
/// (``pageStarted()``, ``pageEnded()``), the collector of every page assembled in order
/// (``offer(_:)``). The early fetch (``EarlyFetch``) reads it: its GIF
/// requests take only the slots no list request needs (pages first), and it sends no more GIF
/// requests than list requests were sent (the bound on what a build stopped by a catalog check has
/// spent on GIFs: see docs/ARCHITECTURE.md, "Fetching while the list arrives").
///
/// ```swift
/// let feed = EarlyFeed(cap: 3, governor: governor, wants: { plan.wants($0) })
/// feed.pageStarted(slots: feed.cap); feed.requestSent(); feed.offer(firstPageExercises)
/// feed.pageStarted(); feed.requestSent()  // the next page, asked for before the first gives its slots back
/// feed.pageEnded(slots: feed.cap)
/// ```
final class EarlyFeed: Sendable {
    private struct State {
        var waiting: [Exercise] = []
        /// Ids ever offered (the first of a duplicate id is the catalog's: later ones are not taken).
        var offered: Set<String> = []
        var pagesRunning = 0
        var pagesRequested = 0
        var closed = false
        var version = 0
        var wakers: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaker = 0
    }

    /// At most this many exercises are ever taken early (their ids are remembered until the fetch
    /// proper starts); the rest wait for the whole list as before.
    static let maxExercises = 1024

    private let state = Mutex(State())
    /// The window's cap: list and GIF requests share it.
    let cap: Int
    private let governor: FetchGovernor
    /// Whether some pack of the first resolution takes the exercise (its selector, per exercise).
    private let wants: @Sendable (Exercise) -> Bool

    init(cap: Int, governor: FetchGovernor, wants: @escaping @Sendable (Exercise) -> Bool) {
        (self.cap, self.governor, self.wants) = (cap, governor, wants)
    }

    /// A list request (a page's attempt) is about to be sent: it counts against the run's requests
    /// (`max_requests`) and raises the early fetch's allowance by one.
    func requestSent() {
        governor.countRequestSent()
        change { $0.pagesRequested += 1 }
    }

    /// A page is asked for: it holds `slots` of the window (one; the list's first page all of
    /// them) until ``pageEnded(slots:)``.
    func pageStarted(slots: Int = 1) {
        guard slots > 0 else { return }
        change { $0.pagesRunning += slots }
    }

    /// A page was taken into the list (the first: the pages after it were asked for), giving back
    /// the slots it held.
    func pageEnded(slots: Int = 1) {
        guard slots > 0 else { return }
        change { $0.pagesRunning -= slots }
    }

    /// A page's exercises, assembled in the list's order: the wanted ones wait for the early fetch
    /// (up to ``EarlyQueue/planBatch`` at a time; the others are left to the fetch proper).
    func offer(_ exercises: some Sequence<Exercise>) {
        let taken = exercises.filter(wants)
        guard !taken.isEmpty else { return }
        change { state in
            guard !state.closed else { return }
            // At most a planning batch waits: the allowance is small, and an exercise holds its record.
            for exercise in taken where state.offered.count < Self.maxExercises && state.waiting.count < EarlyQueue.planBatch {
                if state.offered.insert(exercise.id).inserted { state.waiting.append(exercise) }
            }
        }
    }

    /// No more exercises are taken, and the early fetch ends once its requests in flight are back.
    func close() { change { $0.closed = true } }

    var isClosed: Bool { state.withLock { $0.closed } }
    var version: Int { state.withLock { $0.version } }
    /// Slots the list requests leave to GIF requests.
    var freeSlots: Int { state.withLock { max(0, cap - $0.pagesRunning) } }
    /// GIF requests the early fetch may have sent so far: as many as list requests were.
    var allowance: Int { state.withLock { $0.pagesRequested } }

    /// Up to `count` exercises that wait, in the list's order.
    func take(_ count: Int) -> [Exercise] {
        state.withLock { state in
            let taken = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(taken.count)
            return taken
        }
    }

    /// Returns once anything changed after `version` (or the task is cancelled).
    func changed(after version: Int) async {
        let token = state.withLock { state -> Int in
            defer { state.nextWaker += 1 }
            return state.nextWaker
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.version != version || Task.isCancelled { return true }
                    state.wakers[token] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.wakers.removeValue(forKey: token) }?.resume()
        }
    }

    private func change(_ body: (inout State) -> Void) {
        let wakers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            body(&state)
            state.version += 1
            defer { state.wakers = [:] }
            return Array(state.wakers.values)
        }
        wakers.forEach { $0.resume() }
    }
}

/// The ids of the exercises the early fetch settled (planned as fresh or known missing, or sent):
/// the fetch proper passes over them, their results already in the shared processor.
final class EarlySettled: Sendable {
    private let ids = Mutex(Set<String>())

    func insert(_ id: String) { ids.withLock { _ = $0.insert(id) } }
    func remove(_ id: String) { ids.withLock { _ = $0.remove(id) } }
    func contains(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }
    var count: Int { ids.withLock { $0.count } }
}

/// The early fetch's work: the exercises the feed holds, planned a few at a time, sent while the
/// feed allows (free slots, allowance) and until it is closed; its retries are left to the fetch proper.
struct EarlyQueue: FetchWork {
    let feed: EarlyFeed
    private var upcoming: [FetchWorkItem] = []
    private var retries: [FetchWorkItem] = []
    private var sent = 0
    static let planBatch = 32

    init(feed: EarlyFeed) { self.feed = feed }

    var exhausted: Bool { feed.isClosed }
    var nextRetry: ContinuousClock.Instant? { nil }
    var changeVersion: Int? { feed.version }

    func limit(window: Int, cap: Int) -> Int { min(window, feed.freeSlots) }

    func changed(after version: Int) async { await feed.changed(after: version) }

    mutating func next(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> FetchWorkItem? {
        guard !feed.isClosed, sent < feed.allowance else { return nil }
        while upcoming.isEmpty {
            let batch = feed.take(Self.planBatch)
            guard !batch.isEmpty else { return nil }
            await fetcher.processor.waitForBacklog()
            let items = try await fetcher.plan(batch[...])
            let requested = Set(items.map(\.exercise.id))
            for exercise in batch where !requested.contains(exercise.id) { fetcher.early.insert(exercise.id) }
            upcoming = items.reversed()
        }
        let item = upcoming.removeLast()
        sent += 1
        fetcher.early.insert(item.exercise.id)
        return item
    }

    mutating func putBack(_ item: FetchWorkItem) {
        sent -= 1
        retry(item)
    }

    /// Retried (or turned away) early: left to the fetch proper, which asks again from the first attempt.
    mutating func retry(_ item: FetchWorkItem) { retries.append(item) }

    /// What the early fetch leaves to the fetch proper: it forgets those ids.
    func handBack(to fetcher: GIFFetcher) {
        for item in upcoming + retries { fetcher.early.remove(item.exercise.id) }
    }
}

/// GIF requests sent while the catalog's pages still arrive (issue 37): the first resolution's
/// fetcher, fed by ``EarlyFeed``, runs beside the catalog stage and until the fetch stage starts;
/// ``finish()`` closes the feed and waits for the requests in flight, and the fetch stage then
/// passes over what it settled (``EarlySettled``). A build the catalog checks stop calls ``finish()``
/// too: what was fetched is kept in the cache and state for the next run.
final class EarlyFetch: Sendable {
    let feed: EarlyFeed
    let fetcher: GIFFetcher
    private let task: Task<Void, Never>

    init(fetcher: GIFFetcher, feed: EarlyFeed) {
        (self.fetcher, self.feed) = (fetcher, feed)
        fetcher.processor.holdNotifications()
        task = Task { [fetcher, feed] in
            let (queue, _) = await fetcher.send(EarlyQueue(feed: feed))
            // A state that cannot be read is the fetch proper's to report: it plans again.
            queue.handBack(to: fetcher)
        }
    }

    /// Closes the feed and returns once the early requests are back and handed over.
    func finish() async {
        feed.close()
        // A cancelled build does not wait for the early requests in flight: they are cancelled too.
        await withTaskCancellationHandler { await task.value } onCancel: { [task] in task.cancel() }
    }
}

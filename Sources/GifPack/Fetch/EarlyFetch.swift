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
/// spent on GIFs: see docs/ARCHITECTURE.md, "Fetching while the list arrives"). Once the list is
/// whole and checked the fetch stage releases it (``release(settling:)``: no more offers, no
/// allowance) and hands its plan over (``handOver(_:)``) to the same window.
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
        var released = false
        /// The fetch stage's plan, until the early fetch's window takes it.
        var handed: FetchQueue?
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
    /// A rebuild (the state remembers the last catalog, whose size the pages are asked for by):
    /// while the list arrives only revalidations go out, conditional requests for GIFs the cache
    /// holds. A GIF the cache does not hold (an exercise new since the last catalog, or made up by
    /// an endless list) is asked for once the list is whole and checked.
    let revalidationsOnly: Bool

    init(cap: Int, governor: FetchGovernor, revalidationsOnly: Bool = false, wants: @escaping @Sendable (Exercise) -> Bool) {
        (self.cap, self.governor, self.revalidationsOnly, self.wants) = (cap, governor, revalidationsOnly, wants)
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
            guard !state.closed, !state.released else { return }
            // At most a planning batch waits: the allowance is small, and an exercise holds its record.
            for exercise in taken where state.offered.count < Self.maxExercises && state.waiting.count < EarlyQueue.planBatch {
                if state.offered.insert(exercise.id).inserted { state.waiting.append(exercise) }
            }
        }
    }

    /// No more exercises are taken or sent, and the early fetch ends once its requests in flight
    /// are back (a list or a check that failed, or the fetch stage's own failure).
    func close() { change { $0.closed = true } }

    /// The list is whole and checked (the fetch stage starts): no more offers, and what waits is
    /// the early fetch's to send, without its allowance. The ids waiting go into `settled` with
    /// those taken already, so the fetch stage's plan passes over every one the early fetch holds.
    func release(settling settled: EarlySettled) {
        change { state in
            state.released = true
            for exercise in state.waiting { settled.insert(exercise.id) }
        }
    }

    /// The fetch stage's plan, for the early fetch's window to send after what it holds: one
    /// window across the hand-over.
    func handOver(_ queue: FetchQueue) { change { $0.handed = queue } }

    /// The plan handed over, once (nil before ``handOver(_:)`` and after).
    func takeHanded() -> FetchQueue? {
        state.withLock { state in
            defer { state.handed = nil }
            return state.handed
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }
    var isReleased: Bool { state.withLock { $0.released } }
    var hasWaiting: Bool { state.withLock { !$0.waiting.isEmpty } }
    var version: Int { state.withLock { $0.version } }
    /// Slots the list requests leave to GIF requests.
    var freeSlots: Int { state.withLock { max(0, cap - $0.pagesRunning) } }
    /// GIF requests the early fetch may have sent so far: as many as list requests were.
    var allowance: Int { state.withLock { $0.pagesRequested } }

    /// Up to `count` exercises that wait, in the list's order, their ids put into `settled` (the
    /// fetch stage's plan passes over them) before they leave the feed.
    func take(_ count: Int, settling settled: EarlySettled) -> [Exercise] {
        state.withLock { state in
            let taken = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(taken.count)
            for exercise in taken { settled.insert(exercise.id) }
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

/// The ids of the exercises the early fetch holds (taken from the feed, or waiting when the list
/// was released) or settled (planned as fresh or known missing, or sent): the fetch stage's plan
/// passes over them, their results in the shared processor.
final class EarlySettled: Sendable {
    private let ids = Mutex(Set<String>())
    private let planned = Mutex(0)

    func insert(_ id: String) { ids.withLock { _ = $0.insert(id) } }
    func contains(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }
    var count: Int { ids.withLock { $0.count } }

    /// Counts exercises the early fetch planned as fresh or known missing: not asked for.
    func noteNotAsked(_ count: Int) { planned.withLock { $0 += count } }
    /// The exercises the early fetch asks for (or will, those it holds unplanned counted as such).
    var toRequest: Int { count - planned.withLock { $0 } }
}

/// The early fetch's work, and after the hand-over the fetch stage's too, in one window.
///
/// While the list arrives: the exercises the feed holds, planned a few at a time, sent while the
/// feed allows (free slots, allowance), retries included. Once released (the list whole and
/// checked): what it holds, without the allowance, then the plan handed over (``FetchQueue``),
/// every retry kept here with its `notBefore`. The requests in flight at the hand-over stay in the
/// same task group, so the window is counted once and a slot an early request frees is refilled
/// from the plan at once.
struct EarlyQueue: FetchWork {
    let feed: EarlyFeed
    private var upcoming: [FetchWorkItem] = []
    private var retries: [FetchWorkItem] = []
    /// On a rebuild, requests for GIFs the cache does not hold, planned while the list arrived:
    /// sent once it is released (``EarlyFeed/revalidationsOnly``), never if it fails.
    private var deferred: [FetchWorkItem] = []
    private var sent = 0
    /// The fetch stage's plan, once taken from the feed.
    private var rest: FetchQueue?
    static let planBatch = 32

    init(feed: EarlyFeed) { self.feed = feed }

    /// Closed: nothing more is sent. Released: done once what it holds and the plan handed over are.
    var exhausted: Bool {
        if feed.isClosed { return true }
        guard let rest else { return false }
        return upcoming.isEmpty && retries.isEmpty && deferred.isEmpty && !feed.hasWaiting && rest.exhausted
    }

    var nextRetry: ContinuousClock.Instant? { (retries.map(\.notBefore) + [rest?.nextRetry].compactMap { $0 }).min() }
    var changeVersion: Int? { feed.version }

    /// The slots no page needs while the list arrives; then the fetch's (``FetchQueue/limit(window:cap:)``).
    func limit(window: Int, cap: Int) -> Int {
        feed.isReleased ? (window >= cap ? window + GIFFetcher.lookahead : window) : min(window, feed.freeSlots)
    }

    func changed(after version: Int) async { await feed.changed(after: version) }

    mutating func next(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> FetchWorkItem? {
        guard !feed.isClosed else { return nil }
        let released = feed.isReleased
        guard released || sent < feed.allowance else { return nil }
        if let index = retries.lastIndex(where: { $0.notBefore <= .now }) {
            sent += 1
            return retries.remove(at: index)
        }
        if released, !deferred.isEmpty {
            upcoming = deferred.reversed() + upcoming
            deferred = []
        }
        while upcoming.isEmpty {
            let batch = feed.take(Self.planBatch, settling: fetcher.early)
            guard !batch.isEmpty else { break }
            await fetcher.processor.waitForBacklog()
            let items = try await fetcher.plan(batch[...], holding: true)
            fetcher.early.noteNotAsked(batch.count - items.count)
            if released || !feed.revalidationsOnly {
                upcoming = items.reversed()
            } else {
                upcoming = items.filter { $0.conditional != nil }.reversed()
                deferred += items.filter { $0.conditional == nil }
            }
        }
        if let item = upcoming.popLast() {
            sent += 1
            return item
        }
        guard released else { return nil }
        if rest == nil { rest = feed.takeHanded() }
        return try await rest?.next(fetcher)
    }

    mutating func putBack(_ item: FetchWorkItem) {
        sent -= 1
        if item.attempt > 1 { retries.append(item) } else { upcoming.append(item) }
    }

    /// Kept here, whoever planned it: sent at its `notBefore` (before the release, within the allowance).
    mutating func retry(_ item: FetchWorkItem) { retries.append(item) }

    /// Everything never sent: retries, what it planned or holds (planned now), then the plan handed over.
    mutating func unsent(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> [FetchWorkItem] {
        var remaining = retries + upcoming.reversed() + deferred
        (retries, upcoming, deferred) = ([], [], [])
        while true {
            let batch = feed.take(Self.planBatch, settling: fetcher.early)
            guard !batch.isEmpty else { break }
            remaining += try await fetcher.plan(batch[...], holding: true)
        }
        if rest == nil { rest = feed.takeHanded() }
        if var queue = rest {
            remaining += try await queue.unsent(fetcher)
            rest = queue
        }
        return remaining
    }
}

/// GIF requests sent while the catalog's pages still arrive: the first resolution's
/// fetcher, fed by ``EarlyFeed``, runs beside the catalog and plan stages. The fetch stage
/// releases the feed and hands its plan to the same window (``takeOver(_:)``), so the requests in
/// flight and those of the plan share one count of slots. A build the catalog checks
/// stop calls ``finish()``: what was fetched is kept in the cache and state for the next run.
final class EarlyFetch: Sendable {
    let feed: EarlyFeed
    let fetcher: GIFFetcher
    private let task: Task<(EarlyQueue, StateUnreadable?), Never>

    init(fetcher: GIFFetcher, feed: EarlyFeed) {
        (self.fetcher, self.feed) = (fetcher, feed)
        fetcher.processor.holdNotifications()
        task = Task { [fetcher, feed] in await fetcher.send(EarlyQueue(feed: feed)) }
    }

    /// Hands the fetch stage's plan to the early fetch's window and returns once it is all sent
    /// (or the build stopped): what is left, and a state that could not be read to plan more.
    func takeOver(_ queue: FetchQueue) async -> (EarlyQueue, StateUnreadable?) {
        feed.handOver(queue)
        return await value()
    }

    /// Closes the feed and returns once the requests in flight are back.
    func finish() async {
        feed.close()
        _ = await value()
    }

    /// The window's end. A cancelled build does not wait for the requests in flight: they are cancelled too.
    private func value() async -> (EarlyQueue, StateUnreadable?) {
        await withTaskCancellationHandler {
            await task.value
        } onCancel: { [task] in
            task.cancel()
        }
    }
}

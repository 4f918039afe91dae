/// Work the sliding window (``GIFFetcher/send(_:)``) sends: the fetch's plan (``FetchQueue``), or
/// the exercises of the pages that arrived so far and then the plan handed over (``EarlyQueue``).
protocol FetchWork: Sendable {
    /// No work is left (the window ends once its requests in flight are back).
    var exhausted: Bool { get }
    /// When the earliest waiting retry is due.
    var nextRetry: ContinuousClock.Instant? { get }
    /// For work that changes from outside, a number that changes with it; nil otherwise.
    var changeVersion: Int? { get }
    /// Download tasks allowed at once, with the governor's `window` and `cap`.
    func limit(window: Int, cap: Int) -> Int
    /// The next item to send now, if any.
    mutating func next(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> FetchWorkItem?
    /// An item turned away at admission.
    mutating func putBack(_ item: FetchWorkItem)
    /// An item to try again at its `notBefore`.
    mutating func retry(_ item: FetchWorkItem)
    /// Returns once the work changed after `version` (see ``changeVersion``).
    func changed(after version: Int) async
    /// After a stop: everything never sent (what is not planned yet, planned now).
    mutating func unsent(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> [FetchWorkItem]
}

/// The fetch's work in the order it goes out: retries whose time has come first, then the
/// exercises due, planned a batch at a time as the window needs more work.
///
/// Every exercise was decided once before the first request (``GIFFetcher``'s settle); those to
/// request are remembered by position in `due`, one bit each. Planning a batch reads their state
/// again (the validators of a conditional request), so memory does not grow with the catalog.
struct FetchQueue: FetchWork {
    let exercises: ExerciseList
    let due: PositionSet
    /// Where the exercises not yet planned start.
    private var planned: Int
    /// This batch's requests, reversed: exercises go out in id order.
    private var upcoming: [FetchWorkItem] = []
    private var retries: [FetchWorkItem] = []

    init(exercises: ExerciseList, due: PositionSet) {
        self.exercises = exercises
        self.due = due
        planned = exercises.startIndex
    }

    /// No work is left: every exercise planned, sent, and no retry waiting.
    var exhausted: Bool { upcoming.isEmpty && planned == exercises.endIndex && retries.isEmpty }

    /// When the earliest waiting retry is due.
    var nextRetry: ContinuousClock.Instant? { retries.map(\.notBefore).min() }

    var changeVersion: Int? { nil }

    func changed(after version: Int) async {}

    /// The window, and ``GIFFetcher/lookahead`` more queued in the HTTP client while it is whole.
    func limit(window: Int, cap: Int) -> Int { window >= cap ? window + GIFFetcher.lookahead : window }

    /// The next item to send: a retry that is due, else the plan's next (planning more if needed).
    mutating func next(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> FetchWorkItem? {
        if let index = retries.lastIndex(where: { $0.notBefore <= .now }) { return retries.remove(at: index) }
        if upcoming.isEmpty { try await refill(fetcher) }
        return upcoming.popLast()
    }

    /// An item turned away at admission: next in line again.
    mutating func putBack(_ item: FetchWorkItem) {
        if item.attempt > 1 { retries.append(item) } else { upcoming.append(item) }
    }

    /// An item to try again at its `notBefore`.
    mutating func retry(_ item: FetchWorkItem) { retries.append(item) }

    /// Plans batches until one yields a request or every exercise is planned.
    mutating func refill(_ fetcher: GIFFetcher) async throws(StateUnreadable) {
        while upcoming.isEmpty, planned < exercises.endIndex {
            let batch = try nextDue()
            guard !batch.isEmpty else { continue }
            await fetcher.processor.waitForBacklog()
            upcoming = try await fetcher.plan(batch).reversed()
        }
    }

    /// Everything never sent: retries waiting, this batch's requests, then the rest of the plan
    /// (planned now, so its fresh and known-missing exercises are recorded as usual).
    mutating func unsent(_ fetcher: GIFFetcher) async throws(StateUnreadable) -> [FetchWorkItem] {
        var remaining = retries + upcoming.reversed()
        (retries, upcoming) = ([], [])
        while planned < exercises.endIndex {
            let batch = try nextDue()
            if !batch.isEmpty { remaining += try await fetcher.plan(batch) }
        }
        return remaining
    }

    /// The next exercises to request, up to ``GIFFetcher/planBatch`` of them, from `planned` on.
    private mutating func nextDue() throws(StateUnreadable) -> ArraySlice<Exercise> {
        // The range up to the batch's last exercise is read through (a catalog spooled in id
        // order is read straight on); the exercises not due in it are passed over.
        guard let first = due.first(from: planned) else {
            planned = exercises.endIndex
            return []
        }
        var end = first
        var taken = 0
        while taken < GIFFetcher.planBatch, let next = due.first(from: end) {
            end = next + 1
            taken += 1
        }
        defer { planned = end }
        var batch: [Exercise] = []
        batch.reserveCapacity(taken)
        var read = exercises[first..<end].makeIterator()
        var position = first
        do {
            while let exercise = try read.next() {
                if due.contains(position) { batch.append(exercise) }
                position += 1
            }
        } catch { throw StateUnreadable(error) }
        return batch[...]
    }
}

import Crypto
import Foundation

extension CatalogPager {
    /// Pages through the list and normalises every record.
    ///
    /// The first page gives the effective page size (a plan may cap `limit` below `page_size`, so a
    /// page is "short" only when it is shorter than the first one). Later pages are fetched up to
    /// three at a time (``PageSchedule``): exactly as many as needed when the size is known (v1's
    /// total, or `expectedCount` from the last run), and otherwise speculatively, which can cost at
    /// most two requests past the end, on a first run only. Each page is parsed and normalised in
    /// its own task as it arrives (``PageReader``), so only compact exercises are kept, never the
    /// trees of every page; the pages are counted, checked and assembled in order, one at a time,
    /// by the ``PageCollector`` that owns that state.
    func collect(
        expectedCount: Int? = nil, records: @escaping @Sendable (JSONValue, String) throws(CatalogError) -> PageContent,
        normalise: @escaping @Sendable (JSONValue) -> Result<Exercise, CatalogRejectionReason>
    ) async throws(CatalogError) -> Catalog {
        // A page holds a slot of the early fetch's window until it is taken, and the first one holds
        // the whole window until the pages after it are asked for: pages go first, so no GIF request
        // takes a slot a page it names is about to need. A list that fails closes the early fetch:
        // no GIF request goes out between a page's answer and the error it turns out to be.
        do throws(CatalogError) {
            let budget = CatalogBudget(maxBytes: fetch.maxCatalogBytes)
            let reader = PageReader(records: records, normalise: normalise)
            let firstSlots = early?.cap ?? 0
            early?.pageStarted(slots: firstSlots)
            let first = try reader.arrive(try await page(offset: 0, budget: budget), url: pageURL(offset: 0))
            var collector = PageCollector(pager: self, reader: reader, first: first, expectedCount: expectedCount)
            try collector.take(first, offset: 0)
            if !first.isLast, first.itemCount > 0 {
                // A total the API announces (v1) only says how many pages to ask for at once: the
                // list ends where `nextPage` does (or at a short page), and a total that disagrees with
                // what the pages held is refused by the collector. Past the announced total, pages are
                // asked for one at a time, each only once the one before it said there is a next.
                let schedule = PageSchedule(step: first.itemCount, announced: first.total, known: expectedCount)
                collector = try await fetchRest(
                    schedule, into: collector, reader: reader, budget: budget,
                    firstSlots: firstSlots)
            } else {
                early?.pageEnded(slots: firstSlots)
            }
            return try collector.finish()
        } catch {
            early?.close()
            throw error
        }
    }

    /// Fetches the pages after the first, as `schedule` says, and hands each to `collector` as it
    /// arrives; the first failure cancels the pages in flight and is thrown. The first page's
    /// `firstSlots` of the early fetch's window are given back once the next pages are asked for.
    private func fetchRest(
        _ schedule: PageSchedule, into collector: PageCollector, reader: PageReader,
        budget: CatalogBudget, firstSlots: Int
    ) async throws(CatalogError) -> PageCollector {
        let outcome = await withTaskGroup(
            of: (Int, Result<ArrivedPage, CatalogError>).self,
            returning: Result<PageCollector, CatalogError>.self
        ) { group in
            var (schedule, collector) = (schedule, collector)
            // Slots of pages taken, freed once the pages after them are asked for (the first's, to begin with).
            var taken = firstSlots
            while true {
                while let offset = schedule.start() {
                    early?.pageStarted()
                    group.addTask {
                        do throws(CatalogError) {
                            return (
                                offset,
                                .success(
                                    try reader.arrive(
                                        try await page(offset: offset, budget: budget),
                                        url: pageURL(offset: offset)))
                            )
                        } catch {
                            return (offset, .failure(error))
                        }
                    }
                }
                early?.pageEnded(slots: taken)
                taken = 0
                guard schedule.running > 0, let (offset, result) = await group.next() else { break }
                schedule.finished()
                do throws(CatalogError) {
                    let page = try result.get()
                    try collector.take(page, offset: offset)
                    schedule.arrived(page, offset: offset)
                    taken += 1
                } catch {
                    group.cancelAll()
                    return .failure(error)
                }
            }
            if schedule.ranOutOfPages { return .failure(.tooManyPages(limit: Self.maxPages)) }
            return .success(collector)
        }
        return try outcome.get()
    }

    /// Turns a fetched page into one ready to assemble: its records parsed and normalised (in the
    /// page's own task), or the last run's exercises for the same body as the cache has them.
    struct PageReader: Sendable {
        let records: @Sendable (JSONValue, String) throws(CatalogError) -> PageContent
        let normalise: @Sendable (JSONValue) -> Result<Exercise, CatalogRejectionReason>

        func arrive(_ fetched: FetchedPage, url: String) throws(CatalogError) -> ArrivedPage {
            switch fetched {
            case .json(let json, let body):
                let content = try records(json, url)
                return ArrivedPage(parsed: content, normalised: content.items.map(normalise), body: body)
            case .reused(let page, let exercises, let body):
                return ArrivedPage(reused: page, exercises: exercises, body: body)
            }
        }
    }

    /// Which page offsets after the first to ask for, and when: at most three in flight, never
    /// past ``CatalogPager/maxPages``, the end once a page showed it, and (with more than one in
    /// flight) the announced total or the last run's size.
    struct PageSchedule {
        let step: Int
        let announced: Int?
        let known: Int?
        private var next: Int
        private(set) var running = 0
        /// Offset just past the last record, once known.
        private var end: Int?

        init(step: Int, announced: Int?, known: Int?) {
            (self.step, self.announced, self.known, next) = (step, announced, known, step)
        }

        /// The offset of the next page to ask for now, counted as running; nil when none is due.
        mutating func start() -> Int? {
            guard running < 3, next / step < CatalogPager.maxPages, end.map({ next < $0 }) ?? true,
                running == 0 || announced.map({ next < $0 }) ?? known.map({ next <= $0 }) ?? true
            else { return nil }
            defer { (next, running) = (next + step, running + 1) }
            return next
        }

        /// One page request came back.
        mutating func finished() { running -= 1 }

        /// A page arrived and was taken: a short page, or the one the API calls the last, ends the list.
        mutating func arrived(_ page: ArrivedPage, offset: Int) {
            if page.isLast || page.itemCount < step { end = min(end ?? .max, offset + page.itemCount) }
        }

        /// Every page up to ``CatalogPager/maxPages`` was asked for and none ended the list.
        var ranOutOfPages: Bool { next / step >= CatalogPager.maxPages && end == nil }
    }
}

import Foundation
import GifPackHTTP
import Synchronization

extension BuildPipeline {
    /// The catalog stage: the exercise list, fetched page by page into a spool in the cache, then
    /// compared with the last one (a catalog that lost more than `max_removed` allows stops the
    /// build here, before the fetch stage; the early fetch sent at most one GIF request per list
    /// request) and remembered in the state, which a recovered state is rebuilt from.
    func catalogStage(
        cache: OpenedCache, client: HTTPClient, retries: CatalogRetryCount, early: EarlyFeed,
        into report: inout BuildReport
    ) async throws -> Catalog {
        let (layout, state, expectedCount) = (cache.layout, cache.state, cache.expectedCount)
        // The records go to a spool file in the cache as pages arrive; the catalog keeps where they are.
        let spool: RecordSpool
        do { spool = try RecordSpool(directory: layout.temporaryDirectory) } catch { throw CatalogError.spool(error) }
        // Each page request is logged like a GIF's, and its retries counted.
        let catalogObserver: BuildObserver = { [observer] event in
            if case .catalogAttempt(let attempt) = event, attempt.outcome == .retry { retries.value.withLock { $0 += 1 } }
            observer?(event)
        }
        var pager = CatalogPager(source: manifest.source, fetch: manifest.fetch, client: client, expectedCount: expectedCount, spool: spool)
        pager.observer = catalogObserver
        pager.early = early
        pager.reusePages(at: layout.catalogPagesPath)
        let catalog = try await CatalogSources.make(pager).fetchCatalog()
        report.catalog = .init(
            exercises: catalog.exercises.count, pages: catalog.pagesFetched, pagesReused: catalog.pagesReused,
            rejectedRecords: catalog.rejected, duplicateIDs: catalog.duplicateIDs)
        let listLimit = options.reportListLimit
        // A catalog that lost more of the last one's exercises than max_removed allows stops here,
        // before the fetch stage, and the state keeps the last catalog to compare the next run with.
        let (maxRemoved, lastCount, count) = (manifest.fetch.maxRemoved, expectedCount, catalog.exercises.count)
        report.catalogChanges = try await BlockingWork.run {
            try state.replaceCatalog(
                each: CatalogFingerprint.fingerprints(of: catalog), digest: CatalogFingerprint.digest(of: catalog),
                listLimit: listLimit
            ) { removed in
                guard let lastCount, removed > 0, !maxRemoved.allows(missing: removed, of: lastCount) else { return }
                throw CatalogShrank(removed: removed, previous: lastCount, now: count, limit: maxRemoved)
            }
        }
        if let damaged = report.stateRecovery {
            let (indexPath, resolution, fetch) = (self.indexPath, manifest.source.resolution, manifest.fetch)
            report.stateRecovery = try await BlockingWork.run {
                var rebuilt = damaged
                try StateOpener.rebuild(
                    &rebuilt, state: state, indexPath: indexPath, catalog: catalog.exercises, layout: layout,
                    resolution: resolution, fetch: fetch)
                return rebuilt
            }
        }
        observer?(.catalogFetched(exercises: catalog.exercises.count, pages: catalog.pagesFetched))
        return catalog
    }

    /// The feed the catalog's pages fill, and the early fetch reading it: nil after a recovered
    /// state (its GIFs are rebuilt from the index once the list is in, before any is asked for).
    /// The feed counts the list requests against `max_requests` either way. On a rebuild (`rebuild`:
    /// the state remembers the last catalog) only revalidations go early (``EarlyFeed/revalidationsOnly``).
    func startEarlyFetch(tools: GIFTools, recovered: Bool, rebuild: Bool) -> (EarlyFeed, EarlyFetch?) {
        let resolution = manifest.source.resolution
        let packs = manifest.packs.filter { $0.takes(resolution) }
        let feed = EarlyFeed(
            cap: tools.governor.cap, governor: tools.governor, revalidationsOnly: rebuild,
            wants: { [recovered] exercise in !recovered && packs.contains { $0.selector.matches(exercise) } })
        return (feed, recovered ? nil : EarlyFetch(fetcher: tools.fetcher(), feed: feed))
    }

    /// The plan stage: which exercises go into which pack. A pack that would be empty is a
    /// selector that names nothing the catalog has (``EmptySelector``); a spooled catalog that
    /// cannot be read back throws ``SpoolReadError``.
    func planStage(_ catalog: Catalog, into report: inout BuildReport) throws -> PackPlan {
        let plan = try PackPlan(specs: manifest.packs, catalog: catalog)
        if let empty = try plan.emptySelector(catalog: catalog) { throw empty }
        report.gifs.wanted = plan.wanted.count
        return plan
    }
}

/// The catalog's retries, counted from its attempt events (which arrive from the pager's tasks).
final class CatalogRetryCount: Sendable {
    let value = Mutex(0)
}

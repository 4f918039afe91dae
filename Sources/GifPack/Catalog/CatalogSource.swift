import Foundation
import GifPackHTTP

/// Fetches the exercise list from one API shape. The two implementations page through
/// `GET /exercises?limit=&offset=` until a short page and turn both schemas into ``Exercise``s.
///
/// ```swift
/// let source = CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client)
/// let catalog = try await source.fetchCatalog()
/// ```
package protocol CatalogSource: Sendable {
    func fetchCatalog() async throws(CatalogError) -> Catalog
}

/// Makes the ``CatalogSource`` for a manifest's source kind.
package enum CatalogSources {
    /// `expectedCount` (the size of the last catalog, if known) lets the pages be fetched in
    /// parallel without a request past the end. With a `spool`, every page's records go to its file
    /// as the page arrives and the catalog keeps only where they are.
    /// With `pagesPath` too, pages whose bodies did not change since the run that left its
    /// ``CatalogPageCache`` there are not parsed again, and this run's spool takes its place.
    static func make(
        for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
        expectedCount: Int? = nil, spool: RecordSpool?, pagesPath: String? = nil,
        observer: BuildObserver? = nil, early: EarlyFeed? = nil
    ) -> any CatalogSource {
        var pager = CatalogPager(source: source, fetch: fetch, client: client, expectedCount: expectedCount, spool: spool)
        pager.observer = observer
        pager.early = early
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
    package static func make(
        for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
        expectedCount: Int? = nil
    ) -> any CatalogSource {
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

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
    /// parallel without a request past the end. The records stay in memory.
    package static func make(
        for source: SourceSettings, fetch: FetchSettings, client: HTTPClient,
        expectedCount: Int? = nil
    ) -> any CatalogSource {
        make(CatalogPager(source: source, fetch: fetch, client: client, expectedCount: expectedCount))
    }

    /// The source that pages with `pager`, for its source's API shape.
    static func make(_ pager: CatalogPager) -> any CatalogSource {
        switch pager.source.kind {
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

import GifPackHTTP

/// Why the catalog could not be fetched. The build stops before any image request.
package enum CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    case transport(url: String, HTTPError)
    case status(url: String, status: Int, message: String?)
    case authRejected(status: Int, environmentVariable: String?)
    case notJSON(url: String, detail: String)
    case unexpectedShape(url: String, detail: String)
    case pagingDoesNotAdvance(url: String)
    case tooManyPages(limit: Int)
    case quotaExhausted(url: String)
    /// All pages together are larger than `max_catalog_bytes`.
    case catalogTooLarge(limit: Int64)
    /// All pages together hold more records than `max_catalog_records`.
    case tooManyRecords(limit: Int)
    /// The records could not be written to (or read back from) the build's spool file in the cache.
    case spool(FileSystemError)
    /// The spool file does not read back as the exercises written there (to sort them by id).
    case spoolRead(SpoolReadError)
    /// A number the API sent (`field`, e.g. `metadata.totalExercises`) is not one gifpack can use:
    /// negative, fractional, out of range or not a number (`value`, as shown).
    case invalidNumber(url: String, field: String, value: String)
    /// v1's `metadata.totalExercises` disagrees with the records its pages held, following
    /// `nextPage` to the end: a catalog that contradicts itself is not trusted. `gifRequests`: the
    /// GIF requests sent while the list arrived (``EarlyFeed``), told once they are back.
    case totalMismatch(total: Int, seen: Int, gifRequests: Int = 0)

    package var description: String {
        switch self {
        case .transport(let url, let error): "fetching the catalog page \(url) failed: \(error.reason) (\(error))"
        case .status(let url, let status, let message):
            "catalog page \(url) answered HTTP \(status)" + (message.map { ": \($0)" } ?? "")
        case .authRejected(let status, let variable):
            "the API rejected the key (HTTP \(status))" + (variable.map { ": check the key in the environment variable \($0)" } ?? "")
        case .notJSON(let url, let detail): "catalog page \(url) is not JSON: \(detail)"
        case .unexpectedShape(let url, let detail): "catalog page \(url) does not have the expected shape: \(detail)"
        case .pagingDoesNotAdvance(let url): "catalog paging does not advance at \(url): the server returned the same page again"
        case .tooManyPages(let limit): "the catalog has more than \(limit) pages; refusing to go on"
        case .quotaExhausted(let url): "the API's monthly quota is used up (HTTP 429 at \(url))"
        case .catalogTooLarge(let limit):
            "the catalog's pages together exceed max_catalog_bytes (\(limit) bytes); refusing to go on (a catalog without end?)"
        case .tooManyRecords(let limit):
            "the catalog holds more than max_catalog_records (\(limit)) records; refusing to go on (a catalog without end?)"
        case .spool(let error): "the catalog records could not be kept in the cache: \(error)"
        case .spoolRead(let error): "\(error)"
        case .invalidNumber(let url, let field, let value):
            "catalog page \(url) says \(field) is \(value), which is not a count (a whole number from 0); refusing the catalog"
        case .totalMismatch(let total, let seen, let gifRequests):
            "the catalog says metadata.totalExercises is \(total), but its pages held \(seen) records following nextPage to the end; "
                + "refusing a catalog that contradicts itself (\(EarlyRequests.sentence(gifRequests)), no pack or index was written)"
        }
    }
}

import Synchronization

/// The bytes every page of one catalog may take together (`max_catalog_bytes`), shared by the
/// pages fetched in parallel.
final class CatalogBudget: Sendable {
    private let maxBytes: Int64
    private let used = Mutex<Int64>(0)

    init(maxBytes: Int64) { self.maxBytes = maxBytes }

    /// What a page may still take: the most one response body may be.
    var remainingBytes: Int64 { maxBytes - used.withLock { $0 } }

    /// Counts a page's bytes; false once all pages together exceed the bound.
    func spend(bytes: Int64) -> Bool {
        used.withLock { total in
            total += bytes
            return total <= maxBytes
        }
    }
}

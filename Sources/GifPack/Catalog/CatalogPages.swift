import Foundation

extension CatalogPager {
    /// What one list page holds: its records, whether the API says it is the last, and the catalog
    /// size when the API tells it (v1's `metadata.totalExercises`).
    struct PageContent: Sendable {
        var items: [JSONValue]
        var isLast: Bool
        var total: Int?
    }

    /// A page ready to be assembled: its records parsed and normalised, or the last run's
    /// exercises for the same body.
    struct ArrivedPage: Sendable {
        var itemCount: Int
        var isLast: Bool
        var total: Int?
        /// SHA-256 of the body (nil when it held the key): what the next run's cache knows it by.
        var body: RecordDigest?
        var content: Content

        enum Content: Sendable {
            case parsed(items: [JSONValue], normalised: [Result<Exercise, CatalogRejectionReason>])
            case reused(CatalogPageCache.Page, exercises: [UInt8], body: [UInt8])
        }

        init(parsed content: PageContent, normalised: [Result<Exercise, CatalogRejectionReason>], body: RecordDigest?) {
            itemCount = content.items.count
            isLast = content.isLast
            total = content.total
            self.body = body
            self.content = .parsed(items: content.items, normalised: normalised)
        }

        init(reused page: CatalogPageCache.Page, exercises: [UInt8], body: [UInt8]) {
            itemCount = page.itemCount
            isLast = page.isLast
            total = page.total
            self.body = page.body
            content = .reused(page, exercises: exercises, body: body)
        }

        /// The first record's hash when it is usable (how a page served again at the next offset is told).
        var firstRecord: RecordDigest? {
            switch content {
            case .parsed(_, let normalised):
                if case .success(let exercise)? = normalised.first { return exercise.record.sha256 }
                return nil
            case .reused(let page, _, _): return page.firstRecord
            }
        }
    }
}

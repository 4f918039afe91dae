import Foundation

/// How the catalog changed since the last run.
package struct CatalogChanges: Sendable, Equatable, Codable {
    /// The first ids added, removed and changed, in id order, at most the report's list limit
    /// each (a first build adds the whole catalog); the counts say how many there are in all.
    package var added: [String]
    package var removed: [String]
    package var changed: [String]
    package var addedCount: Int
    package var removedCount: Int
    package var changedCount: Int
    /// False on the first run (nothing to compare with).
    package var hadPrevious: Bool

    /// Counts default to the lists' lengths (lists not cut short).
    init(
        hadPrevious: Bool, added: [String], removed: [String], changed: [String],
        addedCount: Int? = nil, removedCount: Int? = nil, changedCount: Int? = nil
    ) {
        self.hadPrevious = hadPrevious
        self.added = added
        self.removed = removed
        self.changed = changed
        self.addedCount = addedCount ?? added.count
        self.removedCount = removedCount ?? removed.count
        self.changedCount = changedCount ?? changed.count
    }

    private enum CodingKeys: String, CodingKey {
        case added, removed, changed, addedCount, removedCount, changedCount, hadPrevious
    }
}

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
    init(hadPrevious: Bool, added: [String], removed: [String], changed: [String],
         addedCount: Int? = nil, removedCount: Int? = nil, changedCount: Int? = nil) {
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

    /// Reports written before the counts existed held whole lists: their lengths are the counts.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let added = try container.decode([String].self, forKey: .added)
        let removed = try container.decode([String].self, forKey: .removed)
        let changed = try container.decode([String].self, forKey: .changed)
        self.init(hadPrevious: try container.decode(Bool.self, forKey: .hadPrevious), added: added, removed: removed,
                  changed: changed, addedCount: try container.decodeIfPresent(Int.self, forKey: .addedCount),
                  removedCount: try container.decodeIfPresent(Int.self, forKey: .removedCount),
                  changedCount: try container.decodeIfPresent(Int.self, forKey: .changedCount))
    }
}

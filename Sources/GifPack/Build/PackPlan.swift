/// Which exercises go into which pack: each pack's selector applied to the catalog.
///
/// ```swift
/// let plan = PackPlan(specs: manifest.packs, catalog: catalog)
/// plan.wanted // every exercise some pack needs, fetched once each
/// ```
public struct PackPlan: Sendable, Equatable {
    /// One pack and the exercises its selector chose.
    public struct Entry: Sendable, Equatable {
        public var spec: PackSpec
        /// Sorted by id.
        public var exercises: [Exercise]
    }

    public var entries: [Entry]
    /// How many exercises the catalog had: a pack that chose them all shares the catalog's array.
    private var catalogCount: Int

    public init(specs: [PackSpec], catalog: Catalog) {
        catalogCount = catalog.exercises.count
        entries = specs.map { spec in
            // A pack of every exercise (the usual "all") keeps no copy of its own.
            if catalog.exercises.allSatisfy(spec.selector.matches) { return Entry(spec: spec, exercises: catalog.exercises) }
            return Entry(spec: spec, exercises: catalog.exercises.filter { spec.selector.matches($0) })
        }
    }

    /// Every exercise needed by at least one pack, sorted by id, each once (the catalog's own
    /// array when a pack chose them all).
    public var wanted: [Exercise] {
        if let whole = entries.first(where: { $0.exercises.count == catalogCount }) { return whole.exercises }
        var seen: Set<String> = []
        return entries.flatMap(\.exercises).filter { seen.insert($0.id).inserted }.sorted { $0.id < $1.id }
    }
}

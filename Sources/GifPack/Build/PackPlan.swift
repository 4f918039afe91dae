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

    public init(specs: [PackSpec], catalog: Catalog) {
        entries = specs.map { spec in
            Entry(spec: spec, exercises: catalog.exercises.filter { spec.selector.matches($0) })
        }
    }

    /// Every exercise needed by at least one pack, sorted by id, each once.
    public var wanted: [Exercise] {
        var seen: Set<String> = []
        return entries.flatMap(\.exercises).filter { seen.insert($0.id).inserted }.sorted { $0.id < $1.id }
    }
}

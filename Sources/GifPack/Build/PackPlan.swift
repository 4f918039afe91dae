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
        /// Sorted by id (a spooled catalog's choice stays spooled: see ``ExerciseList``).
        public var exercises: ExerciseList
    }

    public var entries: [Entry]
    /// Every exercise needed by at least one pack, sorted by id, each once (the catalog's own
    /// list when a pack chose them all).
    public var wanted: ExerciseList

    public init(specs: [PackSpec], catalog: Catalog) {
        entries = specs.map { spec in
            // A pack of every exercise (the usual "all") keeps no copy of its own.
            if spec.selector.isEmpty { return Entry(spec: spec, exercises: catalog.exercises) }
            let chosen = catalog.exercises.filtered { spec.selector.matches($0) }
            return Entry(spec: spec, exercises: chosen.count == catalog.exercises.count ? catalog.exercises : chosen)
        }
        if let whole = entries.first(where: { $0.exercises.count == catalog.exercises.count }) {
            wanted = whole.exercises
        } else if entries.count == 1 {
            wanted = entries[0].exercises
        } else {
            wanted = catalog.exercises.filtered { exercise in specs.contains { $0.selector.matches(exercise) } }
        }
    }
}

/// Which exercises go into which pack: each pack's selector applied to the catalog.
///
/// ```swift
/// let plan = try PackPlan(specs: manifest.packs, catalog: catalog)
/// plan.wanted // every exercise some pack needs, fetched once each
/// ```
package struct PackPlan: Sendable {
    /// One pack and the exercises its selector chose.
    package struct Entry: Sendable {
        package var spec: PackSpec
        /// Sorted by id (a spooled catalog's choice stays spooled: see ``ExerciseList``).
        package var exercises: ExerciseList
    }

    package var entries: [Entry]
    /// Every exercise needed by at least one pack, sorted by id, each once (the catalog's own
    /// list when a pack chose them all).
    package var wanted: ExerciseList

    init(entries: [Entry], wanted: ExerciseList) {
        self.entries = entries
        self.wanted = wanted
    }

    /// Throws ``SpoolReadError`` when the spooled catalog cannot be read back.
    package init(specs: [PackSpec], catalog: Catalog) throws {
        entries = try specs.map { spec in
            // A pack of every exercise (the usual "all") keeps no copy of its own.
            if spec.selector.isEmpty { return Entry(spec: spec, exercises: catalog.exercises) }
            let chosen = try catalog.exercises.filtered { spec.selector.matches($0) }
            return Entry(spec: spec, exercises: chosen.count == catalog.exercises.count ? catalog.exercises : chosen)
        }
        if let whole = entries.first(where: { $0.exercises.count == catalog.exercises.count }) {
            wanted = whole.exercises
        } else if entries.count == 1 {
            wanted = entries[0].exercises
        } else {
            wanted = try catalog.exercises.filtered { exercise in specs.contains { $0.selector.matches(exercise) } }
        }
    }
}

extension PackPlan {
    /// The first pack whose selector chooses no exercise of `catalog` (a pack with no selector,
    /// which takes the whole catalog, never counts), with what the catalog has instead; nil when
    /// every pack has exercises. The plan's entries are in the manifest's order.
    package func emptySelector(catalog: Catalog) throws -> EmptySelector? {
        let empty = entries.indices.filter { entries[$0].exercises.isEmpty && !entries[$0].spec.selector.isEmpty }
        guard let index = empty.first else { return nil }
        let selector = entries[index].spec.selector
        let asked = SelectorField.allCases.filter { !$0.wanted(in: selector).isEmpty }
        // Which fields match some exercise on their own: one pass over the catalog.
        let alone = asked.map { field in field.only(selector) }
        var matched = [Bool](repeating: false, count: asked.count)
        var exercises = catalog.exercises.makeIterator()
        while matched.contains(false), let exercise = try exercises.next() {
            for (position, single) in alone.enumerated() where !matched[position] && single.matches(exercise) {
                matched[position] = true
            }
        }
        let unmatched = zip(asked, matched).filter { !$0.1 }.map { EmptySelector.Field(field: $0.0, wanted: $0.0.wanted(in: selector)) }
        var error = EmptySelector(
            pack: entries[index].spec.name, path: "packs[\(index)].selector", unmatched: unmatched,
            combination: unmatched.isEmpty ? asked.map { .init(field: $0, wanted: $0.wanted(in: selector)) } : [],
            suggestionsField: nil, suggestions: [], moreValues: 0, catalogSize: catalog.exercises.count,
            otherEmptyPacks: empty.dropFirst().map { entries[$0].spec.name })
        func suggest(_ field: SelectorField, among exercises: ExerciseList) throws {
            let nearest = CatalogValues.nearest(
                to: field.wanted(in: selector),
                among: try CatalogValues.counts(of: field, in: exercises))
            error.suggestionsField = field
            error.suggestions = Array(nearest.prefix(EmptySelector.shown))
            error.moreValues = max(0, nearest.count - EmptySelector.shown)
        }
        if let first = unmatched.first {
            try suggest(first.field, among: catalog.exercises)
        } else {
            // Each field matches on its own: the values of one field among what the others choose.
            for field in asked.reversed() {
                let others = field.clearing(selector)
                let chosen = try catalog.exercises.filtered { others.matches($0) }
                if !chosen.isEmpty {
                    try suggest(field, among: chosen)
                    break
                }
            }
        }
        return error
    }
}

extension SelectorField {
    /// A selector asking only what `selector` asks of this field.
    func only(_ selector: Selector) -> Selector {
        var single = Selector()
        switch self {
        case .bodyPart: single.bodyParts = selector.bodyParts
        case .equipment: single.equipment = selector.equipment
        case .target: single.targets = selector.targets
        case .ids: single.ids = selector.ids
        }
        return single
    }
}

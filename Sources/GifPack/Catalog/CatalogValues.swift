import GifPackFormat

/// A field a pack's selector chooses by, under its manifest name.
///
/// ```swift
/// SelectorField.bodyPart.values(of: exercise)   // ["waist"]
/// ```
package enum SelectorField: String, Sendable, CaseIterable {
    case bodyPart
    case equipment
    case target
    case ids

    /// The exercise's values of this field (its id, for `ids`).
    package func values(of exercise: Exercise) -> [String] {
        switch self {
        case .bodyPart: exercise.bodyParts
        case .equipment: exercise.equipment
        case .target: exercise.targets
        case .ids: [exercise.id]
        }
    }

    /// What `selector` asks of this field (empty: anything).
    package func wanted(in selector: Selector) -> [String] {
        switch self {
        case .bodyPart: selector.bodyParts
        case .equipment: selector.equipment
        case .target: selector.targets
        case .ids: selector.ids
        }
    }

    /// `selector` asking nothing of this field.
    func clearing(_ selector: Selector) -> Selector {
        var selector = selector
        switch self {
        case .bodyPart: selector.bodyParts = []
        case .equipment: selector.equipment = []
        case .target: selector.targets = []
        case .ids: selector.ids = []
        }
        return selector
    }
}

/// One value of a field and how many exercises have it.
package struct ValueCount: Sendable, Equatable, Codable {
    package var value: String
    package var count: Int

    package init(value: String, count: Int) {
        self.value = value
        self.count = count
    }
}

/// The values a catalog has for a field, with counts: what `gifpack catalog --values` prints, and
/// what an empty selector's refusal suggests (nearest to what was asked first).
///
/// ```swift
/// for entry in try CatalogValues.counts(of: .bodyPart, in: catalog.exercises) { print(entry.value, entry.count) }
/// ```
package enum CatalogValues {
    /// Each distinct value of `field` among `exercises` (as the catalog spells it), with how many
    /// exercises have it: by count, most first, then by value.
    package static func counts(of field: SelectorField, in exercises: ExerciseList) throws(SpoolReadError) -> [ValueCount] {
        var counts: [String: Int] = [:]
        var iterator = exercises.makeIterator()
        while let exercise = try iterator.next() {
            for value in Set(field.values(of: exercise)) { counts[value, default: 0] += 1 }
        }
        return counts.map { ValueCount(value: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.value < $1.value }
    }

    /// `counts` ordered by how near each value is to one of `wanted` (case-insensitively): values
    /// containing one (or contained in one) first, then those sharing its first three letters, each
    /// group by edit distance, then by count and value.
    package static func nearest(to wanted: [String], among counts: [ValueCount]) -> [ValueCount] {
        let asked = wanted.map { Array($0.lowercased().prefix(Self.compared)) }
        func closeness(_ entry: ValueCount) -> (Int, Int) {
            let value = Array(entry.value.lowercased().prefix(Self.compared))
            var best = (3, Int.max)
            for wish in asked where !wish.isEmpty && !value.isEmpty {
                let group =
                    value.contains(wish) || wish.contains(value)
                    ? 0
                    : zip(value, wish).prefix { $0 == $1 }.count >= 3 ? 1 : 2
                let distance = EditDistance.between(String(wish), String(value))
                if (group, distance) < best { best = (group, distance) }
            }
            return best
        }
        return counts.map { ($0, closeness($0)) }
            .sorted { a, b in
                if a.1 != b.1 { return a.1 < b.1 }
                if a.0.count != b.0.count { return a.0.count > b.0.count }
                return a.0.value < b.0.value
            }
            .map(\.0)
    }

    /// Characters of a value compared (a catalog value may be long; names of body parts are not).
    static let compared = 120
}

/// Levenshtein distance (case-insensitive), for suggesting what the user probably meant: a
/// subcommand, a selector value.
package enum EditDistance {
    package static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// A pack whose selector chooses no exercise of the catalog. Making it would give apps an empty pack
/// (a misspelt `bodyPart: legs` where the catalog says `upper legs`), so the build stops before any
/// GIF request, with exit status 2, naming the pack, the field and the values the catalog has.
///
/// ```swift
/// if let empty = try plan.emptySelector(catalog: catalog) { print(empty) }
/// ```
package struct EmptySelector: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pack, and where its selector is in the manifest (`packs[1].selector`).
    package var pack: String
    package var path: String
    /// The fields that match nothing on their own, with what they ask; empty when each matches
    /// some exercise but not together.
    package var unmatched: [Field]
    /// What the whole selector asks, when it is the combination that matches nothing.
    package var combination: [Field]
    /// The field the suggestions are values of, and those values, nearest to what was asked first
    /// (for a combination: among the exercises the selector's other fields choose).
    package var suggestionsField: SelectorField?
    package var suggestions: [ValueCount]
    /// How many more values the field has than are suggested.
    package var moreValues: Int
    package var catalogSize: Int
    /// Other packs that choose nothing either.
    package var otherEmptyPacks: [String]
    /// GIF requests sent while the list arrived, before the plan found the empty selector (``EarlyFeed``).
    package var gifRequests = 0

    package struct Field: Sendable, Equatable {
        package var field: SelectorField
        package var wanted: [String]
    }

    /// Values shown in the message.
    package static let shown = 8

    package var description: String {
        func quoted(_ values: [String]) -> String {
            "[" + values.prefix(10).map { TerminalText.escaped($0, maxScalars: 60) }.joined(separator: ", ")
                + (values.count > 10 ? ", …" : "") + "]"
        }
        var text = "pack \"\(pack)\" selects no exercise: "
        if !unmatched.isEmpty {
            text += unmatched.map { "\(path).\($0.field.rawValue) \(quoted($0.wanted))" }.joined(separator: " and ")
            text += (unmatched.count == 1 ? " matches" : " match") + " none of the catalog's \(catalogSize) exercises"
        } else {
            text +=
                "\(path) " + combination.map { "\($0.field.rawValue) \(quoted($0.wanted))" }.joined(separator: " and ")
                + " match no exercise together (each matches some on its own)"
        }
        if let field = suggestionsField {
            if suggestions.isEmpty {
                text += "; the catalog has no \(field.rawValue) value"
            } else {
                let intro =
                    unmatched.isEmpty
                    ? "; among the exercises the selector's other fields choose, the \(field.rawValue) values are:"
                    : "; the catalog's \(field.rawValue) values, nearest first:"
                text +=
                    "\(intro) "
                    + suggestions.map { "\(TerminalText.escaped($0.value, maxScalars: 60)) (\($0.count))" }
                    .joined(separator: ", ")
                if moreValues > 0 { text += " and \(moreValues) more" }
            }
            if field != .ids { text += " (gifpack catalog --values \(field.rawValue) lists them all with counts)" }
        }
        if !otherEmptyPacks.isEmpty {
            text += "; pack(s) \(otherEmptyPacks.map { "\"\($0)\"" }.joined(separator: ", ")) select no exercise either"
        }
        return text + "; \(EarlyRequests.sentence(gifRequests)) and no pack or index was written"
    }
}

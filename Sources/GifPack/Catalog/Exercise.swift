import Foundation

/// One exercise from either API shape, normalised: the fields selectors use, where its GIF is, and
/// the raw record for the pack. Its `id` has been validated (``ExerciseID``).
///
/// ```swift
/// let squat = Exercise(id: "0001", name: "3/4 sit-up", bodyParts: ["waist"], equipment: ["body weight"],
///                      targets: ["abs"], imageURL: "https://…/image?exerciseId=0001&resolution=180", raw: .null)
/// ```
public struct Exercise: Sendable, Equatable {
    public var id: String
    public var name: String
    public var bodyParts: [String]
    public var equipment: [String]
    public var targets: [String]
    public var imageURL: String
    /// The API's record as canonical JSON bytes (sorted keys, compact): a few hundred bytes to keep
    /// per exercise instead of a tree of values.
    public var record: RawRecord

    public init(id: String, name: String, bodyParts: [String], equipment: [String], targets: [String],
                imageURL: String, raw: JSONValue) {
        self.id = id
        self.name = name
        self.bodyParts = bodyParts
        self.equipment = equipment
        self.targets = targets
        self.imageURL = imageURL
        self.record = RawRecord(raw)
    }
}

/// A JSON value stored as its canonical bytes (sorted keys, compact, slashes unescaped), ready to be
/// copied verbatim into a pack's `catalog.json`.
public struct RawRecord: Sendable, Equatable {
    public let canonicalJSON: [UInt8]

    public init(_ value: JSONValue) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        canonicalJSON = (try? encoder.encode(value)).map { [UInt8]($0) } ?? Array("null".utf8)
    }
}

/// A catalog as fetched: the usable exercises, sorted by id, and what was refused.
public struct Catalog: Sendable, Equatable {
    public var exercises: [Exercise]
    /// Records refused (bad id, missing fields, bad GIF URL), with why.
    public var rejected: [CatalogRejection]
    /// Ids that appeared more than once; the first record was kept.
    public var duplicateIDs: [String]
    public var pagesFetched: Int

    public init(exercises: [Exercise], rejected: [CatalogRejection], duplicateIDs: [String], pagesFetched: Int) {
        self.exercises = exercises.sorted { $0.id < $1.id }
        self.rejected = rejected
        self.duplicateIDs = duplicateIDs
        self.pagesFetched = pagesFetched
    }
}

/// A catalog record that was refused. `id` is shown escaped, never used as a path.
public struct CatalogRejection: Sendable, Equatable, Codable {
    public var position: Int
    public var id: String?
    public var reason: String
}

extension Selector {
    /// True when the exercise matches every non-empty list of the selector.
    public func matches(_ exercise: Exercise) -> Bool {
        func any(_ wanted: [String], _ values: [String]) -> Bool {
            wanted.isEmpty || values.contains { value in wanted.contains { $0.caseInsensitiveCompare(value) == .orderedSame } }
        }
        return any(bodyParts, exercise.bodyParts) && any(equipment, exercise.equipment)
            && any(targets, exercise.targets) && (ids.isEmpty || ids.contains(exercise.id))
    }
}

import Foundation

/// One exercise from either API shape, normalised: the fields selectors use, where its GIF is, and
/// the raw record for the pack. Its `id` has been validated (``ExerciseID``).
///
/// ```swift
/// let squat = try Exercise(id: "0001", name: "3/4 sit-up", bodyParts: ["waist"], equipment: ["body weight"],
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

    /// Throws when `raw` has no canonical JSON form (a non-finite number).
    public init(id: String, name: String, bodyParts: [String], equipment: [String], targets: [String],
                imageURL: String, raw: JSONValue) throws(CanonicalJSON.EncodingError) {
        self.id = id
        self.name = name
        self.bodyParts = bodyParts
        self.equipment = equipment
        self.targets = targets
        self.imageURL = imageURL
        self.record = try RawRecord(raw)
    }
}

/// A JSON value stored as its canonical bytes (``CanonicalJSON``), ready to be copied verbatim into a
/// pack's `catalog.json`.
///
/// ```swift
/// let record = try RawRecord(.object(["id": .string("0001")]))   // canonicalJSON: {"id":"0001"}
/// ```
public struct RawRecord: Sendable, Equatable {
    public let canonicalJSON: [UInt8]

    /// Throws when `value` has no canonical JSON form (a non-finite number): such a record is refused
    /// rather than packed as something else.
    public init(_ value: JSONValue) throws(CanonicalJSON.EncodingError) {
        canonicalJSON = try CanonicalJSON.encode(value)
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
    public var reason: CatalogRejectionCode
}

/// Why a catalog record was refused: the machine-readable code reports carry (its raw value).
///
/// ```swift
/// if rejection.reason == .invalidID { print("ids must match ^[A-Za-z0-9_-]{1,64}$") }
/// ```
public enum CatalogRejectionCode: String, Sendable, Equatable, Codable, CaseIterable {
    /// The record is not a JSON object.
    case notAnObject = "not-an-object"
    /// The record has no string id.
    case missingID = "missing-id"
    /// The id does not match `^[A-Za-z0-9_-]{1,64}$` (it would become a file name).
    case invalidID = "invalid-id"
    /// The record has no string name.
    case missingName = "missing-name"
    /// A v1 record's `gifUrl` is missing or not an absolute http(s) URL.
    case missingOrInvalidGIFURL = "missing-or-invalid-gifUrl"
    /// The record holds a value JSON cannot carry canonically (a non-finite number).
    case unencodableRecord = "unencodable-record"
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

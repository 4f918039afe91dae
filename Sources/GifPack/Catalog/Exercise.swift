import Crypto
import Foundation

/// One exercise from either API shape, normalised: the fields selectors use, where its GIF is, and
/// the raw record for the pack. Its `id` has been validated (``ExerciseID``).
///
/// ```swift
/// let squat = try Exercise(id: "0001", name: "3/4 sit-up", bodyParts: ["waist"], equipment: ["body weight"],
///                      targets: ["abs"], imageURL: "https://…/image?exerciseId=0001&resolution=180", raw: .null)
/// ```
package struct Exercise: Sendable, Equatable {
    package var id: String
    package var name: String
    package var bodyParts: [String]
    package var equipment: [String]
    package var targets: [String]
    /// Where the GIF is requested.
    package var imageURL: String {
        switch image {
        case .url(let url): url
        case .template(let template): template.prefix + id + template.suffix
        }
    }
    /// The image URL as given, or made from the id: a RapidAPI catalog's URLs differ only by id, so
    /// its exercises share one template instead of holding a string each.
    var image: ImageLocation
    /// The API's record as canonical JSON bytes (sorted keys, compact), held in memory or, once the
    /// build spools it (``RecordSpool``), only as the place of those bytes in the spool file.
    package private(set) var record: RawRecord
    /// SHA-256 of the record's canonical bytes followed by the image URL: what tells a changed
    /// exercise from an unchanged one between two catalogs (``CatalogFingerprint``).
    package let fingerprint: RecordDigest

    /// Throws when `raw` has no canonical JSON form (a non-finite number).
    package init(
        id: String, name: String, bodyParts: [String], equipment: [String], targets: [String],
        imageURL: String, raw: JSONValue
    ) throws(CanonicalJSON.EncodingError) {
        self.id = id
        self.name = name
        self.bodyParts = bodyParts
        self.equipment = equipment
        self.targets = targets
        self.image = .url(imageURL)
        let bytes = try CanonicalJSON.encode(raw)
        self.record = RawRecord(bytes: bytes)
        var hasher = SHA256()
        hasher.update(data: bytes)
        hasher.update(data: Array(imageURL.utf8))
        self.fingerprint = RecordDigest(hasher.finalize())
    }

    /// An exercise whose image URL is `template.prefix + id + template.suffix` (the same URL as
    /// ``init(id:name:bodyParts:equipment:targets:imageURL:raw:)`` with it spelled out).
    init(
        id: String, name: String, bodyParts: [String], equipment: [String], targets: [String],
        imageTemplate template: ImageURLTemplate, raw: JSONValue
    ) throws(CanonicalJSON.EncodingError) {
        try self.init(
            id: id, name: name, bodyParts: bodyParts, equipment: equipment, targets: targets,
            imageURL: template.prefix + id + template.suffix, raw: raw)
        image = .template(template)
    }

    /// Equal fields, the image URL compared as a URL however it is held.
    package static func == (a: Exercise, b: Exercise) -> Bool {
        a.id == b.id && a.name == b.name && a.bodyParts == b.bodyParts && a.equipment == b.equipment && a.targets == b.targets
            && a.imageURL == b.imageURL && a.record == b.record && a.fingerprint == b.fingerprint
    }

    /// An exercise from its parts, as a ``RecordSpool`` reads it back.
    init(
        id: String, name: String, bodyParts: [String], equipment: [String], targets: [String], image: ImageLocation,
        record: RawRecord, fingerprint: RecordDigest
    ) {
        self.id = id
        self.name = name
        self.bodyParts = bodyParts
        self.equipment = equipment
        self.targets = targets
        self.image = image
        self.record = record
        self.fingerprint = fingerprint
    }

}

/// An image URL made of a fixed prefix, the exercise id and a fixed suffix, e.g.
/// `https://api.example/image?exerciseId=` + `0001` + `&resolution=180`. Made once per catalog, so
/// its two strings are shared by every exercise.
struct ImageURLTemplate: Sendable, Equatable {
    let prefix: String
    let suffix: String
}

/// Where an exercise's GIF is: a URL of its own (v1), or a template filled with its id (RapidAPI).
enum ImageLocation: Sendable, Equatable {
    case url(String)
    case template(ImageURLTemplate)
}

/// A JSON value stored as its canonical bytes (``CanonicalJSON``), ready to be copied verbatim into a
/// pack's `catalog.json`: in memory, or in a build's ``RecordSpool`` file (only its offset and
/// length are then kept). Two records are equal when their bytes are.
///
/// ```swift
/// let record = try RawRecord(.object(["id": .string("0001")]))
/// try record.bytes()   // {"id":"0001"}
/// ```
package struct RawRecord: Sendable, Equatable {
    enum Storage: Sendable {
        case memory([UInt8])
        case spooled(RecordSpool, offset: Int64)
    }

    let storage: Storage
    /// The number of canonical bytes.
    package let length: Int
    /// SHA-256 of the canonical bytes: what equality compares, wherever the bytes are.
    package let sha256: RecordDigest

    /// Throws when `value` has no canonical JSON form (a non-finite number): such a record is refused
    /// rather than packed as something else.
    package init(_ value: JSONValue) throws(CanonicalJSON.EncodingError) {
        self.init(bytes: try CanonicalJSON.encode(value))
    }

    init(bytes: [UInt8]) {
        storage = .memory(bytes)
        length = bytes.count
        sha256 = RecordDigest(SHA256.hash(data: bytes))
    }

    /// Bytes whose hash is known (read back from the spool, where it was written with them).
    init(bytes: [UInt8], sha256: RecordDigest) {
        storage = .memory(bytes)
        length = bytes.count
        self.sha256 = sha256
    }

    init(spooledIn spool: RecordSpool, offset: Int64, length: Int, sha256: RecordDigest) {
        storage = .spooled(spool, offset: offset)
        self.length = length
        self.sha256 = sha256
    }

    /// The canonical bytes (read back from the spool file when spooled).
    package func bytes() throws(FileSystemError) -> [UInt8] {
        switch storage {
        case .memory(let bytes): bytes
        case .spooled(let spool, let offset): try spool.read(offset: offset, length: length)
        }
    }

    package static func == (a: RawRecord, b: RawRecord) -> Bool { a.length == b.length && a.sha256 == b.sha256 }
}

/// A SHA-256 digest kept inline (four words, no allocation), as ``RawRecord`` and ``Exercise`` keep
/// one per record.
///
/// ```swift
/// let digest = RecordDigest(SHA256.hash(data: bytes))
/// print(digest.hex)   // 64 lowercase hex digits
/// ```
package struct RecordDigest: Sendable, Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64)

    package init(_ digest: SHA256Digest) {
        words = digest.withUnsafeBytes { raw in
            (
                raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
            )
        }
    }

    /// A digest from its 32 bytes (the first 32 of `raw`), as ``bytes`` gives them.
    init(rawBytes raw: UnsafeRawBufferPointer) {
        words = (
            raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        )
    }

    /// The 32 bytes, in the digest's order.
    package var bytes: [UInt8] {
        withUnsafeBytes(of: words) { Array($0) }
    }

    /// Lowercase hex, as SHA-256 digests are written everywhere else.
    package var hex: String { Hex.lowercase(bytes) }

    package static func == (a: RecordDigest, b: RecordDigest) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

/// A catalog as fetched: the usable exercises, sorted by id, and what was refused.
package struct Catalog: Sendable {
    /// Sorted by id, each id once; spooled by a build (see ``ExerciseList``).
    package var exercises: ExerciseList
    /// Records refused (bad id, missing fields, bad GIF URL), with why.
    package var rejected: [CatalogRejection]
    /// Ids that appeared more than once; the first record was kept.
    package var duplicateIDs: [String]
    package var pagesFetched: Int
    /// Pages whose body had not changed since the last run, whose exercises were reused rather
    /// than parsed again (see ``CatalogPageCache``).
    package var pagesReused = 0

    package init(exercises: [Exercise], rejected: [CatalogRejection], duplicateIDs: [String], pagesFetched: Int) {
        var exercises = exercises
        Self.sortByID(&exercises)
        self.init(sorted: ExerciseList(exercises), rejected: rejected, duplicateIDs: duplicateIDs, pagesFetched: pagesFetched)
    }

    /// A catalog of exercises already sorted by id, each id once.
    init(sorted exercises: ExerciseList, rejected: [CatalogRejection], duplicateIDs: [String], pagesFetched: Int) {
        self.exercises = exercises
        self.rejected = rejected
        self.duplicateIDs = duplicateIDs
        self.pagesFetched = pagesFetched
    }
}

extension Catalog {
    /// Sorts exercises by id in place (equal ids keep their order), with no second array of exercises: catalogs usually come in
    /// id order (then nothing moves); otherwise positions are sorted (4 bytes each) and the
    /// exercises moved along the cycles of that permutation, so 100,000 exercises cost 400 KB
    /// more, not a sorted copy and a merge buffer.
    static func sortByID(_ exercises: inout [Exercise]) {
        guard !zip(exercises, exercises.dropFirst()).allSatisfy({ $0.id < $1.id }) else { return }
        var order = (0..<Int32(exercises.count)).map { $0 }
        // Equal ids keep their order (position breaks the tie), so the first of duplicates stays first.
        exercises.withUnsafeBufferPointer { items in
            order.sort { items[Int($0)].id < items[Int($1)].id || (items[Int($0)].id == items[Int($1)].id && $0 < $1) }
        }
        // exercises[i] takes the element at order[i]; each cycle of the permutation is walked once.
        for start in order.indices where order[start] != Int32(start) && order[start] >= 0 {
            let first = exercises[start]
            var position = start
            while true {
                let next = Int(order[position])
                order[position] = -1  // placed
                if next == start {
                    exercises[position] = first
                    break
                }
                exercises[position] = exercises[next]
                position = next
            }
        }
    }
}

/// A catalog record that was refused. `id` is shown escaped, never used as a path.
package struct CatalogRejection: Sendable, Equatable, Codable {
    package var position: Int
    package var id: String?
    package var reason: CatalogRejectionCode
}

/// Why a catalog record was refused: the machine-readable code reports carry (its raw value).
///
/// ```swift
/// if rejection.reason == .invalidID { print("ids must match ^[A-Za-z0-9_-]{1,64}$") }
/// ```
package enum CatalogRejectionCode: String, Sendable, Equatable, Codable, CaseIterable {
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
    package func matches(_ exercise: Exercise) -> Bool {
        func any(_ wanted: [String], _ values: [String]) -> Bool {
            wanted.isEmpty || values.contains { value in wanted.contains { $0.caseInsensitiveCompare(value) == .orderedSame } }
        }
        return any(bodyParts, exercise.bodyParts) && any(equipment, exercise.equipment)
            && any(targets, exercise.targets) && (ids.isEmpty || ids.contains(exercise.id))
    }
}

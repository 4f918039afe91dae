import Foundation

/// `catalog.json`, the first entry of every pack: the pack's exercises, each with the API's raw
/// record and its GIF's hash and metadata. It never holds a time, a version or a secret, so its
/// SHA-256 is the pack's content digest: equal catalogs mean equal packs.
///
/// ```swift
/// let catalog = try PackCatalog.decode(from: bytes)
/// let gifPath = catalog.exercises.first?.gif.map { GIFEntry.path(forSHA256: $0.sha256) }
/// ```
public struct PackCatalog: Sendable, Equatable, Codable {
    public var formatVersion: FormatVersion
    public var pack: String
    public var source: SourceDescription
    /// Sorted by id.
    public var exercises: [PackExercise]

    public init(pack: String, source: SourceDescription, exercises: [PackExercise]) {
        self.formatVersion = .current
        self.pack = pack
        self.source = source
        self.exercises = exercises.sorted { $0.id < $1.id }
    }

    /// The tar path of the catalog inside a pack.
    public static let path = "catalog.json"

    /// Canonical JSON bytes (sorted keys, compact, trailing newline).
    public func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return [UInt8](data)
    }

    /// Decodes a catalog with ``JSONParser`` (at most ``JSONLimits/standardDepth`` levels of
    /// nesting): throws ``JSONParseError`` or a `DecodingError` (see ``JSONValueDecoder/describe(_:)``).
    public static func decode(from bytes: [UInt8], limits: JSONLimits = .standard) throws -> PackCatalog {
        try JSONValueDecoder.decode(PackCatalog.self, from: bytes, limits: limits)
    }
}

/// One exercise in a pack's catalog.
public struct PackExercise: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    /// nil when the exercise has no GIF in this pack (the client shows a placeholder).
    public var gif: GIFMetadata?
    /// The exercise exactly as the API described it.
    public var data: JSONValue

    public init(id: String, name: String, gif: GIFMetadata?, data: JSONValue) {
        self.id = id
        self.name = name
        self.gif = gif
        self.data = data
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(gif, forKey: .gif)
        try container.encode(data, forKey: .data)
    }
}

/// What a pack records of each GIF.
public struct GIFMetadata: Sendable, Equatable, Codable {
    public var sha256: String
    public var bytes: Int64
    public var width: Int
    public var height: Int
    public var frames: Int
    public var durationMilliseconds: Int
    /// nil: plays once (no loop extension); 0: loops forever.
    public var loopCount: Int?

    public init(sha256: String, bytes: Int64, width: Int, height: Int, frames: Int, durationMilliseconds: Int, loopCount: Int?) {
        self.sha256 = sha256
        self.bytes = bytes
        self.width = width
        self.height = height
        self.frames = frames
        self.durationMilliseconds = durationMilliseconds
        self.loopCount = loopCount
    }
}

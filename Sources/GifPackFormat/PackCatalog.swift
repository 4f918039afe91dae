import Foundation

/// `catalog.json`, the first entry of every pack: the pack's exercises, each with the API's raw
/// record and its GIF's hash and metadata. It never holds a time, a version or a secret, so its
/// SHA-256 is the pack's content digest: equal catalogs mean equal packs.
///
/// ```swift
/// let catalog = try PackCatalog.decode(from: bytes)
/// let gifPath = catalog.exercises.first?.gif.map { GIFEntry.path(forSHA256: $0.sha256) }
/// ```
package struct PackCatalog: Sendable, Equatable, Codable {
    package var formatVersion: FormatVersion
    package var pack: String
    package var source: SourceDescription
    /// Sorted by id.
    package var exercises: [PackExercise]

    package init(pack: String, source: SourceDescription, exercises: [PackExercise]) {
        self.formatVersion = .withoutRenditions
        self.pack = pack
        self.source = source
        self.exercises = exercises.sorted { $0.id < $1.id }
    }

    /// The tar path of the catalog inside a pack.
    package static let path = "catalog.json"

    /// Canonical JSON bytes (``CanonicalJSON``, trailing newline): the bytes a pack stores and hashes.
    package func encoded() throws(CanonicalJSON.EncodingError) -> [UInt8] {
        var bytes = PackCatalogJSON.opening
        for (position, exercise) in exercises.enumerated() {
            PackCatalogJSON.appendExercise(
                id: exercise.id, name: exercise.name, gif: exercise.gif,
                data: try CanonicalJSON.encode(exercise.data), first: position == 0, to: &bytes)
        }
        PackCatalogJSON.appendClosing(formatVersion: formatVersion, pack: pack, source: source, to: &bytes)
        return bytes
    }

    /// Decodes a catalog with ``JSONParser`` (at most ``JSONLimits/standardDepth`` levels of
    /// nesting): throws ``JSONParseError`` or a `DecodingError` (see ``JSONValueDecoder/describe(_:)``).
    package static func decode(from bytes: [UInt8], limits: JSONLimits = .standard) throws -> PackCatalog {
        try JSONValueDecoder.decode(PackCatalog.self, from: bytes, limits: limits)
    }
}

/// One exercise in a pack's catalog.
package struct PackExercise: Sendable, Equatable, Codable {
    package var id: String
    package var name: String
    /// nil when the exercise has no GIF in this pack (the client shows a placeholder).
    package var gif: GIFMetadata?
    /// The exercise exactly as the API described it.
    package var data: JSONValue

    package init(id: String, name: String, gif: GIFMetadata?, data: JSONValue) {
        self.id = id
        self.name = name
        self.gif = gif
        self.data = data
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(gif, forKey: .gif)
        try container.encode(data, forKey: .data)
    }
}

/// What a pack records of each GIF.
package struct GIFMetadata: Sendable, Equatable, Codable {
    package var sha256: String
    package var bytes: Int64
    package var width: Int
    package var height: Int
    package var frames: Int
    package var durationMilliseconds: Int
    /// nil: plays once (no loop extension); 0: loops forever.
    package var loopCount: Int?
    /// BlurHash of the still (format 1.2).
    package var blurHash: String?
    /// `#rrggbb` mean colour of the still (format 1.2).
    package var averageColor: String?
    /// Format 1.4: `webp` for a WebP entry of a WebP pack; nil (absent) for a GIF. The size and
    /// timing are then the WebP's, which match its source GIF's.
    package var format: ImageFormat?

    package init(
        sha256: String, bytes: Int64, width: Int, height: Int, frames: Int, durationMilliseconds: Int, loopCount: Int?,
        blurHash: String? = nil, averageColor: String? = nil, format: ImageFormat? = nil
    ) {
        self.format = format
        self.blurHash = blurHash
        self.averageColor = averageColor
        self.sha256 = sha256
        self.bytes = bytes
        self.width = width
        self.height = height
        self.frames = frames
        self.durationMilliseconds = durationMilliseconds
        self.loopCount = loopCount
    }
}

/// The layout of `catalog.json` in canonical JSON (docs/FORMAT.md): written by ``PackCatalog/encoded()``
/// and, one exercise at a time, by the builder. Exercises go between ``opening`` and the closing part.
///
/// ```swift
/// var bytes = PackCatalogJSON.opening
/// PackCatalogJSON.appendExercise(id: "0001", name: "3/4 sit-up", gif: nil, data: Array("{}".utf8), first: true, to: &bytes)
/// PackCatalogJSON.appendClosing(formatVersion: .withoutRenditions, pack: "all", source: source, to: &bytes)
/// ```
package enum PackCatalogJSON {
    package static let opening = Array(#"{"exercises":["#.utf8)

    /// Appends one exercise; `data` must already be canonical JSON (``CanonicalJSON``).
    package static func appendExercise(
        id: String, name: String, gif: GIFMetadata?, data: [UInt8], first: Bool,
        to bytes: inout [UInt8]
    ) {
        appendExercise(id: id, name: name, gifJSON: gif.map(metadataJSON) ?? nullJSON, data: data, first: first, to: &bytes)
    }

    /// ``appendExercise(id:name:gif:data:first:to:)`` with the `gif` value already encoded
    /// (``metadataJSON(_:)``, or `null`): exercises that share a GIF share its encoding.
    package static func appendExercise(
        id: String, name: String, gifJSON: [UInt8], data: [UInt8], first: Bool,
        to bytes: inout [UInt8]
    ) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes += dataKey
        bytes += data
        bytes += gifKey
        bytes += gifJSON
        bytes += idKey
        CanonicalJSON.appendString(id, to: &bytes)
        bytes += nameKey
        CanonicalJSON.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// An exercise's `gif` value: the metadata as canonical JSON.
    package static func metadataJSON(_ gif: GIFMetadata) -> [UInt8] {
        var bytes: [UInt8] = []
        appendMetadata(gif, to: &bytes)
        return bytes
    }

    /// An exercise's `gif` value when it has none.
    package static let nullJSON = Array("null".utf8)
    private static let dataKey = Array(#"{"data":"#.utf8)
    private static let gifKey = Array(#","gif":"#.utf8)
    private static let idKey = Array(#","id":"#.utf8)
    private static let nameKey = Array(#","name":"#.utf8)

    /// Closes the exercise list and appends the remaining keys and the trailing newline.
    package static func appendClosing(
        formatVersion: FormatVersion, pack: String, source: SourceDescription,
        to bytes: inout [UInt8]
    ) {
        bytes += Array(#"],"formatVersion":"#.utf8)
        CanonicalJSON.appendString(formatVersion.description, to: &bytes)
        bytes += Array(#","pack":"#.utf8)
        CanonicalJSON.appendString(pack, to: &bytes)
        bytes += Array(#","source":{"#.utf8)
        if let baseURL = source.baseURL {
            bytes += Array(#""baseURL":"#.utf8)
            CanonicalJSON.appendString(baseURL, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes += Array(#""kind":"#.utf8)
        CanonicalJSON.appendString(source.kind, to: &bytes)
        if let resolution = source.resolution {
            bytes += Array(#","resolution":"#.utf8)
            CanonicalJSON.appendInteger(Int64(resolution), to: &bytes)
        }
        bytes += Array("}}\n".utf8)
    }

    private static func appendMetadata(_ gif: GIFMetadata, to bytes: inout [UInt8]) {
        func field(_ key: String, _ value: Int64) {
            bytes += Array("\"\(key)\":".utf8)
            CanonicalJSON.appendInteger(value, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(UInt8(ascii: "{"))
        if let color = gif.averageColor {
            bytes += Array(#""averageColor":"#.utf8)
            CanonicalJSON.appendString(color, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        if let hash = gif.blurHash {
            bytes += Array(#""blurHash":"#.utf8)
            CanonicalJSON.appendString(hash, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        field("bytes", gif.bytes)
        field("durationMilliseconds", Int64(gif.durationMilliseconds))
        if let format = gif.format {
            bytes += Array(#""format":"#.utf8)
            CanonicalJSON.appendString(format.rawValue, to: &bytes)
            bytes.append(UInt8(ascii: ","))
        }
        field("frames", Int64(gif.frames))
        field("height", Int64(gif.height))
        if let loop = gif.loopCount { field("loopCount", Int64(loop)) }
        bytes += Array(#""sha256":"#.utf8)
        CanonicalJSON.appendString(gif.sha256, to: &bytes)
        bytes += Array(#","width":"#.utf8)
        CanonicalJSON.appendInteger(Int64(gif.width), to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }
}

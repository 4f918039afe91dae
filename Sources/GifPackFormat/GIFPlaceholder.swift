/// What an app needs to lay out and play one GIF before downloading it (format 1.2): its BlurHash,
/// average colour, size and timing. Each ``GIFEntry`` of an index written by format 1.2 carries one.
///
/// ```swift
/// if let placeholder = index.packs[0].gifEntry(forExercise: "0001")?.placeholder {
///     print(placeholder.blurHash, placeholder.averageColor, placeholder.width, placeholder.durationMilliseconds)
/// }
/// ```
public struct GIFPlaceholder: Sendable, Equatable, Codable {
    /// BlurHash of the GIF's still (docs/FORMAT.md, "Placeholders and posters").
    public var blurHash: String
    /// `#rrggbb`, the mean colour of the still.
    public var averageColor: String
    public var width: Int
    public var height: Int
    public var frames: Int
    public var durationMilliseconds: Int
    /// nil: plays once (no loop extension); 0: loops forever.
    public var loopCount: Int?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case averageColor, blurHash, durationMilliseconds, frames, height, loopCount, width
    }

    public init(blurHash: String, averageColor: String, width: Int, height: Int, frames: Int,
                durationMilliseconds: Int, loopCount: Int?) {
        self.blurHash = blurHash
        self.averageColor = averageColor
        self.width = width
        self.height = height
        self.frames = frames
        self.durationMilliseconds = durationMilliseconds
        self.loopCount = loopCount
    }
}

/// The companion pack of a pack's still posters (format 1.2): `<pack>-posters`, same
/// frame-per-entry layout and versioning as the pack it belongs to. Its first entry is a
/// `catalog.json` listing every poster (its SHA-256 is the content digest), then one entry per
/// poster at ``path(size:sha256:)``, sorted by path.
///
/// ```swift
/// let posters = index.packs[0].posters        // nil in a 1.0 index or when posters are off
/// let entry = posters?.poster(size: 80, sha256: gifHash)
/// ```
public struct PosterPackDescription: Sendable, Equatable, Codable {
    /// `<pack>-posters`.
    public var name: String
    public var version: Int
    /// Path relative to the index, e.g. `packs/chest-posters-v2-5e6f7a8b.tar.zst`.
    public var file: String
    public var bytes: Int64
    public var sha256: String
    public var entryCount: Int
    public var uncompressedBytes: Int64
    public var contentDigest: String
    /// Longest sides, ascending.
    public var sizes: [Int]
    public var catalog: EntryLocation
    /// One per poster, sorted by path.
    public var posters: [EntryLocation]

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case bytes, catalog, contentDigest, entryCount, file, name, posters, sha256, sizes, uncompressedBytes, version
    }

    public init(name: String, version: Int, file: String, bytes: Int64, sha256: String, entryCount: Int,
                uncompressedBytes: Int64, contentDigest: String, sizes: [Int], catalog: EntryLocation,
                posters: [EntryLocation]) {
        self.name = name
        self.version = version
        self.file = file
        self.bytes = bytes
        self.sha256 = sha256
        self.entryCount = entryCount
        self.uncompressedBytes = uncompressedBytes
        self.contentDigest = contentDigest
        self.sizes = sizes.sorted()
        self.catalog = catalog
        self.posters = posters.sorted { $0.path < $1.path }
    }

    /// The tar path of the poster of the GIF with hash `sha256` at `size`.
    public static func path(size: Int, sha256: String) -> String { "posters/\(size)/\(sha256).gif" }

    /// The poster entry for a GIF hash at one size.
    public func poster(size: Int, sha256: String) -> EntryLocation? {
        let path = Self.path(size: size, sha256: sha256)
        return posters.first { $0.path == path }
    }
}

/// `catalog.json` of a posters pack: every poster with its own SHA-256, the GIF it shows and its
/// size. Its SHA-256 is the posters pack's content digest.
///
/// ```swift
/// let catalog = try PosterPackCatalog.decode(from: bytes)
/// let poster = catalog.posters.first { $0.gif == gifHash && $0.size == 80 }
/// ```
public struct PosterPackCatalog: Sendable, Equatable, Codable {
    public struct Poster: Sendable, Equatable, Codable {
        public var path: String
        /// SHA-256 of the poster file.
        public var sha256: String
        /// SHA-256 of the GIF it shows.
        public var gif: String
        public var size: Int
        public var bytes: Int64
    }

    public var formatVersion: FormatVersion
    /// `<pack>-posters`.
    public var pack: String
    /// Sorted by path.
    public var posters: [Poster]
    public var sizes: [Int]

    public static func decode(from bytes: [UInt8], limits: JSONLimits = .standard) throws -> PosterPackCatalog {
        try JSONValueDecoder.decode(PosterPackCatalog.self, from: bytes, limits: limits)
    }
}

/// What an app needs to lay out and play one GIF before downloading it (format 1.2): its BlurHash,
/// average colour, size and timing. Each ``GIFEntry`` of an index written by format 1.2 carries one.
///
/// ```swift
/// if let placeholder = index.packs[0].gifEntry(forExercise: "0001")?.placeholder {
///     print(placeholder.blurHash, placeholder.averageColor, placeholder.width, placeholder.durationMilliseconds)
/// }
/// ```
package struct GIFPlaceholder: Sendable, Equatable, Codable {
    /// BlurHash of the GIF's still (docs/FORMAT.md, "Placeholders and posters").
    package var blurHash: String
    /// `#rrggbb`, the mean colour of the still.
    package var averageColor: String
    package var width: Int
    package var height: Int
    package var frames: Int
    package var durationMilliseconds: Int
    /// nil: plays once (no loop extension); 0: loops forever.
    package var loopCount: Int?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case averageColor, blurHash, durationMilliseconds, frames, height, loopCount, width
    }

    package init(
        blurHash: String, averageColor: String, width: Int, height: Int, frames: Int,
        durationMilliseconds: Int, loopCount: Int?
    ) {
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
/// let entry = posters?.posters.first { $0.path == PosterPackDescription.path(size: 80, sha256: gifHash) }
/// ```
package struct PosterPackDescription: Sendable, Equatable, Codable {
    /// `<pack>-posters`.
    package var name: String
    package var version: Int
    /// Path relative to the index, e.g. `packs/chest-posters-v2-5e6f7a8b.tar.zst`.
    package var file: String
    package var bytes: Int64
    package var sha256: String
    package var entryCount: Int
    package var uncompressedBytes: Int64
    package var contentDigest: String
    /// Longest sides, ascending.
    package var sizes: [Int]
    package var catalog: EntryLocation
    /// One per poster, sorted by path.
    package var posters: [EntryLocation]

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case bytes, catalog, contentDigest, entryCount, file, name, posters, sha256, sizes, uncompressedBytes, version
    }

    package init(
        name: String, version: Int, file: String, bytes: Int64, sha256: String, entryCount: Int,
        uncompressedBytes: Int64, contentDigest: String, sizes: [Int], catalog: EntryLocation,
        posters: [EntryLocation]
    ) {
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
    package static func path(size: Int, sha256: String) -> String { "posters/\(size)/\(sha256).gif" }
}

/// `catalog.json` of a posters pack: every poster with its own SHA-256, the GIF it shows and its
/// size. Its SHA-256 is the posters pack's content digest.
///
/// ```swift
/// let catalog = try PosterPackCatalog.decode(from: bytes)
/// let poster = catalog.posters.first { $0.gif == gifHash && $0.size == 80 }
/// ```
package struct PosterPackCatalog: Sendable, Equatable, Codable {
    package struct Poster: Sendable, Equatable, Codable {
        package var path: String
        /// SHA-256 of the poster file.
        package var sha256: String
        /// SHA-256 of the GIF it shows.
        package var gif: String
        package var size: Int
        package var bytes: Int64
    }

    package var formatVersion: FormatVersion
    /// `<pack>-posters`.
    package var pack: String
    /// Sorted by path.
    package var posters: [Poster]
    package var sizes: [Int]

    package static func decode(from bytes: [UInt8], limits: JSONLimits = .standard) throws -> PosterPackCatalog {
        try JSONValueDecoder.decode(PosterPackCatalog.self, from: bytes, limits: limits)
    }
}

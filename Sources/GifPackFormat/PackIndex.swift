import Foundation
import GifPackSystem

/// `index.json`: the list of published packs a client downloads first.
///
/// The index is the contract between the builder and every client. It names each pack's current
/// file, how to verify it (size and SHA-256) and where each GIF sits inside it (the byte offset and
/// length of the zstd frame that holds its tar entry), so a client can read one GIF without
/// decompressing the whole pack. Its JSON is canonical (sorted keys, sorted arrays), so the same
/// inputs give byte-identical files.
///
/// ```swift
/// let index = try PackIndex.decode(from: Data(contentsOf: indexURL))
/// for pack in index.packs { print(pack.name, pack.version, pack.file) }
/// ```
package struct PackIndex: Sendable, Equatable, Codable {
    package var formatVersion: FormatVersion
    /// The program that wrote the index, e.g. `"gifpack 0.1.0"`.
    package var generator: String
    package var source: SourceDescription
    /// Sorted by name. With renditions (format 1.3): each pack at the first resolution of
    /// ``SourceDescription/resolutions``, under its own name, as a 1.2 reader expects.
    package var packs: [PackDescription]
    /// Format 1.3: the packs of every other resolution, named `<pack>.<resolution>` (`all.360`),
    /// sorted by name; nil (absent) when the build fetched one resolution. 1.2 readers never read
    /// them, so they keep installing ``packs`` as before.
    package var renditionPacks: [PackDescription]?
    /// Format 1.4: the packs of another image format (``PackDescription/format``, `webp`), one per
    /// pack and resolution, named `<pack>.<resolution>.<format>` (`all.180.webp`), sorted by name;
    /// nil (absent) when the build made GIFs only. 1.0–1.3 readers never read them. An entry whose
    /// format this reader does not know (``ImageFormat/isKnown``) is left out when the index is
    /// decoded (a later format must not make the index unreadable); one without a format is kept,
    /// for the rules to refuse.
    package var formatPacks: [PackDescription]?
    /// Signed indexes only (format 1.1): rises by one with every index that differs, so a client can
    /// refuse an older index than the one it installed (a rollback).
    package var sequence: Int?
    /// Signed indexes only (format 1.1): when the index stops being valid, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    /// A client that checks signatures refuses an index past this time (a freeze).
    package var expires: String?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case expires, formatPacks, formatVersion, generator, packs, renditionPacks, sequence, source
    }

    /// An index of `packs` (and, when not empty, `renditionPacks` and `formatPacks`), of the lowest
    /// format version that describes it unless `formatVersion` is given: 1.4 with format packs, 1.3
    /// with rendition packs or several `source.resolutions`, else 1.2, so a build of one resolution
    /// and one format writes the same bytes as before renditions and formats existed.
    package init(
        formatVersion: FormatVersion? = nil, generator: String, source: SourceDescription,
        packs: [PackDescription], renditionPacks: [PackDescription] = [], formatPacks: [PackDescription] = [],
        sequence: Int? = nil, expires: String? = nil
    ) {
        self.formatVersion =
            formatVersion
            ?? (!formatPacks.isEmpty
                ? .withFormats
                : renditionPacks.isEmpty && source.resolutions == nil ? .withoutRenditions : .withRenditions)
        self.generator = generator
        self.source = source
        self.packs = packs.sorted { $0.name < $1.name }
        self.renditionPacks = renditionPacks.isEmpty ? nil : renditionPacks.sorted { $0.name < $1.name }
        self.formatPacks = formatPacks.isEmpty ? nil : formatPacks.sorted { $0.name < $1.name }
        self.sequence = sequence
        self.expires = expires
    }

    /// Every pack of the index: ``packs``, ``renditionPacks``, then ``formatPacks`` (each pack file
    /// the index names, whatever its format: what a publisher uploads, a pruner keeps and `gifpack
    /// verify` checks).
    package var allPacks: [PackDescription] { packs + (renditionPacks ?? []) + (formatPacks ?? []) }

    /// The GIF packs: ``packs`` then ``renditionPacks`` (what a client that displays GIF only reads).
    package var gifPacks: [PackDescription] { packs + (renditionPacks ?? []) }

    /// ``expires`` as a date; nil when absent or not in the `YYYY-MM-DDTHH:MM:SSZ` form.
    package var expiryDate: Date? { expires.flatMap(IndexTimestamp.parse) }

    /// The pack, rendition pack or format pack of that name.
    package func pack(named name: String) -> PackDescription? {
        packs.first { $0.name == name } ?? renditionPacks?.first { $0.name == name } ?? formatPacks?.first { $0.name == name }
    }

    /// The `formatPacks[]` entry of `format` for a GIF pack of ``packs`` or ``renditionPacks``
    /// (`all`, `all.360`): the one named `<pack>.<resolution>.<format>` of that format, at the GIF
    /// pack's resolution (for a `packs[]` pack without one, `source.resolution`).
    package func formatPack(_ format: ImageFormat, for pack: PackDescription) -> PackDescription? {
        guard let formatPacks, format != .gif, pack.format == nil, let resolution = pack.resolution ?? source.resolution else { return nil }
        let base = pack.renditionSide == nil ? pack.name : String(pack.name[..<(pack.name.lastIndex(of: ".") ?? pack.name.endIndex)])
        let name = "\(base).\(resolution).\(format.rawValue)"
        return formatPacks.first { $0.name == name && $0.format == format }
    }

    /// Canonical JSON: sorted keys, two-space pretty printing, trailing newline (the form
    /// `JSONEncoder` gives, written without its intermediate tree; see `IndexJSONWriter`).
    package func encoded() throws -> Data {
        Data(encodedBytes())
    }

    /// ``encoded()`` as bytes, without a copy into `Data`.
    package func encodedBytes() -> [UInt8] {
        IndexJSONWriter.encode(self)
    }

    /// ``encodedBytes()`` handed to `emit` in pieces of about 64 KiB, in order, so the index can be
    /// hashed or written to a file without being held whole.
    ///
    /// ```swift
    /// var hasher = SHA256()
    /// index.encode { hasher.update(data: $0) }
    /// ```
    package func encode(in emit: ([UInt8]) -> Void) {
        IndexJSONWriter.encode(self, chunkSize: 64 * 1024, emit: emit)
    }

    /// Decodes an index with ``JSONParser`` (linear time, at most ``JSONLimits/standardDepth``
    /// levels of nesting), refusing a format whose major version this reader does not know. The
    /// client checks the decoded model against the format's rules before using it.
    package static func decode(from data: Data, limits: JSONLimits = .standard) throws(IndexError) -> PackIndex {
        try decode(bytes: [UInt8](data), limits: limits)
    }

    /// ``decode(from:limits:)`` of bytes already in an array (no copy).
    ///
    /// With `omittingExercises`, the whole document is still checked but every pack's
    /// ``PackDescription/exercises`` comes back empty, which keeps a few kilobytes where the lists
    /// of 100,000 exercises would take tens of megabytes as a JSON tree.
    package static func decode(
        bytes: [UInt8], limits: JSONLimits = .standard,
        omittingExercises: Bool = false
    ) throws(IndexError) -> PackIndex {
        try decodeKeepingUnknownFormats(bytes: bytes, limits: limits, omittingExercises: omittingExercises).leavingOutUnknownFormats()
    }

    /// ``decode(bytes:limits:omittingExercises:)`` with every `formatPacks[]` entry kept, so that
    /// ``PackIndexStream`` can give each its exercise list by position first.
    static func decodeKeepingUnknownFormats(bytes: [UInt8], limits: JSONLimits, omittingExercises: Bool) throws(IndexError) -> PackIndex {
        let tree: JSONValue
        do { tree = try JSONParser.parse(bytes, limits: limits, discardingArraysNamed: omittingExercises ? ["exercises"] : []) } catch {
            throw .malformed(error.description)
        }
        return try decode(tree: tree)
    }

    private static func decode(tree: JSONValue) throws(IndexError) -> PackIndex {
        guard let text = tree["formatVersion"]?.stringValue else {
            throw .malformed("formatVersion: missing or not a string")
        }
        guard let version = FormatVersion(parsing: text) else {
            throw .malformed("formatVersion \"\(TerminalText.escaped(text, maxScalars: 40))\" is not MAJOR.MINOR")
        }
        guard version.isReadable else { throw .unsupportedVersion(version) }
        do { return try JSONValueDecoder.decode(PackIndex.self, from: tree) } catch {
            throw .malformed(JSONValueDecoder.describe(error))
        }
    }

    /// The index without the `formatPacks[]` entries of a format this reader does not know (format
    /// 1.4: a later format must not make the index unreadable). An entry without a format is kept,
    /// for the rules to refuse. Every decoder of this module applies it.
    func leavingOutUnknownFormats() -> PackIndex {
        guard let formatPacks, formatPacks.contains(where: { $0.format?.isKnown == false }) else { return self }
        var index = self
        let known = formatPacks.filter { $0.format?.isKnown ?? true }
        index.formatPacks = known.isEmpty ? nil : known
        return index
    }
}

/// Why an index could not be read.
package enum IndexError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)
    case unsupportedVersion(FormatVersion)

    package var description: String {
        switch self {
        case .malformed(let detail): "index.json is malformed: \(detail)"
        case .unsupportedVersion(let version):
            "index.json has format version \(version); this reader understands \(FormatVersion.current.major).x only — upgrade gifpack"
        }
    }
}

/// Where the packs' content came from. Never holds a key or any other secret.
package struct SourceDescription: Sendable, Equatable, Codable {
    /// `exercisedb-rapidapi` or `exercisedb-v1`.
    package var kind: String
    /// Present in the index; left out of a pack's catalog, so moving the API does not change packs.
    package var baseURL: String?
    /// The resolution asked for (pixels; nil: the source's own size). With renditions, the first
    /// of ``resolutions``: that of ``PackIndex/packs``.
    package var resolution: Int?
    /// Format 1.3: every resolution the build fetched, in the manifest's order; nil with one.
    package var resolutions: [Int]?
    /// Format 1.4: the image formats the build made, `gif` first (`["gif", "webp"]`); nil when GIF only.
    package var formats: [ImageFormat]?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case baseURL, formats, kind, resolution, resolutions
    }

    package init(kind: String, baseURL: String?, resolution: Int?, resolutions: [Int]? = nil, formats: [ImageFormat]? = nil) {
        self.kind = kind
        self.baseURL = baseURL
        self.resolution = resolution
        self.resolutions = resolutions
        self.formats = formats
    }
}

/// One pack in the index.
package struct PackDescription: Sendable, Equatable, Codable {
    package var name: String
    /// Rises by one each time the pack's content digest changes.
    package var version: Int
    /// Path of the pack file relative to the index, e.g. `packs/chest-v3-1a2b3c4d.tar.zst`: the version and the first 8 hex digits of the file's SHA-256, so a name never refers to two contents.
    package var file: String
    /// Size of the pack file in bytes.
    package var bytes: Int64
    /// SHA-256 of the pack file, lowercase hex.
    package var sha256: String
    /// Number of tar entries (catalog.json plus one per distinct GIF).
    package var entryCount: Int
    /// Size of the uncompressed tar stream.
    package var uncompressedBytes: Int64
    /// SHA-256 over the pack's content (its catalog.json, which names every GIF by hash): equal digests
    /// mean equal content whatever the compression settings.
    package var contentDigest: String
    /// The `catalog.json` entry.
    package var catalog: EntryLocation
    /// One per distinct GIF, sorted by SHA-256.
    package var gifs: [GIFEntry]
    /// Every exercise of the pack, sorted by id; `gif` is nil when the exercise has no GIF
    /// (a client shows a placeholder). Held compactly (see ``ExerciseRefList``).
    package var exercises: ExerciseRefList
    /// The companion posters pack (format 1.2; nil before 1.2 or when the manifest asks for no posters).
    package var posters: PosterPackDescription?
    /// Format 1.3, with renditions only: the resolution of this pack's GIFs (pixels). Format 1.4:
    /// every `formatPacks[]` entry has it.
    package var resolution: Int?
    /// Format 1.4, `formatPacks[]` only: the image format of the pack (`webp`); nil for a GIF pack.
    /// Its entries (``gifs``) are of that format unless they say otherwise (``GIFEntry/format``).
    package var format: ImageFormat?

    /// A rendition pack's (format 1.3, `renditionPacks[]`, named `<name>.<resolution>`): the
    /// larger side of every one of its GIFs' logical screens, its ``resolution``. Nil for a pack of
    /// `packs[]` (a plain name), whose GIFs are whatever size the API served at the first resolution.
    package var renditionSide: Int? {
        guard format == nil, let resolution, let dot = name.lastIndex(of: "."), name[name.index(after: dot)...] == String(resolution) else {
            return nil
        }
        return resolution
    }

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case bytes, catalog, contentDigest, entryCount, exercises, file, format, gifs, name, posters, resolution, sha256,
            uncompressedBytes, version
    }

    package init(
        name: String, version: Int, file: String, bytes: Int64, sha256: String, entryCount: Int,
        uncompressedBytes: Int64, contentDigest: String, catalog: EntryLocation, gifs: [GIFEntry],
        exercises: [ExerciseRef], posters: PosterPackDescription? = nil
    ) {
        self.init(
            name: name, version: version, file: file, bytes: bytes, sha256: sha256, entryCount: entryCount,
            uncompressedBytes: uncompressedBytes, contentDigest: contentDigest, catalog: catalog, gifs: gifs,
            exerciseList: ExerciseRefList(exercises), posters: posters)
    }

    /// A description whose exercise list is already compact (how a builder makes one).
    package init(
        name: String, version: Int, file: String, bytes: Int64, sha256: String, entryCount: Int,
        uncompressedBytes: Int64, contentDigest: String, catalog: EntryLocation, gifs: [GIFEntry],
        exerciseList exercises: ExerciseRefList, posters: PosterPackDescription? = nil
    ) {
        self.name = name
        self.version = version
        self.file = file
        self.bytes = bytes
        self.sha256 = sha256
        self.entryCount = entryCount
        self.uncompressedBytes = uncompressedBytes
        self.contentDigest = contentDigest
        self.catalog = catalog
        self.gifs = gifs.sorted { $0.sha256 < $1.sha256 }
        // Builders pass them in id order: then the array is kept as it is, with no sorted copy.
        let inOrder = zip(exercises, exercises.dropFirst()).allSatisfy { $0.id < $1.id }
        self.exercises = inOrder ? exercises : ExerciseRefList(exercises.sorted { $0.id < $1.id })
        self.posters = posters
    }

    /// The image format of the pack's entries unless one says otherwise: ``format``, or GIF.
    package var imageFormat: ImageFormat { format ?? .gif }

    /// The GIF entry for an exercise id, if the pack has one.
    package func gifEntry(forExercise id: String) -> GIFEntry? {
        guard let hash = exercises.first(where: { $0.id == id })?.gif else { return nil }
        return gifs.first { $0.sha256 == hash }
    }
}

/// Where a tar entry sits in a pack: the zstd frame at `frameOffset` of `frameLength` bytes
/// decompresses to the entry's 512-byte tar header, its `size` bytes of data and padding.
package struct EntryLocation: Sendable, Equatable, Codable {
    package var path: String
    package var size: Int64
    package var frameOffset: Int64
    package var frameLength: Int64

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case frameLength, frameOffset, path, size
    }

    package init(path: String, size: Int64, frameOffset: Int64, frameLength: Int64) {
        self.path = path
        self.size = size
        self.frameOffset = frameOffset
        self.frameLength = frameLength
    }
}

/// A distinct image in a pack, stored once at `gifs/<sha256>.gif` (format 1.4: or, a WebP, at
/// `images/<sha256>.webp`) however many exercises use it.
package struct GIFEntry: Sendable, Equatable, Codable {
    package var sha256: String
    package var location: EntryLocation
    /// BlurHash, average colour, size and timing (format 1.2; nil in a 1.0 or 1.1 index). In a WebP
    /// pack, those of the source GIF, which the WebP matches (canvas, frames, delays, loop count).
    package var placeholder: GIFPlaceholder?
    /// Format 1.4: `webp` for a WebP entry; nil (absent) for a GIF, in any pack.
    package var format: ImageFormat?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, location, placeholder, sha256
    }

    package init(sha256: String, location: EntryLocation, placeholder: GIFPlaceholder? = nil, format: ImageFormat? = nil) {
        self.sha256 = sha256
        self.location = location
        self.placeholder = placeholder
        self.format = format
    }

    /// The entry's image format: ``format``, or GIF when absent.
    package var imageFormat: ImageFormat { format ?? .gif }

    /// The tar path the entry must have: `gifs/<sha256>.gif` for a GIF, `images/<sha256>.webp` for
    /// a WebP (nil for a format this reader does not know).
    package var expectedPath: String? { imageFormat.entryPath(forSHA256: sha256) }

    /// The tar path of a GIF with this hash.
    package static func path(forSHA256 hash: String) -> String { "gifs/\(hash).gif" }
}

/// An exercise of a pack and the hash of its GIF (nil: no GIF, show a placeholder).
package struct ExerciseRef: Sendable, Equatable, Codable {
    package var id: String
    package var gif: String?

    /// The keys in the order index.json writes them (sorted by their bytes): the one definition of
    /// this part of the index's shape, read by the decoder and written by ``IndexJSONWriter``.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case gif, id
    }

    package init(id: String, gif: String?) {
        self.id = id
        self.gif = gif
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        // Encode nil explicitly so "no GIF" is visible in the JSON rather than a missing key.
        try container.encode(gif, forKey: .gif)
        try container.encode(id, forKey: .id)
    }
}

/// The UTC timestamps of a signed index (`expires`): `YYYY-MM-DDTHH:MM:SSZ`, whole seconds.
///
/// ```swift
/// IndexTimestamp.format(Date(timeIntervalSince1970: 0))   // "1970-01-01T00:00:00Z"
/// ```
package enum IndexTimestamp {
    package static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
    }

    package static func parse(_ text: String) -> Date? {
        guard text.count == 20, text.hasSuffix("Z") else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// The clock gifpack uses for expiry: now, or `GIFPACK_NOW` (Unix seconds or `YYYY-MM-DDTHH:MM:SSZ`)
    /// when set — for tests and for reproducing what a client saw at a given time.
    package static func now(environment: [String: String]) throws(InvalidClock) -> Date {
        guard let text = environment["GIFPACK_NOW"], !text.isEmpty else { return Date() }
        if let seconds = Int64(text) { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        guard let date = parse(text) else { throw InvalidClock(text: text) }
        return date
    }

    /// `GIFPACK_NOW` holds something other than a time.
    package struct InvalidClock: Error, Sendable, CustomStringConvertible {
        package let text: String
        package var description: String { "GIFPACK_NOW \"\(text)\" is neither Unix seconds nor YYYY-MM-DDTHH:MM:SSZ" }
    }
}

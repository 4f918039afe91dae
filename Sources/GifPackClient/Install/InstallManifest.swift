import Foundation
import GifPackFormat
import GifPackIndexReader

/// The record of what an installed cache holds, `<cache>/gifpack-manifest.json`.
///
/// Written last into each new generation before it is switched in, so it always describes the
/// files next to it: the layout, the installed packs with their versions and hashes, and every
/// exercise with the SHA-256 of its GIF (`null`: no GIF, show a placeholder); with posters, the
/// posters packs and each installed poster's SHA-256. The next install reads it to find the files
/// it can keep. Canonical JSON (sorted keys, pretty printed).
///
/// ```swift
/// if let manifest = try InstallManifest.read(cacheDirectory: dir) {
///     print(manifest.packs.map { "\($0.name) v\($0.version)" })
/// }
/// ```
package struct InstallManifest: Sendable, Equatable, Codable {
    package static let fileName = "gifpack-manifest.json"

    /// The shape of this file: `1.4` when it records image formats (``formats``,
    /// ``imageFormats``), `1.3` when it records renditions (``preferredPixelSize``,
    /// ``placeholderGIFs``, a pack's ``InstalledPack/resolution``), else `1.2`, the manifest an
    /// install wrote before renditions existed (it has not changed otherwise).
    package var formatVersion: FormatVersion
    /// The generation number of the directory holding this manifest.
    package var generation: Int
    package var layout: InstallLayout
    /// The installed packs, sorted by name.
    package var packs: [InstalledPack]
    /// Exercise id → SHA-256 of its GIF, nil when it has none.
    package var exercises: [String: String?]
    /// The rollback floor: the highest `sequence` of a signed index verified with trusted keys at
    /// this cache, by this generation's install or an earlier one (`floor(carrying:verified:)`).
    /// Every install carries it forward — one without keys too, which verifies nothing and so never
    /// lowers or erases it; an install with keys refuses an index with a lower sequence. nil: no
    /// install with keys yet.
    package var indexSequence: Int?
    /// The posters packs installed with this generation (`--with-posters`), sorted by name; nil when
    /// it was installed without posters.
    package var posterPacks: [InstalledPosterPack]?
    /// `"<size>/<GIF sha256>"` → SHA-256 of the installed poster file, for every poster the
    /// generation holds (at ``InstallLayout/posterRelativePath(size:exercise:sha256:)``); nil
    /// without posters. The next install keeps a poster file that still hashes to its entry.
    package var posters: [String: String]?
    /// GIF SHA-256 → the catalog record its file was decoded and checked against. The next install
    /// that keeps the file (its SHA-256 confirmed) under an identical record skips decoding it
    /// again: the same bytes passed the same checks. nil in manifests written before it existed.
    package var checkedGIFs: [String: GIFMetadata]?
    /// The remote index this generation was installed from (or last confirmed unchanged against):
    /// its validators, for the next install's conditional request (a `304` then costs no body and
    /// changes nothing). nil for a local index, a server without `ETag`/`Last-Modified`, and
    /// manifests written before it existed.
    package var index: InstalledIndex?
    /// The pixel size the install chose renditions for (``PackInstaller/preferredPixelSize``); nil:
    /// none asked, `packs[]` installed as before renditions. An install asking for another size is
    /// not "unchanged" and makes no conditional index request on this generation's record.
    package var preferredPixelSize: Int?
    /// With renditions: the SHA-256 of an installed GIF of a rendition beyond the first → the SHA-256
    /// of its exercise's first-resolution GIF (its `packs[]` row), the GIF whose BlurHash, average
    /// colour and posters the exercise shows (posters are keyed by it in ``posters``). nil when
    /// every installed GIF is the first resolution's.
    package var placeholderGIFs: [String: String]?
    /// The image formats the install preferred, in order (``PackInstaller/formats``, format 1.4); nil:
    /// GIF only, as before formats. An install asking for other formats is not "unchanged".
    package var formats: [ImageFormat]?
    /// SHA-256 of an installed image that is not a GIF → its format (`webp`), which names its file
    /// (``InstallLayout/relativePath(exercise:sha256:format:)``); nil when every installed image is a GIF.
    package var imageFormats: [String: ImageFormat]?

    package init(
        generation: Int, layout: InstallLayout, packs: [InstalledPack], exercises: [String: String?],
        indexSequence: Int? = nil, posterPacks: [InstalledPosterPack]? = nil, posters: [String: String]? = nil,
        checkedGIFs: [String: GIFMetadata]? = nil, index: InstalledIndex? = nil,
        preferredPixelSize: Int? = nil, placeholderGIFs: [String: String]? = nil,
        formats: [ImageFormat]? = nil, imageFormats: [String: ImageFormat]? = nil
    ) {
        self.index = index
        self.preferredPixelSize = preferredPixelSize
        self.placeholderGIFs = placeholderGIFs?.isEmpty == true ? nil : placeholderGIFs
        self.formats = formats == [.gif] ? nil : formats
        self.imageFormats = imageFormats?.isEmpty == true ? nil : imageFormats
        let renditions = preferredPixelSize != nil || placeholderGIFs?.isEmpty == false || packs.contains { $0.resolution != nil }
        self.formatVersion =
            self.formats != nil || self.imageFormats != nil
            ? .withFormats
            : renditions ? .withRenditions : .withoutRenditions
        self.generation = generation
        self.layout = layout
        self.packs = packs.sorted { $0.name < $1.name }
        self.exercises = exercises
        self.checkedGIFs = checkedGIFs
        self.indexSequence = indexSequence
        self.posterPacks = posterPacks?.sorted { $0.name < $1.name }
        self.posters = posters
    }

    /// The floor a new generation, or a refreshed manifest, records: the higher of the floor the
    /// installed generation carries (`installed`) and the sequence just verified with trusted keys
    /// (`verified`; nil for an install without keys). Never lower than `installed`, never nil when it is not.
    static func floor(carrying installed: Int?, verified: Int?) -> Int? {
        guard let installed else { return verified }
        return max(installed, verified ?? installed)
    }

    /// The key of ``posters``: `"<size>/<GIF sha256>"`.
    package static func posterKey(size: Int, gifSHA256: String) -> String { "\(size)/\(gifSHA256)" }

    /// The GIF whose placeholder and posters stand for the installed GIF `sha256`: its exercise's
    /// first-resolution GIF (``placeholderGIFs``), or itself.
    package func placeholderGIF(for sha256: String) -> String { placeholderGIFs?[sha256] ?? sha256 }

    /// The format of the installed image `sha256`: ``imageFormats``' (a WebP), else GIF.
    package func imageFormat(for sha256: String) -> ImageFormat { imageFormats?[sha256] == .webp ? .webp : .gif }

    /// The manifest of the installed cache at `cacheDirectory`, or nil when nothing is installed.
    package static func read(cacheDirectory: String) throws(PackClientError) -> InstallManifest? {
        try read(directory: cacheDirectory)
    }

    static func read(directory: String) throws(PackClientError) -> InstallManifest? {
        let path = "\(directory)/\(fileName)"
        guard FileOps.regularFileSize(path) != nil else { return nil }
        let data = try PackIndexSource.readFile(path, maxBytes: 256 << 20)
        do {
            return try JSONValueDecoder.decode(
                InstallManifest.self, from: [UInt8](data),
                limits: JSONLimits(maxBytes: 256 << 20))
        } catch {
            throw .unreadable(location: path, detail: "not a gifpack manifest: \(JSONValueDecoder.describe(error))")
        }
    }

    func encoded() throws(PackClientError) -> [UInt8] {
        try Self.canonicalJSON(self, path: Self.fileName)
    }

    /// Replaces the manifest of the generation at `directory` (a temporary file, fsynced, renamed
    /// over it, the directory fsynced): readers see the old manifest or this one. Only for fields
    /// that say nothing about the files (the index record and its sequence).
    func replace(inDirectory directory: String) throws(PackClientError) {
        let path = "\(directory)/\(Self.fileName)"
        let temporary = "\(directory)/.\(Self.fileName).\(UUID().uuidString)"
        do {
            try FileOps.writeNew(temporary, try encoded())
            try FileOps.sync(temporary)
            try FileOps.move(temporary, to: path)
            try FileOps.sync(directory)
        } catch {
            FileOps.remove(temporary)
            throw error
        }
    }

    static func canonicalJSON<T: Encodable>(_ value: T, path: String) throws(PackClientError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do { return Array(try encoder.encode(value)) + [0x0A] } catch {
            throw .unreadable(location: path, detail: "cannot encode: \(error)")
        }
    }
}

/// One pack recorded in an ``InstallManifest``.
package struct InstalledPack: Sendable, Equatable, Codable {
    package var name: String
    package var version: Int
    /// SHA-256 of the pack file that was installed.
    package var sha256: String
    package var contentDigest: String
    /// Exercises the pack gives the cache: every one it lists, or with renditions those whose
    /// chosen rendition it is.
    package var exercises: Int
    /// The resolution of the pack's GIFs (format 1.3 indexes; nil before).
    package var resolution: Int?

    package init(name: String, version: Int, sha256: String, contentDigest: String, exercises: Int, resolution: Int? = nil) {
        self.resolution = resolution
        self.name = name
        self.version = version
        self.sha256 = sha256
        self.contentDigest = contentDigest
        self.exercises = exercises
    }
}

/// One posters pack (format 1.2) recorded in an ``InstallManifest``.
package struct InstalledPosterPack: Sendable, Equatable, Codable {
    /// `<pack>-posters`.
    package var name: String
    package var version: Int
    /// SHA-256 of the posters pack file the posters came from.
    package var sha256: String
    package var contentDigest: String
    /// The poster sizes installed (longest side, px), ascending.
    package var sizes: [Int]

    package init(name: String, version: Int, sha256: String, contentDigest: String, sizes: [Int]) {
        self.name = name
        self.version = version
        self.sha256 = sha256
        self.contentDigest = contentDigest
        self.sizes = sizes.sorted()
    }
}

/// The remote index an installed generation came from, as ``InstallManifest/index`` records it.
///
/// ```swift
/// manifest.index?.validators.etag       // "\"6650a1b2-4f1e\""
/// ```
package struct InstalledIndex: Sendable, Equatable, Codable {
    /// The file (`index.json.zst` or `index.json`) and its `ETag`/`Last-Modified`.
    package var validators: IndexValidators
    /// Every pack the index lists, sorted: with them a `304` says which packs "all" means.
    package var packs: [String]
    /// The signed index's `expires` (installs with trusted keys): a `304` after it is refused as expired.
    package var expires: String?
    /// The id of the trusted key whose signature verified it (installs with trusted keys): a `304`
    /// counts only while that key is still trusted.
    package var signedBy: String?

    package init(validators: IndexValidators, packs: [String], expires: String? = nil, signedBy: String? = nil) {
        self.validators = validators
        self.packs = packs.sorted()
        self.expires = expires
        self.signedBy = signedBy
    }
}

import GifPackFormat
import GifPackIndexReader

/// The verified content of the packs chosen for one install: which GIF each exercise gets and
/// where in which pack file each GIF is.
///
/// Making a plan runs every check of ``PackChecks/structure(path:pack:limits:report:)`` — the list
/// `verify` runs too: the index description, the pack's real frame sequence against the index (no
/// unlisted entry), the uncompressed size, the end-of-archive frame (exactly 1024 zero bytes) and
/// `catalog.json` against the index — stopping at the first problem. Two packs that give one
/// exercise different GIFs are a ``PackRejection/Reason/conflict``. ``entries`` lists every GIF
/// entry of every pack with its catalog record, so the installer reads, decodes and compares all
/// of them (``GIFMetadataCheck/problems(_:metadata:side:format:pack:entry:)``), including GIFs it does not write.
///
/// ```swift
/// let plan = try InstallPlan(packs: downloaded, limits: .standard)
/// plan.exercises["0001"]   // Optional("ab12…") or .some(nil) for a placeholder
/// ```
struct InstallPlan {
    /// Where to read one GIF.
    struct Source: Sendable {
        let reader: PackFrameReader
        let pack: String
        let entry: GIFEntry
        /// A rendition pack's resolution, its GIFs' larger side (`PackDescription.renditionSide`).
        let side: Int?
        /// The pack catalog's record of this GIF.
        let metadata: GIFMetadata?
        /// False for a GIF a sparse upgrade did not fetch: its frame is not in the file.
        var isPresent = true
        /// The GIF decoded, checked and written while its pack downloaded (``PackFollower``).
        var ready: PackFollower.Ready?
    }

    /// Exercise id → GIF hash (nil: placeholder).
    private(set) var exercises: [String: String?] = [:]
    /// Every GIF entry of every pack, in pack order then hash order.
    private(set) var entries: [Source] = []
    /// Exercise ids by GIF hash, sorted.
    private(set) var idsByHash: [String: [String]] = [:]
    /// With renditions: an installed GIF of a rendition beyond the first → its exercise's
    /// first-resolution GIF and that GIF's placeholder (``RenditionSelection/basis``).
    private(set) var basis: [String: (gif: String, placeholder: GIFPlaceholder?)] = [:]
    let packs: [InstalledPack]

    /// The installed images that are not GIFs (format 1.4's WebPs) → their format.
    var imageFormats: [String: ImageFormat] {
        var formats: [String: ImageFormat] = [:]
        for source in entries where source.entry.imageFormat != .gif && idsByHash[source.entry.sha256] != nil {
            formats[source.entry.sha256] = source.entry.imageFormat
        }
        return formats
    }

    /// `selection`: with renditions, each pack gives only the exercises chosen from it.
    init(packs downloaded: [DownloadedPack], limits: PackLimits, selection: RenditionSelection? = nil) throws(PackClientError) {
        var installed: [InstalledPack] = []
        var owner: [String: String] = [:]
        for item in downloaded {
            let pack = item.pack
            // A sparse upgrade's file holds only the fetched frames: its layout cannot be scanned,
            // and only the description and the catalog apply (PackChecks.sparseStructure).
            let checked =
                item.fetchedGIFs == nil
                ? try PackChecks.structure(path: item.path, pack: pack, limits: limits, checkedCatalog: item.checkedCatalog) {
                    problem throws(PackClientError) in
                    throw .rejected(problem)
                }
                : try PackChecks.sparseStructure(path: item.path, pack: pack, limits: limits)
            guard let checked, checked.entriesReadable, let metadata = checked.metadata else {
                throw .rejected(PackRejection(.unreadable, pack: SafePath.printable(pack.name), detail: "the pack could not be checked"))
            }
            entries += pack.gifs.map {
                Source(
                    reader: checked.reader, pack: pack.name, entry: $0, side: pack.renditionSide, metadata: metadata[$0.sha256],
                    isPresent: item.fetchedGIFs?.contains($0.sha256) ?? true, ready: item.ready[$0.sha256])
            }
            let taken = selection?.taken?[pack.name]
            for exercise in pack.exercises where taken?.contains(exercise.id) ?? true {
                if let existing = exercises[exercise.id], existing != exercise.gif {
                    throw .rejected(
                        PackRejection(
                            .conflict, pack: pack.name, entry: exercise.id,
                            detail: "pack \(owner[exercise.id] ?? "?") gives this exercise a different GIF"))
                }
                exercises[exercise.id] = exercise.gif
                owner[exercise.id] = pack.name
            }
            installed.append(
                InstalledPack(
                    name: pack.name, version: pack.version, sha256: pack.sha256,
                    contentDigest: pack.contentDigest, exercises: taken?.count ?? pack.exercises.count,
                    resolution: pack.resolution))
        }
        for (id, hash) in exercises {
            guard let hash else { continue }
            idsByHash[hash, default: []].append(id)
            if let first = selection?.basis[hash] { basis[hash] = first }
        }
        for hash in idsByHash.keys { idsByHash[hash]?.sort() }
        packs = installed
    }
}

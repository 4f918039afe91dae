import GifPackFormat

/// The verified content of the packs chosen for one install: which GIF each exercise gets and
/// where in which pack file each GIF is.
///
/// Making a plan runs every check that does not need the GIF data: the index description
/// (``PackDescriptionCheck``), the pack's real frame sequence against the index
/// (``FrameLayoutCheck``, so no unlisted entry exists) and `catalog.json` against the index
/// (``CatalogCheck``). Two packs that give one exercise different GIFs are a
/// ``PackRejection/Reason/conflict``. ``entries`` lists every GIF entry of every pack, so the
/// installer reads (and so verifies) all of them, including GIFs it does not need to write.
///
/// ```swift
/// let plan = try InstallPlan(packs: downloaded, limits: .standard)
/// plan.exercises["0001"]   // Optional("ab12…") or .some(nil) for a placeholder
/// ```
struct InstallPlan {
    /// Where to read one GIF.
    struct Source {
        let reader: PackFrameReader
        let pack: String
        let entry: GIFEntry
    }

    /// Exercise id → GIF hash (nil: placeholder).
    private(set) var exercises: [String: String?] = [:]
    /// Every GIF entry of every pack, in pack order then hash order.
    private(set) var entries: [Source] = []
    /// Exercise ids by GIF hash, sorted.
    private(set) var idsByHash: [String: [String]] = [:]
    let packs: [InstalledPack]

    init(packs downloaded: [DownloadedPack], limits: PackLimits) throws(PackClientError) {
        var installed: [InstalledPack] = []
        var owner: [String: String] = [:]
        for item in downloaded {
            let pack = item.pack
            if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }
            let frames: [ZstdFrameExtent]
            let reader: PackFrameReader
            do {
                frames = try ZstdFrames.frameExtents(in: item.path)
                reader = try PackFrameReader(path: item.path)
            } catch {
                throw EntryReading.translate(error, pack: pack.name, entry: pack.file, readerPath: item.path)
            }
            if let problem = FrameLayoutCheck.problems(frames: frames, pack: pack).first { throw .rejected(problem) }
            _ = try CatalogCheck.read(pack: pack, reader: reader)

            entries += pack.gifs.map { Source(reader: reader, pack: pack.name, entry: $0) }
            for exercise in pack.exercises {
                if let existing = exercises[exercise.id], existing != exercise.gif {
                    throw .rejected(PackRejection(.conflict, pack: pack.name, entry: exercise.id,
                                                  detail: "pack \(owner[exercise.id] ?? "?") gives this exercise a different GIF"))
                }
                exercises[exercise.id] = exercise.gif
                owner[exercise.id] = pack.name
            }
            installed.append(InstalledPack(name: pack.name, version: pack.version, sha256: pack.sha256,
                                           contentDigest: pack.contentDigest, exercises: pack.exercises.count))
        }
        for (id, hash) in exercises {
            if let hash { idsByHash[hash, default: []].append(id) }
        }
        for hash in idsByHash.keys { idsByHash[hash]?.sort() }
        packs = installed
    }
}

import GifPackFormat
import GifPackIndexReader

/// One chosen pack's posters for an install with posters (``PackInstaller/withPosters``): its
/// posters pack as the index describes it and, when it had to be fetched, the file.
/// Without a file every poster comes from the installed generation, which was installed from the
/// same posters pack file and still holds each poster intact (checked by SHA-256 before the plan
/// is made and again when it is linked). With ``fetchedPosters`` the file is a sparse upgrade's
/// (``RangeFetcher``): it holds the catalog's frame and those posters' frames; every other poster
/// comes from the installed generation, which holds it with the SHA-256 the new catalog gives.
struct PosterSource: Sendable {
    let posters: PosterPackDescription
    let file: PackDownloader.FetchedFile?
    /// nil: the whole file (size and SHA-256 checked). A set: the paths of the posters whose
    /// frames a sparse file holds.
    var fetchedPosters: Set<String>? = nil
}

/// Where each poster of a new generation comes from, with the SHA-256 it must have.
///
/// Making the plan verifies every fetched posters pack before anything reaches the cache, with the
/// checks `gifpack verify` runs (``PosterPackVerifier``): the file's frames against the index, the
/// end-of-archive frame, `catalog.json` against the content digest and the index, and every poster
/// read through its frame (tar header, size, SHA-256) and decoded as one frame no larger than its
/// size; for a sparse upgrade's file, the catalog and every fetched poster. The first problem
/// refuses the install.
///
/// ```swift
/// let plan = try PosterInstallPlan(sources: sources, previous: previous)
/// plan.expected["80/ab12…"]?.sha256
/// ```
struct PosterInstallPlan {
    /// `"<size>/<GIF sha256>"` → the poster's SHA-256 and length.
    private(set) var expected: [String: (sha256: String, bytes: Int64)] = [:]
    /// `"<size>/<GIF sha256>"` → the verified posters pack holding it; absent: taken from the
    /// previous generation.
    private(set) var readers: [String: PosterPackReader] = [:]
    let packs: [InstalledPosterPack]
    /// Every size of every chosen posters pack, ascending.
    let sizes: [Int]

    init(sources: [PosterSource], previous: GenerationBuilder.Previous?) throws(PackClientError) {
        var packs: [InstalledPosterPack] = []
        for source in sources {
            let posters = source.posters
            if let file = source.file {
                var report = VerificationReport()
                if let fetched = source.fetchedPosters {
                    PosterPackVerifier.verifySparse(posters, path: file.path, fetched: fetched, into: &report)
                } else {
                    PosterPackVerifier.verify(posters, path: file.path, into: &report)
                }
                if let problem = report.problems.first { throw .rejected(problem) }
                let reader = try PosterPackReader(path: file.path, posters: posters)
                for poster in reader.catalog().posters {
                    let key = InstallManifest.posterKey(size: poster.size, gifSHA256: poster.gif)
                    expected[key] = (poster.sha256, poster.bytes)
                    // A sparse file holds only the fetched posters' frames; the rest are linked.
                    if source.fetchedPosters?.contains(poster.path) ?? true { readers[key] = reader }
                }
            } else {
                let recorded = previous?.manifest.posters ?? [:]
                for location in posters.posters {
                    guard let (size, gif) = Self.parse(location.path), case let key = InstallManifest.posterKey(size: size, gifSHA256: gif),
                        let sha256 = recorded[key]
                    else {
                        throw .unreadable(
                            location: SafePath.printable(location.path),
                            detail: "the installed generation does not hold this poster of \(SafePath.printable(posters.name)); install again")
                    }
                    expected[key] = (sha256, location.size)
                }
            }
            packs.append(
                InstalledPosterPack(
                    name: posters.name, version: posters.version, sha256: posters.sha256,
                    contentDigest: posters.contentDigest, sizes: posters.sizes))
        }
        self.packs = packs
        sizes = Array(Set(packs.flatMap(\.sizes))).sorted()
    }

    /// `posters/<size>/<sha256>.gif` → (size, sha256); nil for any other path.
    static func parse(_ path: String) -> (size: Int, sha256: String)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "posters", let size = Int(parts[1]), (16...512).contains(size), parts[2].hasSuffix(".gif")
        else { return nil }
        let hash = String(parts[2].dropLast(4))
        guard SafePath.isSHA256(hash), path == PosterPackDescription.path(size: size, sha256: hash) else { return nil }
        return (size, hash)
    }
}

extension GenerationBuilder {
    /// Places every poster the installed exercises need, at ``InstallLayout/posterRelativePath(size:exercise:sha256:)``:
    /// a file of the previous generation that still hashes to the poster's SHA-256 is hard-linked,
    /// otherwise the poster is read from its verified posters pack (SHA-256 checked) into a new file;
    /// exercises sharing a GIF share its poster through hard links. Returns the manifest's records.
    mutating func placePosters(
        _ posters: PosterInstallPlan, plan: InstallPlan,
        directories: inout [String]
    ) throws(PackClientError) -> [String: String] {
        let root = "\(staging)/posters"
        try FileOps.makeDirectory(root)
        directories.append(root)
        for size in posters.sizes {
            try FileOps.makeDirectory("\(root)/\(size)")
            directories.append("\(root)/\(size)")
        }
        let reusable = previous?.posterFilesByKey ?? [:]
        var records: [String: String] = [:]
        for hash in plan.idsByHash.keys.sorted() {
            guard let ids = plan.idsByHash[hash], !ids.isEmpty else { continue }
            // A GIF of another rendition shows its exercise's first-resolution poster.
            let posterGIF = plan.basis[hash]?.gif ?? hash
            for size in posters.sizes {
                let key = InstallManifest.posterKey(size: size, gifSHA256: posterGIF)
                guard let want = posters.expected[key] else { continue }
                let names =
                    layout == .byID
                    ? ids.map { layout.posterRelativePath(size: size, exercise: $0, sha256: hash) }
                    : [layout.posterRelativePath(size: size, exercise: ids[0], sha256: hash)]
                let first = "\(staging)/\(names[0])"
                if let old = reusable[key], Self.holds(old, sha256: want.sha256, size: want.bytes) {
                    try Self.linkOrCopy(old, to: first)
                    counts.postersReused += 1
                } else if let reader = posters.readers[key] {
                    let bytes = try reader.poster(size: size, gifSHA256: posterGIF)
                    try FileOps.writeNew(first, bytes)
                    recordWritten(first)
                    counts.postersWritten += 1
                } else {
                    throw .unreadable(
                        location: reusable[key] ?? key,
                        detail: "the previous generation no longer holds this poster intact and the upgrade did not fetch it; install again")
                }
                records[key] = want.sha256
                for name in names.dropFirst() {
                    try Self.linkOrCopy(first, to: "\(staging)/\(name)")
                    counts.linksCreated += 1
                }
            }
        }
        return records
    }
}

extension GenerationBuilder.Previous {
    /// `"<size>/<GIF sha256>"` → a poster file of this generation (per the manifest; not checked).
    var posterFilesByKey: [String: String] {
        guard let recorded = manifest.posters else { return [:] }
        // Posters are keyed by the first-resolution GIF (InstallManifest.placeholderGIFs), named by the installed one.
        var installedByPosterGIF: [String: (id: String, gif: String)] = [:]
        for (id, hash) in manifest.exercises.sorted(by: { $0.key < $1.key }) {
            guard let hash, ExerciseID.isValid(id), SafePath.isSHA256(hash) else { continue }
            let posterGIF = manifest.placeholderGIF(for: hash)
            if installedByPosterGIF[posterGIF] == nil { installedByPosterGIF[posterGIF] = (id, hash) }
        }
        var files: [String: String] = [:]
        for key in recorded.keys {
            let parts = key.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let size = Int(parts[0]), (16...512).contains(size),
                let installed = installedByPosterGIF[String(parts[1])]
            else { continue }
            files[key] = "\(directory)/\(manifest.layout.posterRelativePath(size: size, exercise: installed.id, sha256: installed.gif))"
        }
        return files
    }

    /// True when this generation came from the same posters pack file and still holds every poster
    /// it lists, each hashing to the SHA-256 recorded when it was installed: then the posters pack
    /// need not be fetched at all.
    func holdsEveryPoster(of posters: PosterPackDescription) -> Bool {
        guard manifest.posterPacks?.contains(where: { $0.name == posters.name && $0.sha256 == posters.sha256 }) == true
        else { return false }
        return heldPosters(of: posters).count == posters.posters.count
    }

    /// The posters of `posters` (their paths) this generation holds intact: a file of the size the
    /// index gives, hashing to the SHA-256 recorded when it was installed. Whether that is the
    /// SHA-256 the new posters catalog gives is for ``postersDiffering(from:among:)`` to say.
    func heldPosters(of posters: PosterPackDescription) -> Set<String> {
        guard let recorded = manifest.posters else { return [] }
        let files = posterFilesByKey
        var held = Set<String>()
        for location in posters.posters {
            guard let (size, gif) = PosterInstallPlan.parse(location.path),
                case let key = InstallManifest.posterKey(size: size, gifSHA256: gif),
                let sha256 = recorded[key], let file = files[key],
                GenerationBuilder.holds(file, sha256: sha256, size: location.size)
            else { continue }
            held.insert(location.path)
        }
        return held
    }

    /// Of the posters at `paths`, those whose recorded SHA-256 is not the one `catalog` gives (the
    /// same GIF's poster made differently, e.g. by a newer builder), sorted.
    func postersDiffering(from catalog: PosterPackCatalog, among paths: Set<String>) -> [String] {
        let recorded = manifest.posters ?? [:]
        return catalog.posters.filter { poster in
            paths.contains(poster.path)
                && recorded[InstallManifest.posterKey(size: poster.size, gifSHA256: poster.gif)] != poster.sha256
        }.map(\.path).sorted()
    }
}

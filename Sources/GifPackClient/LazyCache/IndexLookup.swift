import GifPackFormat
import GifPackIndexReader

/// An index made ready for lookups: exercise id → its GIF (hash, size, pack, frame), GIF hash →
/// where it is, built once per index version and shared by every lookup, so an answer costs the
/// same at 100,000 exercises as at 40 (``LazyGIFCache``, ``GIFLoader``).
///
/// The choice per exercise is ``RenditionChoice/pack(forExercise:in:pixels:)``'s (the first pack of
/// `packs[]` listing it, or with a preferred size its rendition), made for every exercise at once,
/// then (format 1.4) that pack's in the first of `formats` the index has for it (``FormatChoice``:
/// its WebP pack's row when that lists the exercise); the pack checks (``PackDescriptionCheck``)
/// run once per pack.
///
/// ```swift
/// let lookup = IndexLookup(index, pixels: 360, formats: [.webp, .gif], limits: .standard)
/// if case .gif(let pack, let entry) = try lookup.gif(forExercise: "0001") { … }
/// ```
final class IndexLookup: Sendable {
    let index: PackIndex
    /// `packs[]` then `renditionPacks[]` (``PackIndex/gifPacks``), then the format packs that stand
    /// for some of them (format 1.4, with a format other than GIF preferred).
    let packs: [PackDescription]
    /// The first problem of each pack of ``packs``, nil when it has none.
    private let packProblems: [PackRejection?]
    /// Exercise id → the pack that gives its GIF and that GIF's entry (-1: listed without a GIF;
    /// -2: the row's GIF is not among the pack's GIFs).
    private let exercises: [String: (pack: Int32, entry: Int32)]
    /// GIF hash → the first pack (of ``packs``) with both the entry and an exercise showing it.
    private let hashes: [String: (pack: Int32, entry: Int32, exercise: String)]

    /// What an exercise's lookup found.
    enum Answer {
        case gif(pack: PackDescription, entry: GIFEntry)
        case noGIF
    }

    init(_ index: PackIndex, pixels: Int?, formats: [ImageFormat] = [.gif], limits: PackLimits) {
        self.index = index
        var packs = index.gifPacks
        // Format 1.4: a GIF pack (by its place in packs) → the place of the format pack that stands for it.
        var standIn: [Int: Int] = [:]
        if FormatChoice.normalized(formats) != [.gif] {
            for (at, pack) in index.gifPacks.enumerated() {
                let chosen = FormatChoice.pack(for: pack, in: index, formats: formats)
                guard chosen.name != pack.name else { continue }
                packs.append(chosen)
                standIn[at] = packs.count - 1
            }
        }
        self.packs = packs
        packProblems = packs.map { PackDescriptionCheck.problems(in: $0, limits: limits).first }
        var entryOf: [[String: Int32]] = []
        entryOf.reserveCapacity(packs.count)
        for pack in packs {
            var entries: [String: Int32] = [:]
            entries.reserveCapacity(pack.gifs.count)
            for (at, gif) in pack.gifs.enumerated() where entries[gif.sha256] == nil { entries[gif.sha256] = Int32(at) }
            entryOf.append(entries)
        }
        var rows: [Int: [String: String?]] = [:]
        for at in standIn.values {
            rows[at] = Dictionary(packs[at].exercises.map { ($0.id, $0.gif) }, uniquingKeysWith: { first, _ in first })
        }
        var exercises: [String: (pack: Int32, entry: Int32)] = [:]
        for (id, choice) in RenditionChoice.allChoices(in: index, pixels: pixels) {
            // The format pack's row, when it lists the exercise; else the GIF pack's.
            if let at = standIn[choice.pack], let row = rows[at]?[id] {
                exercises[id] = (Int32(at), row.map { entryOf[at][$0] ?? -2 } ?? -1)
                continue
            }
            let entry: Int32 = choice.gif.map { entryOf[choice.pack][$0] ?? -2 } ?? -1
            exercises[id] = (Int32(choice.pack), entry)
        }
        self.exercises = exercises
        var hashes: [String: (pack: Int32, entry: Int32, exercise: String)] = [:]
        // The packs that stand in for GIF packs first: a GIF a WebP pack lists too (one whose WebP did
        // not beat it) is fetched from the WebP pack, so an app preferring WebP reads no GIF pack.
        for at in standIn.values.sorted() + Array(index.gifPacks.indices) {
            for row in packs[at].exercises {
                guard let gif = row.gif, hashes[gif] == nil, let entry = entryOf[at][gif] else { continue }
                hashes[gif] = (Int32(at), entry, row.id)
            }
        }
        self.hashes = hashes
    }

    /// The GIF of exercise `id` (``PackClientError/unknownExercise(_:)`` when no pack lists it; a
    /// refused pack or a row whose GIF the pack lacks: ``PackClientError/rejected(_:)``).
    func gif(forExercise id: String) throws(PackClientError) -> Answer {
        guard let found = exercises[id] else { throw .unknownExercise(id) }
        if found.entry == -1 { return .noGIF }
        let pack = packs[Int(found.pack)]
        if let problem = packProblems[Int(found.pack)] { throw .rejected(problem) }
        guard found.entry >= 0 else {
            throw .rejected(PackRejection(.missingEntry, pack: pack.name, entry: id, detail: "its GIF is not among the pack's GIFs"))
        }
        return .gif(pack: pack, entry: pack.gifs[Int(found.entry)])
    }

    /// Where an exercise's GIF is, without the pack checks.
    enum ExerciseEntry: Equatable {
        /// Its GIF's entry in its pack.
        case gif(GIFEntry)
        /// Listed without a GIF (or its pack lacks the GIF).
        case listedWithoutGIF
        /// No pack lists it.
        case unlisted
    }

    /// The entry of exercise `id`'s GIF without the pack checks.
    func entry(forExercise id: String) -> ExerciseEntry {
        guard let found = exercises[id] else { return .unlisted }
        guard found.entry >= 0 else { return .listedWithoutGIF }
        return .gif(packs[Int(found.pack)].gifs[Int(found.entry)])
    }

    /// The GIF whose SHA-256 is `sha256`: its pack, entry and an exercise showing it; nil when no
    /// pack has it (a refused pack: ``PackClientError/rejected(_:)``).
    func gif(sha256: String) throws(PackClientError) -> (pack: PackDescription, entry: GIFEntry, exercise: String)? {
        guard let found = hashes[sha256] else { return nil }
        if let problem = packProblems[Int(found.pack)] { throw .rejected(problem) }
        let pack = packs[Int(found.pack)]
        return (pack, pack.gifs[Int(found.entry)], found.exercise)
    }
}

extension RenditionChoice {
    /// ``pack(forExercise:in:pixels:)`` for every exercise of `index` at once: exercise id → the
    /// index (in ``PackIndex/allPacks``) of its pack and its GIF's hash (nil: none).
    static func allChoices(in index: PackIndex, pixels: Int?) -> [String: (pack: Int, gif: String?)] {
        var chosen: [String: (pack: Int, gif: String?)] = [:]
        guard let pixels, let renditions = index.renditionPacks, !renditions.isEmpty else {
            // The first pack of packs[] listing the exercise, its first row there.
            for (at, pack) in index.packs.enumerated() {
                for row in pack.exercises where chosen[row.id] == nil { chosen[row.id] = (at, row.gif) }
            }
            return chosen
        }
        // Each pack's first row per exercise, in the order packs[] then renditions, as pack(forExercise:) sees them.
        var candidates: [String: [(resolution: Int, pack: Int, gif: String)]] = [:]
        var listing: [String: [(resolution: Int, pack: Int)]] = [:]
        for (at, pack) in (index.packs + renditions).enumerated() {
            let resolution = resolution(of: pack, in: index)
            var seen = Set<String>()
            for row in pack.exercises where seen.insert(row.id).inserted {
                listing[row.id, default: []].append((resolution, at))
                if let gif = row.gif { candidates[row.id, default: []].append((resolution, at, gif)) }
            }
        }
        for (id, listed) in listing {
            let options = candidates[id] ?? []
            if let wanted = resolution(for: pixels, among: options.map(\.resolution)),
                let pick = options.first(where: { $0.resolution == wanted })
            {
                chosen[id] = (pick.pack, pick.gif)
            } else if let row = resolution(for: pixels, among: listed.map(\.resolution)),
                let pick = listed.first(where: { $0.resolution == row })
            {
                chosen[id] = (pick.pack, nil)
            }
        }
        return chosen
    }
}

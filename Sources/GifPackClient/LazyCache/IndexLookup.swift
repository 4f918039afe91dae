import GifPackFormat
import GifPackIndexReader

/// An index made ready for lookups: exercise id → its GIF (hash, size, pack, frame), GIF hash →
/// where it is, built once per index version and shared by every lookup, so an answer costs the
/// same at 100,000 exercises as at 40 (``LazyGIFCache``, ``GIFLoader``).
///
/// The choice per exercise is ``RenditionChoice/pack(forExercise:in:pixels:)``'s (the first pack of
/// `packs[]` listing it, or with a preferred size its rendition), made for every exercise at once;
/// the pack checks (``PackDescriptionCheck``) run once per pack.
///
/// ```swift
/// let lookup = IndexLookup(index, pixels: 360, limits: .standard)
/// if case .gif(let pack, let entry) = try lookup.gif(forExercise: "0001") { … }
/// ```
final class IndexLookup: Sendable {
    let index: PackIndex
    /// `packs[]` then `renditionPacks[]` (``PackIndex/allPacks``).
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

    init(_ index: PackIndex, pixels: Int?, limits: PackLimits) {
        self.index = index
        let packs = index.allPacks
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
        var exercises: [String: (pack: Int32, entry: Int32)] = [:]
        for (id, choice) in RenditionChoice.allChoices(in: index, pixels: pixels) {
            let entry: Int32 = choice.gif.map { entryOf[choice.pack][$0] ?? -2 } ?? -1
            exercises[id] = (Int32(choice.pack), entry)
        }
        self.exercises = exercises
        var hashes: [String: (pack: Int32, entry: Int32, exercise: String)] = [:]
        for (at, pack) in packs.enumerated() {
            for row in pack.exercises {
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
               let pick = options.first(where: { $0.resolution == wanted }) {
                chosen[id] = (pick.pack, pick.gif)
            } else if let row = resolution(for: pixels, among: listed.map(\.resolution)),
                      let pick = listed.first(where: { $0.resolution == row }) {
                chosen[id] = (pick.pack, nil)
            }
        }
        return chosen
    }
}

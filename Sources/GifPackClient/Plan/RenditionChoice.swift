import GifPackFormat

/// Which rendition of an exercise's GIF an app gets (format 1.3 renditions, `docs/FORMAT.md`).
///
/// An index of format 1.3 can list each pack at several resolutions: `packs[]` at the first one,
/// `renditionPacks[]` (`all.360`, …) at the others. For a wanted pixel size `p` — a view's width in
/// points times the screen's scale — an exercise gets the smallest rendition whose resolution is at
/// least `p`, else the largest there is; a rendition whose row has no GIF (the API served a smaller
/// size) does not count. ``GIFLoader/Configuration/preferredPixelSize`` chooses this way, in every
/// tier; an index without renditions
/// (1.0–1.2) has one rendition, so every size gets it.
///
/// ```swift
/// let pixels = RenditionChoice.pixelSize(points: 120, scale: 3)          // 360
/// RenditionChoice.resolution(for: pixels, among: [180, 360, 720])         // 360
/// RenditionChoice.resolution(for: 1000, among: [180, 360])                // 360: the largest there is
/// ```
public enum RenditionChoice {
    /// The pixels a view of `points` needs on a screen of `scale` (rounded up; at least 1).
    public static func pixelSize(points: Double, scale: Double) -> Int {
        let pixels = (points * scale).rounded(.up)
        guard pixels.isFinite, pixels >= 1 else { return 1 }
        return pixels >= Double(Int32.max) ? Int(Int32.max) : Int(pixels)
    }

    /// The smallest of `resolutions` at least `pixels`, else the largest; nil when there is none.
    package static func resolution(for pixels: Int, among resolutions: [Int]) -> Int? {
        resolutions.filter { $0 >= pixels }.min() ?? resolutions.max()
    }

    /// The resolution of a pack of `index`: its own (format 1.3), else the index's, else 0 (the
    /// source's own size, one rendition).
    static func resolution(of pack: PackDescription, in index: PackIndex) -> Int {
        pack.resolution ?? index.source.resolution ?? 0
    }

    /// The manifest pack a pack belongs to: `all` for `all`, its renditions `all.360`, … and (format
    /// 1.4) its other formats `all.180.webp`, ….
    static func family(of name: String) -> String {
        let parts = name.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, Int(parts[1]) != nil else { return name }
        return String(parts[0])
    }

    /// The pack of `index` that gives exercise `id` its GIF for `pixels` (nil: no preference, the
    /// first of `packs[]` listing it, as before renditions) and the GIF's hash (nil: the exercise has
    /// none; show its placeholder). nil when no pack lists the exercise.
    package static func pack(
        forExercise id: String, in index: PackIndex,
        pixels: Int?
    ) -> (pack: PackDescription, gif: String?)? {
        let first = index.packs.first { $0.exercises.contains { $0.id == id } }
        guard let pixels, let renditions = index.renditionPacks, !renditions.isEmpty else {
            return first.map { ($0, $0.exercises.first { $0.id == id }?.gif) }
        }
        var candidates: [(resolution: Int, pack: PackDescription, gif: String)] = []
        var listing: [(resolution: Int, pack: PackDescription)] = []
        for pack in index.packs + renditions {
            guard let row = pack.exercises.first(where: { $0.id == id }) else { continue }
            listing.append((resolution(of: pack, in: index), pack))
            if let gif = row.gif { candidates.append((resolution(of: pack, in: index), pack, gif)) }
        }
        guard let wanted = resolution(for: pixels, among: candidates.map(\.resolution)),
            let chosen = candidates.first(where: { $0.resolution == wanted })
        else {
            let row = resolution(for: pixels, among: listing.map(\.resolution))
            return listing.first { $0.resolution == row }.map { ($0.pack, nil) }
        }
        return (chosen.pack, chosen.gif)
    }
}

/// The packs an install with a preferred pixel size fetches, and which exercises each gives
/// (``PackInstaller/preferredPixelSize``).
///
/// For each chosen manifest pack (`all`), its family is the pack and its renditions (`all.360`, …);
/// each exercise of the family takes its GIF from the rendition ``RenditionChoice`` picks among
/// those that have one (an exercise with none takes its row, a placeholder, from the family's
/// lowest resolution). Only packs that give at least one exercise are fetched, so an install of
/// 360 px never downloads a byte of the 180 px packs when every exercise has a 360 rendition.
struct RenditionSelection: Sendable {
    /// The packs to fetch, sorted by name.
    let packs: [PackDescription]
    /// Pack name → the exercises it gives (nil: every exercise it lists, as before renditions).
    let taken: [String: Set<String>]?
    /// GIF SHA-256 of a rendition beyond the first → its exercise's first-resolution GIF (the
    /// `packs[]` row's), whose placeholder and posters the exercise shows, and that GIF's placeholder.
    let basis: [String: (gif: String, placeholder: GIFPlaceholder?)]

    init(packs: [PackDescription], taken: [String: Set<String>]?, basis: [String: (gif: String, placeholder: GIFPlaceholder?)]) {
        self.packs = packs
        self.taken = taken
        self.basis = basis
    }

    /// `chosen`: the packs an install names (sorted, no repeats); `pixels`: the preferred size.
    init(chosen: [PackDescription], index: PackIndex, pixels: Int?) {
        guard let pixels, let renditions = index.renditionPacks, !renditions.isEmpty else {
            packs = chosen
            taken = nil
            basis = [:]
            return
        }
        // A pack of packs[] stands for its family; a rendition pack named on its own is installed whole.
        let firstNames = Set(index.packs.map(\.name))
        var families: [String: [PackDescription]] = [:]
        var taken: [String: Set<String>] = [:]
        var basis: [String: (gif: String, placeholder: GIFPlaceholder?)] = [:]
        var used: [String: PackDescription] = [:]
        for pack in chosen {
            if firstNames.contains(pack.name) {
                families[pack.name] = [pack] + renditions.filter { RenditionChoice.family(of: $0.name) == pack.name }
            } else {
                taken[pack.name, default: []].formUnion(pack.exercises.map(\.id))
                used[pack.name] = pack
            }
        }
        for family in families.values {
            let members = family.sorted { RenditionChoice.resolution(of: $0, in: index) < RenditionChoice.resolution(of: $1, in: index) }
            let picked = Self.pick(members, index: index, pixels: pixels)
            for (name, ids) in picked.taken {
                taken[name, default: []].formUnion(ids)
                used[name] = members.first { $0.name == name }
            }
            basis.merge(picked.basis) { first, _ in first }
        }
        packs = used.values.sorted { $0.name < $1.name }
        self.taken = taken
        self.basis = basis
    }

    /// The GIFs of `pack` no exercise takes from it: a fetch need not bring them.
    func unneededGIFs(of pack: PackDescription) -> Set<String> {
        guard let ids = taken?[pack.name] else { return [] }
        var needed = Set<String>()
        for row in pack.exercises where ids.contains(row.id) { if let gif = row.gif { needed.insert(gif) } }
        return Set(pack.gifs.map(\.sha256)).subtracting(needed)
    }

    /// The distinct GIFs the install places.
    var gifCount: Int {
        var gifs = Set<String>()
        for pack in packs {
            for row in pack.exercises where taken?[pack.name]?.contains(row.id) ?? true { if let gif = row.gif { gifs.insert(gif) } }
        }
        return gifs.count
    }

    /// One family's choice: each exercise's pack, and the first-resolution GIF of each GIF chosen at another.
    private static func pick(_ members: [PackDescription], index: PackIndex, pixels: Int)
        -> (taken: [String: Set<String>], basis: [String: (gif: String, placeholder: GIFPlaceholder?)])
    {
        var rows: [String: [(resolution: Int, pack: String, gif: String?)]] = [:]
        for pack in members {
            let resolution = RenditionChoice.resolution(of: pack, in: index)
            for row in pack.exercises { rows[row.id, default: []].append((resolution, pack.name, row.gif)) }
        }
        let placeholders = Dictionary(members.flatMap(\.gifs).map { ($0.sha256, $0.placeholder) }, uniquingKeysWith: { first, _ in first })
        let firstNames = Set(index.packs.map(\.name))
        var taken: [String: Set<String>] = [:]
        var basis: [String: (gif: String, placeholder: GIFPlaceholder?)] = [:]
        for (id, options) in rows {
            let withGIF = options.filter { $0.gif != nil }
            let wanted = RenditionChoice.resolution(for: pixels, among: withGIF.map(\.resolution))
            // An exercise with no GIF at any resolution takes its row (a placeholder) from the rendition
            // the size would choose, so it costs no pack the other exercises do not need.
            let row = RenditionChoice.resolution(for: pixels, among: options.map(\.resolution))
            guard let chosen = withGIF.first(where: { $0.resolution == wanted }) ?? options.first(where: { $0.resolution == row })
            else { continue }
            taken[chosen.pack, default: []].insert(id)
            if let gif = chosen.gif, !firstNames.contains(chosen.pack),
                let first = options.first(where: { firstNames.contains($0.pack) })?.gif, first != gif
            {
                basis[gif] = (first, placeholders[first] ?? nil)
            }
        }
        return (taken, basis)
    }
}

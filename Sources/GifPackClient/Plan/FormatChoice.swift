import GifPackFormat

/// Which image format an app gets of a pack (format 1.4, `docs/FORMAT.md`, "WebP renditions").
///
/// An app names the formats it displays in order of preference (``GIFLoader/Configuration/formats``,
/// ``PackInstaller/formats``, `--format`). For each GIF pack an install or a lookup would use —
/// a pack of `packs[]`, or the rendition ``RenditionChoice`` picked in `renditionPacks[]` — it takes
/// the first of those formats the index has for that pack: GIF is the pack itself, WebP its
/// `formatPacks[]` entry `<pack>.<resolution>.webp`. GIF is always the last resort, so a list
/// without it still works; formats this client does not know are ignored. With `[.gif]`, the
/// default, `formatPacks[]` is never read, as by a client before 1.4.
package enum FormatChoice {
    /// The formats in order, each once, known ones only, ending with GIF when the list lacks it.
    package static func normalized(_ formats: [ImageFormat]) -> [ImageFormat] {
        var seen = Set<ImageFormat>()
        var list = formats.filter { $0.isKnown && seen.insert($0).inserted }
        if !seen.contains(.gif) { list.append(.gif) }
        return list
    }

    /// What a manifest records of `formats`: nil for GIF only (as before formats).
    static func recorded(_ formats: [ImageFormat]) -> [ImageFormat]? {
        let list = normalized(formats)
        return list == [.gif] ? nil : list
    }

    /// The pack that gives `pack`'s exercises in the first of `formats` the index has for it: its
    /// `formatPacks[]` entry, or `pack` itself (GIF).
    package static func pack(for pack: PackDescription, in index: PackIndex, formats: [ImageFormat]) -> PackDescription {
        guard pack.format == nil else { return pack }
        for format in normalized(formats) {
            if format == .gif { return pack }
            if let other = index.formatPack(format, for: pack) { return other }
        }
        return pack
    }

    /// ``RenditionChoice/pack(forExercise:in:pixels:)`` in the first of `formats` the index has for
    /// the chosen pack: its format pack and that pack's row for the exercise, when it lists it.
    package static func pack(
        forExercise id: String, in index: PackIndex, pixels: Int?,
        formats: [ImageFormat]
    ) -> (pack: PackDescription, gif: String?)? {
        guard let found = RenditionChoice.pack(forExercise: id, in: index, pixels: pixels) else { return nil }
        let chosen = pack(for: found.pack, in: index, formats: formats)
        guard chosen.name != found.pack.name, let row = chosen.exercises.first(where: { $0.id == id }) else { return found }
        return (chosen, row.gif)
    }
}

extension RenditionSelection {
    /// This selection with each GIF pack replaced by the pack of the first of `formats` the index
    /// has for it (``FormatChoice``): the same exercises taken from it, and each of its images that
    /// is not its exercise's first-resolution GIF standing on that GIF for placeholders and posters
    /// (``basis``: a WebP shows its GIF's BlurHash, colour and posters).
    func preferring(_ formats: [ImageFormat], in index: PackIndex) -> RenditionSelection {
        guard FormatChoice.normalized(formats) != [.gif], index.formatPacks != nil else { return self }
        var packs: [PackDescription] = []
        var taken = self.taken
        var basis = self.basis
        let firstNames = Set(index.packs.map(\.name))
        for pack in self.packs {
            let chosen = FormatChoice.pack(for: pack, in: index, formats: formats)
            packs.append(chosen)
            guard chosen.name != pack.name else { continue }
            let ids = taken?.removeValue(forKey: pack.name)
            if let ids { taken?[chosen.name] = ids }
            // The exercise's first-resolution GIF: the GIF pack's own row (a packs[] pack), or the one its GIF already stands on.
            let gifRows = Dictionary(pack.exercises.map { ($0.id, $0.gif) }, uniquingKeysWith: { first, _ in first })
            let placeholders = Dictionary(pack.gifs.map { ($0.sha256, $0.placeholder) }, uniquingKeysWith: { first, _ in first })
            for row in chosen.exercises where ids?.contains(row.id) ?? true {
                guard let image = row.gif, let gif = gifRows[row.id] ?? nil else { continue }
                let first = self.basis[gif] ?? (firstNames.contains(pack.name) ? (gif, placeholders[gif] ?? nil) : nil)
                if let first, first.gif != image, basis[image] == nil { basis[image] = first }
            }
        }
        return RenditionSelection(packs: packs.sorted { $0.name < $1.name }, taken: taken, basis: basis)
    }
}

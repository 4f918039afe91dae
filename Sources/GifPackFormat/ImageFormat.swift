/// The image format of a pack or of one of its entries (format 1.4): `gif`, or `webp` for the
/// animated WebP renditions of `formatPacks[]` (docs/FORMAT.md, "WebP renditions (1.4)").
///
/// A string rather than a closed enum, so that an index naming a format this reader does not know
/// still decodes: the reader leaves such a `formatPacks[]` entry out (``PackIndex/formatPacks``)
/// instead of refusing the index.
///
/// ```swift
/// var configuration = GIFLoader.Configuration()
/// configuration.formats = [.webp, .gif]   // WebP where the index has it, else the GIFs
/// ```
package struct ImageFormat: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The format's name as the index writes it (`"gif"`, `"webp"`).
    package var rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// GIF (every pack of `packs[]` and `renditionPacks[]`; an entry without `format`).
    package static let gif = ImageFormat(rawValue: "gif")
    /// Animated (or still) WebP in a RIFF container.
    package static let webp = ImageFormat(rawValue: "webp")

    /// The formats this reader knows: the others' `formatPacks[]` entries are left out when an index is read.
    package static let known: [ImageFormat] = [.gif, .webp]

    /// True for ``gif`` and ``webp``.
    package var isKnown: Bool { Self.known.contains(self) }

    package var description: String { rawValue }

    /// The tar path of an entry of this format with that SHA-256: `gifs/<sha256>.gif` for a GIF,
    /// `images/<sha256>.webp` for a WebP (nil for a format this reader does not know).
    package func entryPath(forSHA256 hash: String) -> String? {
        switch self {
        case .gif: GIFEntry.path(forSHA256: hash)
        case .webp: "images/\(hash).webp"
        default: nil
        }
    }

    /// The file name extension an installed image of this format takes: `webp` for a WebP, else `gif`.
    package var fileExtension: String { self == .webp ? "webp" : "gif" }
}

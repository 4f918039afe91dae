/// The version of the pack and index format described in `docs/FORMAT.md`.
///
/// A reader accepts any index whose major version equals its own and refuses a newer major version:
/// minor versions only add optional fields.
///
/// ```swift
/// let version = try FormatVersion(parsing: "1.0")
/// version.isReadable // true for any "1.x"
/// ```
package struct FormatVersion: Sendable, Equatable, Comparable, CustomStringConvertible, Codable {
    package var major: Int
    package var minor: Int

    /// The format this library writes. 1.1 added the signed index's `sequence` and `expires`; 1.2 added
    /// GIF placeholders and posters packs; 1.3 added renditions (`renditionPacks`, `resolutions`); 1.4
    /// added image formats beside GIF (`formatPacks`, `formats`, an entry's `format`). Readers of
    /// earlier minor versions ignore the fields they do not know.
    package static let current = FormatVersion(major: 1, minor: 4)

    /// What an index with image formats beside GIF says (`formatPacks[]`): 1.4.
    package static let withFormats = FormatVersion(major: 1, minor: 4)

    /// What an index with renditions and no other image format says: 1.3.
    package static let withRenditions = FormatVersion(major: 1, minor: 3)

    /// What an index without renditions and every pack's `catalog.json` say: 1.3 changed neither, so
    /// a build of one resolution writes the bytes it wrote before.
    package static let withoutRenditions = FormatVersion(major: 1, minor: 2)

    package init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// Parses `"MAJOR.MINOR"`; returns nil for anything else.
    package init?(parsing text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let major = Int(parts[0]), let minor = Int(parts[1]), major >= 0, minor >= 0 else {
            return nil
        }
        self.init(major: major, minor: minor)
    }

    /// True when a reader of `FormatVersion.current` can read this version.
    package var isReadable: Bool { major == FormatVersion.current.major }

    package var description: String { "\(major).\(minor)" }

    package static func < (lhs: FormatVersion, rhs: FormatVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = FormatVersion(parsing: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "format version \"\(text)\" is not MAJOR.MINOR"))
        }
        self = version
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The GIF size a build asks its source for: resolved once by the manifest loader and carried by
/// every stage that needs it (the image URL, the state's key, the size check, the index).
///
/// ```swift
/// let manifest = try ManifestLoader().load(path: "gifpack.yaml", environment: env)
/// manifest.source.resolutions          // [.pixels(180)] for `resolution: 180` or `resolutions: [180]`
/// Resolution.pixels(360).matches(width: 180, height: 180)   // false: the plan served less
/// ```
package enum Resolution: Sendable, Hashable, CustomStringConvertible {
    /// RapidAPI `/image?resolution=<px>`: a GIF of this rendition has `px` as its larger side.
    case pixels(Int)
    /// The source's one size (the v1 API's `gifUrl`), whatever it is: no size to ask for or check.
    case sourceDefault

    /// The resolutions RapidAPI's `/image` accepts.
    package static let rapidAPIChoices = [180, 360, 720, 1080]

    /// The pixels asked for, or nil for the source's own size.
    package var pixels: Int? {
        if case .pixels(let pixels) = self { pixels } else { nil }
    }

    /// The state database's `resolution` column: the pixels, or 0 for the source's own size (the
    /// values every earlier gifpack wrote, so a database of theirs keeps its rows).
    package var stateKey: Int { pixels ?? 0 }

    /// Whether a GIF of this size is this rendition: its larger side is the pixels asked for (any
    /// size is the source's own).
    package func matches(width: Int, height: Int) -> Bool {
        pixels.map { max(width, height) == $0 } ?? true
    }

    package var description: String { pixels.map { "\($0) px" } ?? "the source's own size" }
}

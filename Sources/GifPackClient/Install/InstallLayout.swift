import GifPackFormat

/// How installed GIFs are named inside the cache directory.
///
/// - ``byID`` (`by-id`, the default): `<cache>/<exerciseId>.gif`, the layout an app's cache lookup
///   already uses. Exercises that share a GIF get one hard link each to the same file (a copy where
///   the file system refuses links). Exercises without a GIF have no file: show a placeholder.
/// - ``byHash`` (`by-hash`): `<cache>/gifs/<sha256>.gif`, each distinct GIF once, plus
///   `<cache>/index-by-id.json` mapping every exercise id to its hash (or `null`).
///
/// An install that prefers WebP (format 1.4, ``PackInstaller/formats``) names a WebP `.webp`
/// instead (`<cache>/<exerciseId>.webp`, `<cache>/gifs/<sha256>.webp`); the GIFs a WebP pack lists
/// keep `.gif`. ``InstalledCache/gifPath(forExercise:)`` gives either.
///
/// Posters (`--with-posters`) follow the same rule: `<cache>/posters/<size>/<id>.gif` or
/// `<cache>/posters/<size>/<sha256>.gif` (the GIF's hash).
///
/// ```swift
/// let installer = PackInstaller(cacheDirectory: dir, layout: .byHash)
/// InstallLayout(rawValue: "by-id")   // .byID
/// ```
package enum InstallLayout: String, Sendable, Codable, CaseIterable {
    case byID = "by-id"
    case byHash = "by-hash"

    /// The file name of the id → hash map of the `by-hash` layout.
    package static let idMapFileName = "index-by-id.json"

    /// The path, relative to the cache, of the still poster at `size` of exercise `id`, whose GIF
    /// has hash `hash` (`--with-posters`): `posters/<size>/<id>.gif` (`by-id`) or
    /// `posters/<size>/<sha256>.gif` (`by-hash`).
    package func posterRelativePath(size: Int, exercise id: String, sha256 hash: String) -> String {
        switch self {
        case .byID: "posters/\(size)/\(id).gif"
        case .byHash: "posters/\(size)/\(hash).gif"
        }
    }

    /// The path, relative to the cache, of the file that holds `hash` for the exercise `id`: a GIF's,
    /// or (`format` ``ImageFormat/webp``) a WebP's, `.webp`.
    package func relativePath(exercise id: String, sha256 hash: String, format: ImageFormat = .gif) -> String {
        switch self {
        case .byID: "\(id).\(format.fileExtension)"
        case .byHash: "gifs/\(hash).\(format.fileExtension)"
        }
    }
}

import Foundation
import GifPackFormat
import GifPackIndexReader

/// Read access to an installed cache, pinned to one generation.
///
/// Opening resolves `<cache>` (a symbolic link) once and reads that generation's manifest, so every
/// later lookup answers from the same complete set even if an install switches the cache
/// meanwhile (the previous generation stays on disk until the next install). Lookups are pure
/// path computations; they touch no file.
///
/// ```swift
/// let cache = try InstalledCache(directory: gifsDirectory)
/// if let path = cache.gifPath(forExercise: "0001") {
///     imageView.image = try await loadAnimatedGIF(URL(fileURLWithPath: path))
/// } else {
///     imageView.image = placeholder   // unknown exercise, or listed without a GIF
/// }
/// ```
package struct InstalledCache: Sendable {
    /// The resolved generation directory all paths point into.
    package let generationDirectory: String
    package let manifest: InstallManifest

    /// Opens the cache installed at `directory`; throws ``PackClientError/unreadable(location:detail:)``
    /// when nothing is installed there.
    package init(directory: String) throws(PackClientError) {
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        guard let manifest = try InstallManifest.read(directory: resolved) else {
            throw .unreadable(location: directory, detail: "no \(InstallManifest.fileName): nothing is installed there")
        }
        generationDirectory = resolved
        self.manifest = manifest
    }

    /// The image file of exercise `id` (its GIF, or with an install that prefers WebP, format 1.4,
    /// its `.webp` where the index has one), or nil when the exercise is unknown or has no GIF.
    package func gifPath(forExercise id: String) -> String? {
        guard ExerciseID.isValid(id), let entry = manifest.exercises[id], let hash = entry else { return nil }
        return "\(generationDirectory)/\(manifest.layout.relativePath(exercise: id, sha256: hash, format: manifest.imageFormat(for: hash)))"
    }

    /// The SHA-256 of exercise `id`'s GIF: a stable key for image caches (it changes exactly when
    /// the GIF does), or nil when the exercise is unknown or has no GIF.
    package func gifSHA256(forExercise id: String) -> String? {
        guard let entry = manifest.exercises[id] else { return nil }
        return entry
    }

    /// The still poster of exercise `id` at longest side `size` (installed with posters), or nil
    /// when the exercise is unknown, has no GIF, or the generation holds no poster of that size.
    ///
    /// ```swift
    /// let still = cache.posterPath(forExercise: "0001", size: 80)   // <cache>/posters/80/0001.gif
    /// ```
    package func posterPath(forExercise id: String, size: Int) -> String? {
        guard ExerciseID.isValid(id), let entry = manifest.exercises[id], let hash = entry,
            manifest.posters?[InstallManifest.posterKey(size: size, gifSHA256: manifest.placeholderGIF(for: hash))] != nil
        else { return nil }
        return "\(generationDirectory)/\(manifest.layout.posterRelativePath(size: size, exercise: id, sha256: hash))"
    }

    /// The poster sizes this generation holds, ascending (empty: installed without posters).
    package var posterSizes: [Int] {
        Array(Set((manifest.posterPacks ?? []).flatMap(\.sizes))).sorted()
    }

    /// Every installed exercise id, sorted.
    package var exerciseIDs: [String] { manifest.exercises.keys.sorted() }
}

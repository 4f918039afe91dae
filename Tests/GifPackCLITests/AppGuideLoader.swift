// docs/apps.md's loader block, compiled here and run against nginx by AppGuideSketchTests. The
// lines between the two markers are the docs' block, byte for byte (a test compares them).

// BEGIN docs/apps.md: ExerciseGIFs
import Foundation
import GifPackClient

/// The app's exercise media, all through one GIFLoader: placeholders at once (offline too), GIFs
/// for the visible rows, the rows about to scroll in prefetched, and the daily refresh.
final class ExerciseGIFs: Sendable {
    let loader: GIFLoader

    /// `folder`: under Application Support (iOS may empty Caches); `publicKey`: the text of the
    /// minisign public key shipped in the app's bundle (`gifpack keygen`).
    init(indexURL: URL, folder: URL, publicKey: String) throws {
        var configuration = GIFLoader.Configuration()
        configuration.withPosters = true  // poster files for the placeholders
        configuration.formats = [.webp, .gif]  // WebP where the index has it (a third of the bytes), else GIF
        loader = try GIFLoader(
            indexURL: indexURL, cacheFolder: folder,
            trustedKeys: [try TrustedKey(text: publicKey)], configuration: configuration)
    }

    /// What a row shows before its GIF: colour, BlurHash and poster file, from the installed packs.
    func row(_ exerciseID: String) async -> LoaderPlaceholder? {
        try? await loader.placeholder(for: exerciseID)
    }

    /// The row's GIF (nil: the exercise has none) — bytes, a file URL when on disk, and its tier.
    func gif(_ exerciseID: String) async throws -> LoadedGIF? {
        try await loader.gif(for: exerciseID)
    }

    /// The rows about to scroll in; cancel the handle when they scroll away.
    func upcoming(_ exerciseIDs: [String]) -> PrefetchHandle {
        loader.prefetch(exerciseIDs)
    }

    /// Once a day, from a background task: one conditional request when nothing changed. True
    /// when a new set was installed.
    func dailyRefresh() async throws -> Bool {
        try await !loader.refresh().isUnchanged
    }
}
// END docs/apps.md: ExerciseGIFs

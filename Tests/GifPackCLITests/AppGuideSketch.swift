// The non-UI half of docs/apps.md's app sketch, compiled here and run against nginx by
// AppGuideSketchTests. The lines between the two markers are the docs' block, byte for byte (a test
// compares them), so the guide cannot drift from code that builds and works.

// BEGIN docs/apps.md: ExerciseMedia
import Foundation
import GifPackClient

/// What an exercise's list cell shows, from the most to the least available: the flat colour and
/// the BlurHash come from the index at once, the poster once a refresh has installed it.
struct ExerciseCell: Sendable, Equatable {
    var averageColor: String?      // "#rrggbb"
    var blurHash: String?
    var aspectRatio: Double        // width / height, for the cell's frame before any image
    var posterPath: String?        // a small still GIF on disk, once installed
}

/// The app's one owner of exercise media: a verified index for placeholders, a background refresh
/// that installs what changed, and file paths for the views and the image library.
actor ExerciseMedia {
    let indexURL: String
    let cacheDirectory: String
    let trust: IndexTrust
    let posterSize: Int
    private var index: PackIndex?
    private var installed: InstalledCache?

    /// `cacheDirectory`: a folder under Application Support (iOS may purge Caches at any time);
    /// `trustedKeyFile`: the minisign public key shipped in the app's bundle.
    init(indexURL: String, cacheDirectory: String, trustedKeyFile: String, posterSize: Int = 80) throws {
        self.indexURL = indexURL
        self.cacheDirectory = cacheDirectory
        self.trust = try IndexTrust(keyFiles: [trustedKeyFile])
        self.posterSize = posterSize
        self.installed = try? InstalledCache(directory: cacheDirectory)   // what an earlier launch installed
    }

    /// The background refresh (a `BGAppRefreshTask`'s handler awaits it): the index must verify with
    /// the trusted key and must not roll back; then only the GIFs and posters that changed are fetched
    /// (by range where the host allows it) and switched in atomically. Safe to cancel: a cancelled
    /// refresh leaves the installed set as it was.
    @discardableResult
    func refresh() async throws -> InstallReport {
        var installer = PackInstaller(cacheDirectory: cacheDirectory)
        installer.trust = trust
        installer.withPosters = true
        let report = try await installer.install(from: PackIndexSource(indexURL))
        index = try await PackIndexSource(indexURL).load(trust: trust)
        installed = try InstalledCache(directory: cacheDirectory)
        return report
    }

    /// A list cell: placeholder fields from the index, the poster when installed.
    func cell(for exerciseID: String) -> ExerciseCell {
        let placeholder = index?.placeholder(forExercise: exerciseID)
        let ratio = placeholder.map { Double($0.width) / Double(max($0.height, 1)) } ?? 1
        return ExerciseCell(averageColor: placeholder?.averageColor, blurHash: placeholder?.blurHash, aspectRatio: ratio,
                            posterPath: installed?.posterPath(forExercise: exerciseID, size: posterSize))
    }

    /// The detail view's GIF: a file URL and a cache key that changes exactly when the GIF does
    /// (hand both to Nuke, Kingfisher or SDWebImage); nil when the exercise has no GIF (yet).
    func gif(for exerciseID: String) -> (url: URL, cacheKey: String)? {
        guard let installed, let path = installed.gifPath(forExercise: exerciseID),
              let sha256 = installed.gifSHA256(forExercise: exerciseID) else { return nil }
        return (URL(fileURLWithPath: path), sha256)
    }
}
// END docs/apps.md: ExerciseMedia

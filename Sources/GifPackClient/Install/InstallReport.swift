/// What ``PackInstaller`` did.
///
/// `gifsWritten` GIFs were decompressed from packs into new files (`bytesWritten` bytes);
/// `gifsReused` unchanged GIFs were hard-linked from the previous generation; `linksCreated` more
/// names were made for GIFs shared by several exercises. `added`, `removed` and `changed` compare
/// exercise ids (and their GIF hashes) with the previous install. When the packs and layout are
/// those already installed nothing is written and ``isUnchanged`` is true.
///
/// ```swift
/// let report = try await installer.install(from: source)
/// print("generation \(report.generation): \(report.gifsWritten) written, \(report.gifsReused) kept")
/// ```
package struct InstallReport: Sendable, Equatable {
    /// The path apps read (a symbolic link to ``generationDirectory``).
    package var cacheDirectory: String
    /// The directory of the installed generation.
    package var generationDirectory: String
    package var generation: Int
    package var layout: InstallLayout
    package var packs: [InstalledPack]
    /// Exercises installed, placeholders included.
    package var exercises: Int
    /// Exercises without a GIF (no file; show a placeholder).
    package var placeholders: Int
    package var gifsWritten: Int
    package var gifsReused: Int
    package var linksCreated: Int
    package var bytesWritten: Int64
    /// Bytes received over the network for pack files.
    package var bytesDownloaded: Int64
    /// Exercise ids new since the previous install.
    package var added: [String]
    /// Exercise ids gone since the previous install (their files are not in the new generation).
    package var removed: [String]
    /// Exercise ids whose GIF changed (or appeared or disappeared).
    package var changed: [String]
    /// True when the same packs were already installed in the same layout; nothing was written.
    package var isUnchanged: Bool
    /// How each pack was fetched (sparse by range or whole), in install order; empty when
    /// nothing was fetched (``isUnchanged``, or ``PackInstaller/install(_:)`` with packs in hand).
    package var fetches: [PackFetchSummary] = []
    /// The posters packs installed with the generation (``PackInstaller/withPosters``); empty without posters.
    package var posterPacks: [InstalledPosterPack] = []
    /// Posters written from a posters pack into new files.
    package var postersWritten = 0
    /// Unchanged posters hard-linked from the previous generation.
    package var postersReused = 0
    /// Kept GIFs that were not decoded again: the previous generation had checked the same bytes
    /// against the same catalog record (``InstallManifest/checkedGIFs``).
    package var gifChecksSkipped = 0
    /// Where the install's wall time went, phase by phase (``InstallPhases``): index and signature,
    /// planning, transfer, decode, file writes, sync, switch, and the total.
    package var phases = InstallPhases()
}

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
public struct InstallReport: Sendable, Equatable {
    /// The path apps read (a symbolic link to ``generationDirectory``).
    public var cacheDirectory: String
    /// The directory of the installed generation.
    public var generationDirectory: String
    public var generation: Int
    public var layout: InstallLayout
    public var packs: [InstalledPack]
    /// Exercises installed, placeholders included.
    public var exercises: Int
    /// Exercises without a GIF (no file; show a placeholder).
    public var placeholders: Int
    public var gifsWritten: Int
    public var gifsReused: Int
    public var linksCreated: Int
    public var bytesWritten: Int64
    /// Bytes received over the network for pack files.
    public var bytesDownloaded: Int64
    /// Exercise ids new since the previous install.
    public var added: [String]
    /// Exercise ids gone since the previous install (their files are not in the new generation).
    public var removed: [String]
    /// Exercise ids whose GIF changed (or appeared or disappeared).
    public var changed: [String]
    /// True when the same packs were already installed in the same layout; nothing was written.
    public var isUnchanged: Bool
    /// How each pack was fetched (sparse by range or whole), in install order; empty when
    /// nothing was fetched (``isUnchanged``, or ``PackInstaller/install(_:)`` with packs in hand).
    public var fetches: [PackFetchSummary] = []
    /// The posters packs installed with the generation (``PackInstaller/withPosters``); empty without posters.
    public var posterPacks: [InstalledPosterPack] = []
    /// Posters written from a posters pack into new files.
    public var postersWritten = 0
    /// Unchanged posters hard-linked from the previous generation.
    public var postersReused = 0
    /// Kept GIFs that were not decoded again: the previous generation had checked the same bytes
    /// against the same catalog record (``InstallManifest/checkedGIFs``).
    public var gifChecksSkipped = 0
    /// Where the install's wall time went, phase by phase (``InstallPhases``): index and signature,
    /// planning, transfer, decode, file writes, sync, switch, and the total.
    public var phases = InstallPhases()
}

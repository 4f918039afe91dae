/// What a ``GIFLoader/refresh(progress:)`` did: whether anything changed, which exercises did, and
/// what it cost.
///
/// `gifsWritten` GIFs were fetched and written (`bytesDownloaded` bytes over the network);
/// `gifsReused` unchanged GIFs were kept from the previous generation. When the server's index
/// and the chosen packs are those already installed, nothing is fetched or written and
/// ``isUnchanged`` is true.
///
/// ```swift
/// let report = try await loader.refresh()
/// if !report.isUnchanged { reloadVisibleCells(report.added + report.changed) }
/// ```
public struct RefreshReport: Sendable, Equatable {
    /// The installer's full report (the command line and the tests read its other fields).
    package var install: InstallReport

    package init(_ install: InstallReport) { self.install = install }

    /// True when the same packs were already installed: nothing was fetched or written.
    public var isUnchanged: Bool { install.isUnchanged }
    /// The installed generation's number: it goes up by one with each install that changed something.
    package var generation: Int { install.generation }
    /// Exercise ids new since the previous install.
    public var added: [String] { install.added }
    /// Exercise ids gone since the previous install.
    public var removed: [String] { install.removed }
    /// Exercise ids whose GIF changed (or appeared or disappeared).
    public var changed: [String] { install.changed }
    /// GIFs written into the new generation.
    package var gifsWritten: Int { install.gifsWritten }
    /// Unchanged GIFs kept from the previous generation (nothing fetched for them).
    package var gifsReused: Int { install.gifsReused }
    /// Bytes received over the network for the packs.
    public var bytesDownloaded: Int64 { install.bytesDownloaded }
}

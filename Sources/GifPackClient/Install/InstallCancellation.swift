import Foundation
import GifPackSystem
import GifPackIndexReader

/// The points of ``PackInstaller/install(from:packs:client:)`` where a cancellation is looked at
/// (and, in tests, where a hook sees the install go by).
enum InstallStage: Sendable, Equatable {
    /// Before the index is requested.
    case index
    /// Before each pack (or posters pack) is fetched.
    case transfer
    /// Every transfer done, before the packs' catalogs are read and checked.
    case verify
    /// Before each pack entry is checked and placed in the staging directory.
    case stage
    /// The staged generation complete, right before the one `rename(2)` that switches it in.
    case `switch`
    /// Just after the switch: seen by the hook only; the install is done and returns its report.
    case switched
}

/// Whether the task that called ``PackInstaller/install(from:packs:client:)`` was cancelled, for
/// the disk work that runs on a dedicated thread, outside that task: set by the call's
/// cancellation handler, looked at between entries and right before the switch.
///
/// ```swift
/// let cancellation = InstallCancellation()
/// try cancellation.checkpoint(.stage)   // throws PackClientError.cancelled once cancel() was called
/// ```
final class InstallCancellation: Sendable {
    private let cancelled = Locked(false)
    /// Tests: called at every checkpoint, before the flag is looked at.
    private let hook: (@Sendable (InstallStage) -> Void)?

    init(hook: (@Sendable (InstallStage) -> Void)? = nil) {
        self.hook = hook
    }

    func cancel() {
        cancelled.withLock { $0 = true }
    }

    var isCancelled: Bool {
        cancelled.withLock { $0 }
    }

    /// A point past the commit point: the hook sees it, nothing stops.
    func passed(_ stage: InstallStage) {
        hook?(stage)
    }

    /// Throws ``PackClientError/cancelled`` once the call is cancelled.
    func checkpoint(_ stage: InstallStage) throws(PackClientError) {
        hook?(stage)
        if isCancelled { throw .cancelled }
    }
}

import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

extension GIFLoader {
    /// The daily check and upgrade: the index asked for conditionally on the installed one (a `304`
    /// costs no body and writes nothing), then the chosen packs (``Configuration/packs``) upgraded,
    /// fetching only the frames the installed generation lacks. `progress` hears every step with
    /// its bytes and GIFs done and total (``RefreshProgress``; ``refreshProgress()`` is the same as
    /// an `AsyncSequence`). Concurrent calls share the one in flight; each caller's `progress` hears
    /// it. A server that stops answering ends the call after ``Configuration/timeouts``' low-speed
    /// window (30 s by default) with a ``GIFLoaderError`` of kind ``GIFLoadFailure/offline`` whose
    /// message says what to check. Throws `CancellationError` when cancelled, at any stage: a caller that others still
    /// wait with leaves at once; the last one cancels the install and returns once it has stopped
    /// (promptly: the install looks at the cancellation in every transfer, between staged
    /// entries and right before the switch), the installed generation as it was. Only a cancellation
    /// that comes after the switch, the install's commit point, returns its report.
    ///
    /// ```swift
    /// let report = try await loader.refresh { step in print(step.stage, step.bytesDone, step.bytesTotal) }
    /// ```
    @discardableResult
    public func refresh(progress: (@Sendable (RefreshProgress) -> Void)? = nil) async throws -> RefreshReport {
        let observer = state.addObserver(progress)
        defer { state.removeObserver(observer) }
        do {
            return RefreshReport(try await refreshFlights.value(for: .refresh) { try await self.runRefresh() })
        } catch {
            throw Self.cancellationOr(error)
        }
    }

    /// The steps of every refresh of this loader from now on (whoever started it: a view, a
    /// background task), until the task iterating it is cancelled — a SwiftUI `.task` showing the
    /// progress of the daily refresh. The newest steps are kept when the reader falls behind.
    ///
    /// ```swift
    /// for await step in loader.refreshProgress() { self.fraction = step.fractionCompleted }
    /// ```
    public func refreshProgress() -> AsyncStream<RefreshProgress> {
        let state = self.state
        return AsyncStream(bufferingPolicy: .bufferingNewest(64)) { continuation in
            let observer = state.addObserver { continuation.yield($0) }
            continuation.onTermination = { _ in state.removeObserver(observer) }
        }
    }

    private func runRefresh() async throws -> InstallReport {
        try await ensureFolder()
        state.emit(RefreshProgress(stage: .checking))
        let state = self.state
        var installer = self.installer
        let watch = refreshWatch
        watch.begin()
        defer { watch.end() }
        installer.indexHook = { watch.indexAccepted($0) }
        installer.gifReadyHook = { watch.gifReady($0, path: $1) }
        // The fraction never goes back when the next pack's bytes join the total.
        let shown = Locked(0.0)
        let progress = InstallProgress { stage, counts in
            var step = Self.progress(stage == .fetching ? .fetching : .installing, counts)
            step.fractionFloor = shown.withLock { shown in
                shown = max(shown, step.fractionCompleted)
                return shown
            }
            state.emit(step)
        }
        installer.progress = progress
        let report = try await installWaitingForTheLock(installer)
        if report.isUnchanged {
            state.emit(RefreshProgress(stage: .upToDate))
        } else {
            state.forgetInstalled()
            state.emit(Self.progress(.installed, progress.current))
        }
        return report
    }

    /// The install, once the cache's install lock is free: another process sharing the folder (an
    /// app's extension) may be installing. Polls the lock (no request is sent before it is taken)
    /// for at most `Configuration.installLockWait` (60 s), then throws
    /// ``PackClientError/cacheLocked(path:)``; cancellable while it waits.
    private func installWaitingForTheLock(_ installer: PackInstaller) async throws -> InstallReport {
        let started = TimeSpan.now()
        var pause = TimeSpan.milliseconds(20)
        while true {
            do {
                return try await installer.install(from: source, packs: configuration.packs, client: transport)
            } catch PackClientError.cacheLocked(let path) {
                let waited = TimeSpan(nanoseconds: Int64(clamping: TimeSpan.now() - started))
                guard waited + pause < configuration.installLockWait else { throw PackClientError.cacheLocked(path: path) }
                try await Task.sleep(nanoseconds: UInt64(pause.nanoseconds))
                pause = min(pause + pause, .milliseconds(500))
            }
        }
    }

    private static func progress(_ stage: RefreshProgress.Stage, _ counts: InstallProgress.Counts) -> RefreshProgress {
        RefreshProgress(stage: stage, bytesDone: counts.bytesDone, bytesTotal: counts.bytesTotal,
                        gifsDone: counts.gifsDone, gifsTotal: counts.gifsTotal)
    }

    // MARK: Placeholders

    /// Exercise `exerciseID`'s placeholder from the installed generation alone — no request, so
    /// offline and after a relaunch: the index's average colour and BlurHash kept with the
    /// install, and the poster file when posters are installed. nil when the exercise is not
    /// installed or has no GIF. Throws a ``GIFLoaderError`` when the installed generation cannot be read.
    public func placeholder(for exerciseID: String) async throws -> LoaderPlaceholder? {
        guard ExerciseID.isValid(exerciseID), let installed = try await publicSnapshot() else { return nil }
        return Self.placeholder(exerciseID, in: installed, posterSize: configuration.posterSize)
    }

    /// The placeholders of every installed exercise that has a GIF, by exercise id.
    public func placeholders() async throws -> [String: LoaderPlaceholder] {
        guard let installed = try await publicSnapshot() else { return [:] }
        var all: [String: LoaderPlaceholder] = [:]
        for id in installed.cache.exerciseIDs {
            all[id] = Self.placeholder(id, in: installed, posterSize: configuration.posterSize)
        }
        return all
    }

    /// The installed generation as a public call reads it: its errors are ``GIFLoaderError``s.
    private func publicSnapshot() async throws -> InstalledSnapshot? {
        do { return try await installedSnapshot() } catch { throw Self.cancellationOr(error) }
    }

    static func placeholder(_ id: String, in installed: InstalledSnapshot, posterSize: Int?) -> LoaderPlaceholder? {
        guard let hash = installed.cache.gifSHA256(forExercise: id) else { return nil }
        let gif = installed.placeholders?.gifs[hash]
        let size = posterSize ?? installed.cache.posterSizes.first
        let poster = size.flatMap { installed.cache.posterPath(forExercise: id, size: $0) }
        return LoaderPlaceholder(exerciseID: id, gifSHA256: hash, averageColor: gif?.averageColor, blurHash: gif?.blurHash,
                                 width: gif?.width, height: gif?.height, posterURL: poster.map { URL(fileURLWithPath: $0) })
    }
}

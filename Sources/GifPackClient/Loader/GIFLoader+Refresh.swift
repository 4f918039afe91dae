import Foundation
import GifPackFormat

extension GIFLoader {
    /// The daily check and upgrade: the index asked for conditionally on the installed one (a `304`
    /// costs no body and writes nothing), then the chosen packs (``Configuration/packs``) upgraded,
    /// fetching only the frames the installed generation lacks. Concurrent calls share the one in
    /// flight; each caller's `progress` hears it. Throws `CancellationError` when cancelled, at any
    /// stage: a caller that others still wait with leaves at once; the last one cancels the install
    /// and returns once it has stopped (promptly: ``PackInstaller`` looks at the cancellation in every
    /// transfer, between staged entries and right before the switch), the installed generation as
    /// it was. Only a cancellation that comes after the switch, the install's commit point, returns
    /// its report.
    ///
    /// ```swift
    /// let report = try await loader.refresh { step in print(step) }   // .checking, then .upToDate
    /// ```
    @discardableResult
    public func refresh(progress: (@Sendable (RefreshProgress) -> Void)? = nil) async throws -> InstallReport {
        let observer = state.addObserver(progress)
        defer { state.removeObserver(observer) }
        do {
            return try await refreshFlights.value(for: "refresh") { try await self.runRefresh() }
        } catch {
            throw Self.cancellationOr(error)
        }
    }

    private func runRefresh() async throws -> InstallReport {
        try await ensureFolder()
        state.emit(.checking)
        let report = try await installer.install(from: source, packs: configuration.packs, client: transport)
        if report.isUnchanged {
            state.emit(.upToDate)
        } else {
            state.forgetInstalled()
            state.emit(.installed(gifsWritten: report.gifsWritten, gifsReused: report.gifsReused,
                                  bytesDownloaded: report.bytesDownloaded))
        }
        return report
    }

    // MARK: Placeholders

    /// Exercise `exerciseID`'s placeholder from the installed generation alone — no request, so
    /// offline and after a relaunch: the index's average colour and BlurHash kept with the
    /// install (``InstalledPlaceholders``), and the poster file when posters are installed. nil
    /// when the exercise is not installed or has no GIF.
    public func placeholder(for exerciseID: String) async throws -> LoaderPlaceholder? {
        guard ExerciseID.isValid(exerciseID), let installed = try await installedSnapshot() else { return nil }
        return Self.placeholder(exerciseID, in: installed, posterSize: configuration.posterSize)
    }

    /// The placeholders of every installed exercise that has a GIF, by exercise id.
    public func placeholders() async throws -> [String: LoaderPlaceholder] {
        guard let installed = try await installedSnapshot() else { return [:] }
        var all: [String: LoaderPlaceholder] = [:]
        for id in installed.cache.exerciseIDs {
            all[id] = Self.placeholder(id, in: installed, posterSize: configuration.posterSize)
        }
        return all
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

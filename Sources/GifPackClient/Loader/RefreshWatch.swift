import Foundation
import GifPackFormat
import GifPackSystem
import GifPackIndexReader

/// What the refresh in flight brings, for GIFs asked for meanwhile: its index
/// once accepted, so a lookup does not fetch the index again, and each GIF of a whole pack download
/// as the download's ``PackFollower`` hands it over (decoded, checked and hashed), so a GIF the
/// refresh installs comes from that download as soon as its frame has arrived — never by a range
/// request of its own as well.
///
/// ```swift
/// watch.begin(); defer { watch.end() }
/// installer.indexHook = watch.indexAccepted; installer.gifReadyHook = watch.gifReady
/// if let path = await watch.gifPath(sha256) { … }   // nil: the refresh ended first
/// ```
final class RefreshWatch: Sendable {
    private struct State {
        var running = 0
        var index: PackIndex?
        /// Files the follower handed over in this refresh, by GIF hash (until the staging moves them).
        var handed: [String: String] = [:]
        var counter: UInt64 = 0
        var indexWaiters: [UInt64: CheckedContinuation<PackIndex?, Never>] = [:]
        var gifWaiters: [UInt64: (sha256: String, continuation: CheckedContinuation<String?, Never>)] = [:]
        var endWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    var isRunning: Bool { state.withLock { $0.running > 0 } }

    func begin() {
        state.withLock { state in
            state.running += 1
            state.index = nil
            state.handed = [:]
        }
    }

    /// The refresh is over (installed, up to date, failed or cancelled): every waiter takes the usual way.
    func end() {
        let (indexWaiters, gifWaiters, endWaiters) = state.withLock { state in
            state.running -= 1
            state.index = nil
            state.handed = [:]
            defer {
                state.indexWaiters = [:]
                state.gifWaiters = [:]
                state.endWaiters = [:]
            }
            return (Array(state.indexWaiters.values), state.gifWaiters.values.map(\.continuation), Array(state.endWaiters.values))
        }
        for waiter in indexWaiters { waiter.resume(returning: nil) }
        for waiter in gifWaiters { waiter.resume(returning: nil) }
        for waiter in endWaiters { waiter.resume() }
    }

    /// The installer accepted the index.
    func indexAccepted(_ index: PackIndex) {
        let waiters = state.withLock { state in
            state.index = index
            defer { state.indexWaiters = [:] }
            return Array(state.indexWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: index) }
    }

    /// The follower handed over a GIF (on its own thread).
    func gifReady(_ sha256: String, path: String) {
        let waiters = state.withLock { state in
            state.handed[sha256] = path
            let matching = state.gifWaiters.filter { $0.value.sha256 == sha256 }
            for key in matching.keys { state.gifWaiters[key] = nil }
            return matching.values.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: path) }
    }

    /// The refresh's index once accepted; nil at once when no refresh runs, or when it ends without
    /// one (up to date, failed, cancelled) or the caller is cancelled.
    func index() async -> PackIndex? {
        let id = state.withLock { state in
            state.counter += 1
            return state.counter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PackIndex?, Never>) in
                let now: PackIndex?? = state.withLock { state in
                    if state.running == 0 || Task.isCancelled { return .some(nil) }
                    if let index = state.index { return .some(index) }
                    state.indexWaiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.indexWaiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Returns once no refresh runs (or the caller is cancelled).
    func untilEnded() async {
        let id = state.withLock { state in
            state.counter += 1
            return state.counter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.running == 0 || Task.isCancelled { return true }
                    state.endWaiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.endWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// The file the refresh's download handed GIF `sha256` over in; nil when the refresh ends first
    /// (it is installed then, unless the refresh failed) or the caller is cancelled.
    func gifPath(_ sha256: String) async -> String? {
        let id = state.withLock { state in
            state.counter += 1
            return state.counter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let now: String?? = state.withLock { state in
                    if state.running == 0 || Task.isCancelled { return .some(nil) }
                    if let path = state.handed[sha256] { return .some(path) }
                    state.gifWaiters[id] = (sha256, continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.gifWaiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }
}

extension GIFLoader {
    /// A GIF asked for while a refresh runs: the refresh's index names it (no index request of the
    /// lookup's own) and, when the refresh installs it, it comes from the refresh — from the pack's
    /// download as soon as its frame has arrived, else from the installed set once the refresh
    /// ends. nil: the usual way (no refresh, a 304, a GIF the refresh does not install, a failed refresh).
    func fromRefresh(_ key: Key) async throws -> LoadedGIF? {
        guard refreshWatch.isRunning, let index = await refreshWatch.index() else { return nil }
        try Task.checkCancellation()
        let hash: String?
        switch key {
        case .exercise(let id):
            hash = FormatChoice.pack(forExercise: id, in: index, pixels: configuration.preferredPixelSize, formats: configuration.formats.map(\.imageFormat))?.gif
        case .hash(let sha256):
            hash = sha256
        }
        guard let hash, Self.refreshInstalls(hash, of: index, packs: configuration.packs, formats: configuration.formats.map(\.imageFormat)) else { return nil }
        state.remember(key, hash: hash)
        if let entry = memory.gif(hash) {
            return LoadedGIF(sha256: hash, data: entry.data, fileURL: isCurrentFile(entry.fileURL) ? entry.fileURL : nil, tier: .memory)
        }
        if let path = await refreshWatch.gifPath(hash) {
            let read = await BlockingWork.result("gifpack.loader-read") { () throws(PackClientError) -> Data in
                try PackIndexSource.readFile(path, maxBytes: 64 << 20)
            }
            // Moved into the new generation meanwhile: the installed set has it once the refresh ends.
            if case .success(let data) = read, Self.sha256(data) == hash { return remember(hash, data, file: nil, tier: .network) }
            await refreshWatch.untilEnded()
        }
        try Task.checkCancellation()
        // The refresh ended: its generation is the installed one now (unless it failed).
        guard let installed = try await installedSnapshot() else { return nil }
        return try await fromInstalled(key, installed).gif
    }

    /// Whether the refresh installs GIF `hash`: a pack of ``Configuration/packs`` (or any pack), or
    /// one of its renditions, lists it — in the format the refresh takes it in (format 1.4: a
    /// WebP-preferring loader installs a pack's WebP pack where the index has one, ``FormatChoice``).
    static func refreshInstalls(_ hash: String, of index: PackIndex, packs names: [String]?, formats: [ImageFormat] = [.gif]) -> Bool {
        index.gifPacks.map { FormatChoice.pack(for: $0, in: index, formats: formats) }.contains { pack in
            let base = pack.name.split(separator: ".").first.map(String.init) ?? pack.name
            guard names.map({ $0.contains(pack.name) || $0.contains(base) }) ?? true else { return false }
            return pack.gifs.contains { $0.sha256 == hash }
        }
    }
}

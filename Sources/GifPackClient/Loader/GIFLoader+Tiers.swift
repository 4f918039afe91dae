import Crypto
import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

extension GIFLoader {
    /// One request's way down the tiers (run once per key in flight, see ``load(_:visible:call:)``).
    func resolve(_ key: Key, visible: Bool, call timeouts: HTTPTimeouts) async throws -> LoadedGIF? {
        try await ensureFolder()
        // A read that failed because another process switched generations meanwhile is made again in the current one.
        for _ in 0..<2 {
            guard let installed = try await installedSnapshot() else { break }
            switch try await fromInstalled(key, installed) {
            case .gif(let gif): return gif
            case .listedWithoutGIF: return nil
            case .notHere: break
            }
            guard noticeGenerationSwitch() else { break }
        }
        // A refresh in flight: its index, and the GIF from its download when it installs it (RefreshWatch.swift).
        if let early = try await fromRefresh(key) { return early }
        guard let target = try await indexed(key, call: timeouts) else { return nil }
        state.remember(key, hash: target.hash)
        if let entry = memory.gif(target.hash) {
            // A file of a generation no longer installed is not handed out (it is deleted by the next install).
            return LoadedGIF(sha256: target.hash, data: entry.data, fileURL: isCurrentFile(entry.fileURL) ? entry.fileURL : nil, tier: .memory)
        }
        let store = lazyStore
        let stored = await BlockingWork.result("gifpack.loader-read") { () throws(PackClientError) -> [UInt8]? in
            try store.prepare()
            return store.readGIF(sha256: target.hash, size: target.size)
        }
        if case .success(let bytes?) = stored {
            return remember(target.hash, Data(bytes), file: store.gifPath(target.hash), tier: .lazyCache)
        }
        // One fetch per GIF, whichever exercises or hash lookups ask for it.
        return try await fetchFlights.value(for: .fetch(sha256: target.hash), awaitsCancelledWork: !visible) {
            try await self.fetch(target, visible: visible, call: timeouts)
        }
    }

    /// The network tier, through the gate: the lazy cache fetches the GIF's frame by range, from
    /// whichever pack holds it.
    private func fetch(_ target: IndexedGIF, visible: Bool, call timeouts: HTTPTimeouts) async throws -> LoadedGIF? {
        let ticket = state.issueTicket(target.hash)
        defer { state.dropTicket(target.hash) }
        try await gate.enter(ticket: ticket, visible: visible || state.isWantedVisible(hash: target.hash))
        let answer: LazyGIF
        do {
            // Cancelled while the gate let it in: no request.
            try Task.checkCancellation()
            answer = try await lazy.gif(sha256: target.hash, call: timeouts)
        } catch {
            await gate.leave()
            throw error
        }
        await gate.leave()
        guard case .gif(let bytes, let fromCache) = answer else {
            throw PackClientError.unreadable(location: target.exercise, detail: "the index no longer lists its GIF \(target.hash): ask again")
        }
        let data = Data(bytes)
        guard Self.sha256(data) == target.hash else {
            throw PackClientError.unreadable(location: target.exercise, detail: "the lazy cache answered a GIF that does not hash to \(target.hash)")
        }
        let path = lazyStore.gifPath(target.hash)
        let file = FileOps.regularFileSize(path) == Int64(data.count) ? path : nil
        return remember(target.hash, data, file: file, tier: fromCache ? .lazyCache : .network)
    }

    /// What the installed tier says of a key.
    enum InstalledAnswer {
        /// The generation's file for it, read and hashed.
        case gif(LoadedGIF)
        /// The generation lists the exercise without a GIF: the lookup's answer is nil.
        case listedWithoutGIF
        /// Not installed here (or its file no longer hashes right): the next tiers answer.
        case notHere

        /// The GIF, when there is one.
        var gif: LoadedGIF? {
            if case .gif(let gif) = self { gif } else { nil }
        }
    }

    /// The installed tier: the generation's file for this exercise (or hash), read and hashed.
    func fromInstalled(_ key: Key, _ installed: InstalledSnapshot) async throws -> InstalledAnswer {
        let hash: String
        let path: String
        switch key {
        case .exercise(let id):
            guard let entry = installed.cache.manifest.exercises[id] else { return .notHere }
            guard let sha256 = entry, let file = installed.cache.gifPath(forExercise: id) else { return .listedWithoutGIF }
            (hash, path) = (sha256, file)
        case .hash(let sha256):
            guard let id = installed.exerciseByHash[sha256], let file = installed.cache.gifPath(forExercise: id) else { return .notHere }
            (hash, path) = (sha256, file)
        }
        state.remember(key, hash: hash)
        if let entry = memory.gif(hash) {
            // The file URL is this generation's, whatever generation the bytes were first read from.
            if entry.fileURL?.path != path { memory.insert(hash, data: entry.data, fileURL: URL(fileURLWithPath: path)) }
            return .gif(LoadedGIF(sha256: hash, data: entry.data, fileURL: URL(fileURLWithPath: path), tier: .memory))
        }
        let read = await BlockingWork.result("gifpack.loader-read") { () throws(PackClientError) -> Data in
            try PackIndexSource.readFile(path, maxBytes: 64 << 20)
        }
        guard case .success(let data) = read, Self.sha256(data) == hash else { return .notHere }
        return .gif(remember(hash, data, file: path, tier: .installed))
    }

    /// A GIF the index lists: its hash, its size and an exercise that has it.
    struct IndexedGIF: Sendable {
        var hash: String
        var size: Int64
        var exercise: String
    }

    /// Where the index puts the key's GIF; nil for an exercise listed without one, or a hash no pack has.
    private func indexed(_ key: Key, call timeouts: HTTPTimeouts) async throws -> IndexedGIF? {
        // Constant time: the index's lookup tables, built once per index version (IndexLookup).
        let lookup = try await currentLookup(call: timeouts)
        switch key {
        case .exercise(let id):
            switch lookup.entry(forExercise: id) {
            case .unlisted: throw PackClientError.unknownExercise(id)
            case .listedWithoutGIF: return nil
            case .gif(let entry): return IndexedGIF(hash: entry.sha256, size: entry.location.size, exercise: id)
            }
        case .hash(let sha256):
            guard let (_, entry, exercise) = try lookup.gif(sha256: sha256) else { return nil }
            return IndexedGIF(hash: sha256, size: entry.location.size, exercise: exercise)
        }
    }

    /// The lazy cache's index made ready for lookups (revalidated when older than its max age), one load at a time.
    private func currentLookup(call timeouts: HTTPTimeouts) async throws -> IndexLookup {
        let lazy = self.lazy
        return try await indexFlights.value(for: .index) { try await lazy.lookup(call: timeouts) }
    }

    /// Puts a verified GIF in memory and answers it.
    func remember(_ hash: String, _ data: Data, file: String?, tier: GIFTier) -> LoadedGIF {
        let url = file.map { URL(fileURLWithPath: $0) }
        memory.insert(hash, data: data, fileURL: url)
        return LoadedGIF(sha256: hash, data: data, fileURL: url, tier: tier)
    }

    static func sha256(_ data: Data) -> String { Hex.lowercase(SHA256.hash(data: data)) }

    // MARK: The installed generation

    /// The installed generation's manifest and placeholders, read once per generation; nil when
    /// nothing is installed. Callers that ask at once (a screen of cells after a relaunch) share one read.
    func installedSnapshot() async throws -> InstalledSnapshot? {
        // Another process (or loader) may have installed since: the link's identity says (InstalledGeneration.swift).
        noticeGenerationSwitch()
        if let snapshot = state.snapshot { return snapshot }
        return try await snapshotFlights.value(for: .installed) { try await self.readInstalledSnapshot() }
    }

    private func readInstalledSnapshot() async throws -> InstalledSnapshot? {
        if let snapshot = state.snapshot { return snapshot }
        let directory = installer.cacheDirectory
        let reads = snapshotReads
        let snapshot = try await BlockingWork.run("gifpack.loader-manifest") { () throws(PackClientError) -> InstalledSnapshot? in
            let mark = GenerationMark.of(directory)
            reads.withLock { $0 += 1 }
            let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
            guard try InstallManifest.read(directory: resolved) != nil else { return nil }
            let cache = try InstalledCache(directory: directory)
            return InstalledSnapshot(cache: cache, placeholders: try InstalledPlaceholders.read(directory: cache.generationDirectory), mark: mark)
        }
        if let snapshot { state.keep(snapshot) }
        return snapshot
    }

    /// Creates the cache folder once.
    func ensureFolder() async throws {
        guard !state.folderReady else { return }
        let folder = cacheFolder.path
        try await BlockingWork.run("gifpack.loader-folder") { () throws(PackClientError) in
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw .unreadable(location: folder, detail: "cannot create the cache folder: \(error.localizedDescription)")
            }
        }
        state.markFolderReady()
    }
}

/// An installed generation as the loader reads it.
struct InstalledSnapshot: Sendable {
    let cache: InstalledCache
    let placeholders: InstalledPlaceholders?
    /// GIF hash → the first exercise (by id) that has it.
    let exerciseByHash: [String: String]
    /// The installed link's identity when this generation was read (taken before resolving it).
    let mark: GenerationMark

    init(cache: InstalledCache, placeholders: InstalledPlaceholders?, mark: GenerationMark) {
        self.cache = cache
        self.placeholders = placeholders
        self.mark = mark
        var byHash: [String: String] = [:]
        for (id, hash) in cache.manifest.exercises.sorted(by: { $0.key < $1.key }) {
            if let hash, byHash[hash] == nil { byHash[hash] = id }
        }
        exerciseByHash = byHash
    }
}

/// The loader's small shared state: what it knows of keys and the installed generation, the
/// tickets of fetches waiting at the gate, refresh observers.
final class LoaderState: Sendable {
    private struct State {
        var hashes: [GIFLoader.Key: String] = [:]
        /// The gate ticket of each GIF (hash) whose fetch is in flight.
        var tickets: [String: UInt64] = [:]
        var counter: UInt64 = 0
        var installed: InstalledSnapshot?
        /// The installed link's identity last seen (nil: not looked at yet).
        var generation: GenerationMark?
        var ready = false
        var observers: [UInt64: @Sendable (RefreshProgress) -> Void] = [:]
        /// Visible callers waiting per key: a prefetch's flight they join enters the gate as visible.
        var visibleCallers: [GIFLoader.Key: Int] = [:]
    }

    private let state = Locked(State())

    func knownHash(_ key: GIFLoader.Key) -> String? {
        if case .hash(let sha256) = key { return sha256 }
        return state.withLock { $0.hashes[key] }
    }

    func remember(_ key: GIFLoader.Key, hash: String) { state.withLock { $0.hashes[key] = hash } }

    func issueTicket(_ hash: String) -> UInt64 {
        state.withLock { state in
            state.counter += 1
            state.tickets[hash] = state.counter
            return state.counter
        }
    }

    func ticket(_ hash: String) -> UInt64? { state.withLock { $0.tickets[hash] } }
    func hash(ofTicket ticket: UInt64) -> String? { state.withLock { $0.tickets.first { $0.value == ticket }?.key } }

    func wantVisible(_ key: GIFLoader.Key) { state.withLock { $0.visibleCallers[key, default: 0] += 1 } }
    func dropVisible(_ key: GIFLoader.Key) {
        state.withLock { state in
            let left = (state.visibleCallers[key] ?? 1) - 1
            state.visibleCallers[key] = left > 0 ? left : nil
        }
    }
    /// Whether a visible caller waits for this GIF, by its hash or by an exercise known to have it.
    func isWantedVisible(hash: String) -> Bool {
        state.withLock { state in
            state.visibleCallers.keys.contains { key in
                if case .hash(let sha256) = key { return sha256 == hash }
                return state.hashes[key] == hash
            }
        }
    }
    func dropTicket(_ hash: String) { _ = state.withLock { $0.tickets.removeValue(forKey: hash) } }

    var snapshot: InstalledSnapshot? { state.withLock { $0.installed } }
    /// Keeps a generation's view, unless the link was seen switched since it was read.
    func keep(_ snapshot: InstalledSnapshot) {
        state.withLock { state in
            if state.generation == nil || state.generation == snapshot.mark { state.installed = snapshot }
        }
    }

    /// After an install: the next lookup reads the new generation (exercise → hash included).
    func forgetInstalled() {
        state.withLock { Self.forget(&$0) }
    }

    private static func forget(_ state: inout State) {
        state.installed = nil
        state.hashes = state.hashes.filter { if case .hash = $0.key { true } else { false } }
    }

    /// Records the installed link's identity now; when it differs from the one seen before (another
    /// process installed), forgets the installed view and the exercise → hash answers. True then.
    func observeGeneration(_ mark: GenerationMark) -> Bool {
        state.withLock { state in
            defer { state.generation = mark }
            guard let seen = state.generation, seen != mark else {
                // The first look: a view read before it counts only when it was read at this mark.
                if state.generation == nil, let installed = state.installed, installed.mark != mark { Self.forget(&state) }
                return false
            }
            Self.forget(&state)
            return true
        }
    }

    var folderReady: Bool { state.withLock { $0.ready } }
    func markFolderReady() { state.withLock { $0.ready = true } }

    func addObserver(_ observer: (@Sendable (RefreshProgress) -> Void)?) -> UInt64? {
        guard let observer else { return nil }
        return state.withLock { state in
            state.counter += 1
            state.observers[state.counter] = observer
            return state.counter
        }
    }

    func removeObserver(_ id: UInt64?) {
        guard let id else { return }
        _ = state.withLock { $0.observers.removeValue(forKey: id) }
    }

    func emit(_ progress: RefreshProgress) {
        let current = state.withLock { Array($0.observers.values) }
        for observer in current { observer(progress) }
    }
}

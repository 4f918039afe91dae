import Crypto
import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// An app's one object for exercise GIFs: memory, the installed packs, a lazy disk cache and the
/// network, with placeholders, prefetching and the daily refresh.
///
/// ``gif(for:)`` answers from the first tier that holds the GIF, each answer verified by SHA-256
/// and saying which tier served it (``LoadedGIF/tier``):
/// 1. memory: an LRU of verified GIFs bounded by bytes and count (defaults 100 MB / 50 GIFs, like
///    the apps' own `NSCache`), emptied on a memory warning (`UIApplicationDidReceiveMemoryWarningNotification`);
/// 2. the installed packs (``refresh(progress:)`` installs them);
/// 3. the lazy disk cache (bounded by bytes, least recently used evicted);
/// 4. the network: the GIF's one zstd frame by a single range request, checked and stored in the
///    lazy cache.
///
/// Identical requests in flight are shared (twenty cells asking for one GIF make one request);
/// at most ``Configuration/maxConcurrentFetches`` network fetches run at once, visible requests
/// before prefetches (``prefetch(_:)``). A cancelled call ends with `CancellationError` at once;
/// its work is cancelled when no other caller shares it, and leaves the caches as they were (files
/// appear only by rename of a verified file).
///
/// ``refresh(progress:)`` is the daily check: one conditional index request (a `304` costs no body
/// and writes nothing), then the upgrade of the chosen packs, only the frames the cache lacks.
/// Concurrent calls share the one in flight. ``placeholder(for:)`` answers from the installed
/// generation alone (offline, after a relaunch).
///
/// The cache folder holds `installed` (the packs) and `lazy` (the lazy disk cache). Put it under Application Support: iOS may purge Caches at any time.
///
/// ```swift
/// let loader = try GIFLoader(indexURL: URL(string: "https://cdn.example.com/gifpack/index.json")!,
///                            cacheFolder: appSupport.appendingPathComponent("exercise-gifs"),
///                            trustedKeys: [try TrustedKey(text: bundledKey)])
/// let cell = try await loader.placeholder(for: "0001")          // colour, BlurHash, poster file
/// let gif = try await loader.gif(for: "0001")                    // nil: the exercise has no GIF
/// let nextRows = loader.prefetch(["0002", "0003"]); nextRows.cancel()
/// _ = try await loader.refresh()                                 // once a day, in the background
/// ```
public final class GIFLoader: Sendable {
    /// What a loader installs and serves, and its bounds: every field has a default that suits a
    /// phone app; set the ones to change before passing it to ``GIFLoader/init(indexURL:cacheFolder:trustedKeys:transport:configuration:)``.
    public struct Configuration: Sendable {
        /// The memory tier's limit in bytes of GIFs.
        public var memoryCostLimit = 100 << 20
        /// The memory tier's limit in number of GIFs.
        public var memoryCountLimit = 50
        /// The packs ``GIFLoader/refresh(progress:)`` installs (nil: every pack of the index).
        public var packs: [String]?
        /// Install the packs' still posters too (format 1.2), for ``LoaderPlaceholder/posterURL``.
        public var withPosters = false
        /// The pixels the app shows a GIF at, e.g. ``RenditionChoice/pixelSize(points:scale:)`` of the
        /// detail view's width and `UIScreen.main.scale`: with an index that has renditions (format
        /// 1.3), every tier serves each exercise's smallest rendition at least this size, else the
        /// largest there is, and ``GIFLoader/refresh(progress:)`` installs only those renditions;
        /// placeholders stay the first resolution's. nil: the first resolution (`packs[]`), as
        /// before renditions.
        public var preferredPixelSize: Int?
        /// The image formats the app displays, in order of preference (format 1.4): with
        /// `[.webp, .gif]` and an index that has a WebP rendition of a pack (`formatPacks[]`), every
        /// tier serves that pack's WebPs (``LoadedGIF/format`` says which) and ``GIFLoader/refresh(progress:)``
        /// installs the WebP pack instead of the GIF pack, so the app downloads no GIF it has a WebP
        /// for. GIF is always the last resort; placeholders and posters stay the GIFs'. Default
        /// `[.gif]`: GIFs only, as before. ImageIO (`CGImageSource`) displays both.
        public var formats: [GIFLoader.Format] = [.gif]
        /// The poster size placeholders point at (nil: the generation's smallest).
        public var posterSize: Int?
        /// Most bytes of GIFs the lazy disk cache keeps.
        public var lazyCacheByteLimit: Int64 = 64 << 20
        /// Network fetches at once (visible ones first).
        public var maxConcurrentFetches = 4
        /// The limits of every request of ``GIFLoader/refresh(progress:)`` and of a GIF fetched by
        /// range: a server that accepts and never answers, or stops sending, fails the call after
        /// one low-speed window (30 s by default, ``HTTPTimeouts/lowSpeedWindow``) with a message
        /// that says what to check; set ``HTTPTimeouts/deadline`` to bound a whole call.
        public var timeouts = HTTPTimeouts()
        /// How long ``GIFLoader/refresh(progress:)`` waits for another process's install on the same
        /// folder (an app and its extensions sharing an app group) before it throws
        /// a ``GIFLoaderError`` saying another install is running on the folder.
        package var installLockWait = TimeSpan.seconds(60)
        /// The bounds every index, pack and GIF read is checked against.
        package var limits = PackLimits.standard
        /// Tests: sees the refresh's install go by its cancellation checkpoints (`PackInstaller`).
        var installStageHook: (@Sendable (InstallStage) -> Void)?

        /// The defaults.
        public init() {}
    }

    /// Where the index is read: an http(s) URL, or a file URL for a local index.
    package let indexURL: URL
    /// The folder the loader keeps its packs and caches in (absolute, standardized).
    package let cacheFolder: URL
    /// The configuration the loader was made with.
    package let configuration: Configuration
    let installer: PackInstaller
    let lazy: LazyGIFCache
    let lazyStore: LazyGIFStore
    let source: PackIndexSource
    let transport: any HTTPTransport
    let memory: MemoryTier
    /// A call's way down the tiers, per exercise id or hash.
    let gifFlights = LoaderFlights<LoadedGIF?>()
    /// Network fetches, per GIF (its hash): two exercises sharing a GIF, or an id and its hash, fetch it once.
    let fetchFlights = LoaderFlights<LoadedGIF?>()
    let indexFlights = LoaderFlights<IndexLookup>()
    /// The installed generation's one read, shared by the callers that need it at once.
    let snapshotFlights = LoaderFlights<InstalledSnapshot?>()
    /// Tests: how many times the installed manifest was read.
    let snapshotReads = Locked(0)
    /// A cancelled refresh waits for its install to stop, so the cache is as it was when it returns;
    /// a refresh started meanwhile runs once it has stopped.
    let refreshFlights = LoaderFlights<InstallReport>(lastWaiterAwaitsCancelledWork: true, oneAtATime: true)
    let gate: FetchGate
    /// The refresh in flight: its index and the GIFs its downloads hand over, for lookups meanwhile.
    let refreshWatch = RefreshWatch()
    let state = LoaderState()
    private let memoryWarnings: MemoryWarningObserver

    /// `indexURL`: http(s) (or a file URL for a local index); `cacheFolder`: an absolute file URL
    /// (created when missing); `trustedKeys`: when not empty, every index must be signed by one of
    /// them (``TrustedKey``); `transport`: ``URLSessionTransport`` by default. Throws a
    /// ``GIFLoaderError`` naming the argument that is wrong.
    public init(
        indexURL: URL, cacheFolder: URL, trustedKeys: [TrustedKey] = [],
        transport: (any HTTPTransport)? = nil, configuration: Configuration = Configuration()
    ) throws(GIFLoaderError) {
        let folder = try Self.checkedFolder(cacheFolder)
        let scheme = indexURL.scheme?.lowercased() ?? ""
        switch scheme {
        case "http", "https": source = PackIndexSource(indexURL.absoluteString)
        case "file": source = PackIndexSource(indexURL.path)
        default: throw .unsupportedIndexURL(indexURL.absoluteString)
        }
        self.indexURL = indexURL
        self.cacheFolder = URL(fileURLWithPath: folder, isDirectory: true)
        self.configuration = configuration
        let http = transport ?? URLSessionTransport(maxConnections: max(2, configuration.maxConcurrentFetches))
        self.transport = http
        let trust = trustedKeys.isEmpty ? nil : IndexTrust(keys: trustedKeys.map(\.minisign))
        var installer = PackInstaller(cacheDirectory: "\(folder)/installed", limits: configuration.limits)
        installer.trust = trust
        installer.withPosters = configuration.withPosters
        installer.preferredPixelSize = configuration.preferredPixelSize
        installer.formats = configuration.formats.map(\.imageFormat)
        installer.stageHook = configuration.installStageHook
        installer.timeouts = configuration.timeouts
        // One rollback floor per index URL for the whole loader: each tier also reads the other's (LoaderFloors.swift).
        let floors = LoaderFloors(folder: folder, indexURL: source.description)
        installer.floorSource = trust == nil ? nil : floors.lazyFloor
        self.installer = installer
        lazy = LazyGIFCache(
            directory: "\(folder)/lazy", indexURL: source.description, byteLimit: configuration.lazyCacheByteLimit,
            indexMaxAge: .seconds(300), client: http, limits: configuration.limits, attempts: 3, timeouts: configuration.timeouts,
            trust: trust, preferredPixelSize: configuration.preferredPixelSize, formats: configuration.formats.map(\.imageFormat),
            floorSource: trust == nil ? nil : floors.installedFloor)
        lazyStore = LazyGIFStore(directory: "\(folder)/lazy")
        memory = MemoryTier(costLimit: configuration.memoryCostLimit, countLimit: configuration.memoryCountLimit)
        gate = FetchGate(width: configuration.maxConcurrentFetches)
        memoryWarnings = MemoryWarningObserver(memory)
    }

    /// The folder's path: a file URL's, absolute.
    static func checkedFolder(_ url: URL) throws(GIFLoaderError) -> String {
        guard url.isFileURL else { throw .cacheFolderNotAFileURL(url.absoluteString) }
        guard url.baseURL == nil, url.relativePath.hasPrefix("/") else { throw .cacheFolderRelative(url.relativePath) }
        return PathText.trimmingTrailingSlashes(url.standardizedFileURL.path)
    }

    // MARK: GIFs

    /// Exercise `exerciseID`'s GIF, or nil when the index lists it without one (show its
    /// placeholder). Throws `CancellationError` when cancelled, else a ``GIFLoaderError`` (of kind
    /// ``GIFLoadFailure/other`` when no pack lists the exercise).
    public func gif(for exerciseID: String) async throws -> LoadedGIF? {
        guard ExerciseID.isValid(exerciseID) else { throw GIFLoaderError(wrapping: PackClientError.unknownExercise(exerciseID)) }
        return try await load(.exercise(exerciseID), visible: true, call: configuration.timeouts.startingCall())
    }

    /// The GIF whose SHA-256 is `sha256` (an image library's key), or nil when neither the
    /// installed packs nor the index hold it. A hash names one GIF: it is found in whichever pack
    /// holds it, a rendition other than ``Configuration/preferredPixelSize``'s included.
    public func gif(sha256: String) async throws -> LoadedGIF? {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ Hex.digits.contains($0) }) else { return nil }
        return try await load(.hash(sha256), visible: true, call: configuration.timeouts.startingCall())
    }

    /// Loads these exercises' GIFs into the memory and disk tiers, after every visible request.
    /// Cancel the handle when the rows scroll away: no request starts after ``PrefetchHandle/cancel()``,
    /// the ones in transfer stop (unless a visible request shares them), and
    /// the handle knows when they have stopped. However long the list, a few
    /// workers (8, or twice ``Configuration/maxConcurrentFetches`` when more) take its ids in order,
    /// at low priority.
    @discardableResult
    public func prefetch(_ exerciseIDs: [String]) -> PrefetchHandle {
        let ids = exerciseIDs.filter(ExerciseID.isValid)
        let next = Locked(0)
        let workers = min(ids.count, max(8, 2 * configuration.maxConcurrentFetches))
        let task = Task(priority: .low) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<workers {
                    group.addTask {
                        while !Task.isCancelled {
                            let at = next.withLock { at in
                                defer { at += 1 }
                                return at
                            }
                            guard at < ids.count else { return }
                            _ = try? await self.load(.exercise(ids[at]), visible: false, call: self.configuration.timeouts.startingCall())
                        }
                    }
                }
            }
        }
        return PrefetchHandle(task: task)
    }

    /// Empties the memory tier (the loader does it on a memory warning).
    public func emptyMemory() { memory.removeAll() }

    /// Returns once no work is in flight, cancelled work included: the caches are at rest.
    package func settle() async {
        await gifFlights.settle()
        await fetchFlights.settle()
        await refreshFlights.settle()
        await indexFlights.settle()
    }

    /// What a lookup asks for: an exercise's GIF, or a GIF by its SHA-256.
    enum Key: Sendable, Hashable {
        case exercise(String)
        case hash(String)
    }

    /// One public call's load: `timeouts` started when the call did (one deadline for all it does).
    /// A visible call's disk work goes before a prefetch's (``BlockingWork/urgent``), its fetch
    /// before theirs at the gate; a prefetch's caller waits for its cancelled work to stop.
    func load(_ key: Key, visible: Bool, call timeouts: HTTPTimeouts) async throws -> LoadedGIF? {
        // Another process's install is noticed here too (one lstat): the memory tier's answer is the current generation's.
        noticeGenerationSwitch()
        if let hash = state.knownHash(key), let entry = memory.gif(hash), isCurrentFile(entry.fileURL) {
            return LoadedGIF(sha256: hash, data: entry.data, fileURL: entry.fileURL, tier: .memory)
        }
        // A visible caller joining a prefetch's flight moves it up: at the gate now, or when it gets there.
        if visible {
            state.wantVisible(key)
            if let hash = state.knownHash(key), let ticket = state.ticket(hash) { await gate.promote(ticket) }
        }
        defer { if visible { state.dropVisible(key) } }
        do {
            return try await gifFlights.value(for: .lookup(key), awaitsCancelledWork: !visible) {
                try await BlockingWork.$urgent.withValue(visible) { try await self.resolve(key, visible: visible, call: timeouts) }
            }
        } catch {
            throw Self.cancellationOr(error)
        }
    }

    /// What a public call throws: `CancellationError` when the task is cancelled (a transfer that
    /// ended because of it included), else the ``GIFLoaderError`` of `error`.
    static func cancellationOr(_ error: any Error) -> any Error {
        if Task.isCancelled || error is CancellationError { return CancellationError() }
        let inner = (error as? GIFLoaderError)?.underlying ?? error
        if inner is CancellationError { return CancellationError() }
        if case PackClientError.transfer(_, .cancelled)? = inner as? PackClientError { return CancellationError() }
        return GIFLoaderError(wrapping: error)
    }
}

/// Removes its observer of memory warnings when the loader goes.
final class MemoryWarningObserver: @unchecked Sendable {  // @unchecked: the token is only handed back to NotificationCenter, which is thread-safe.
    /// UIKit's `UIApplication.didReceiveMemoryWarningNotification`, by its value: posted where UIKit
    /// exists, never elsewhere.
    static let name = Notification.Name("UIApplicationDidReceiveMemoryWarningNotification")
    private let token: any NSObjectProtocol

    init(_ memory: MemoryTier) {
        token = NotificationCenter.default.addObserver(forName: Self.name, object: nil, queue: nil) { _ in memory.removeAll() }
    }

    deinit { NotificationCenter.default.removeObserver(token) }
}

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
        RefreshProgress(
            stage: stage, bytesDone: counts.bytesDone, bytesTotal: counts.bytesTotal,
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
        return LoaderPlaceholder(
            exerciseID: id, gifSHA256: hash, averageColor: gif?.averageColor, blurHash: gif?.blurHash,
            width: gif?.width, height: gif?.height, posterURL: poster.map { URL(fileURLWithPath: $0) })
    }
}

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

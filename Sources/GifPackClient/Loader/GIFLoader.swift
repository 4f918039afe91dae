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
    public init(indexURL: URL, cacheFolder: URL, trustedKeys: [TrustedKey] = [],
                transport: (any HTTPTransport)? = nil, configuration: Configuration = Configuration()) throws(GIFLoaderError) {
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
        lazy = LazyGIFCache(directory: "\(folder)/lazy", indexURL: source.description, byteLimit: configuration.lazyCacheByteLimit,
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

import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// Installs packs into an app's cache directory so that finding an exercise's GIF is a file read.
///
/// ``install(from:packs:client:)`` reads the index, fetches the chosen packs (all by default) with
/// ``PackDownloader`` into `<cache>.d/downloads/` (resuming interrupted downloads; a local index's
/// packs are read in place), verifies them, and installs exactly those packs as a new generation
/// of the cache, in the chosen ``InstallLayout``:
///
/// 1. Every check runs before anything reaches the cache: the index description, the pack file's
///    size and SHA-256, its zstd frame sequence against the index (no unlisted entry), its
///    `catalog.json`, and for every GIF the tar header (regular file, expected name and size), a
///    decompression cap at the indexed size and the SHA-256. Tar names never become file names:
///    files are named from validated exercise ids or hashes. Libarchive and `tar` are not used.
/// 2. The generation is staged in `<cache>.d/.staging-…`, unchanged GIFs hard-linked from the
///    previous generation, new ones decompressed and fsynced (see `GenerationBuilder`), and the
///    manifest (``InstallManifest``) written last.
/// 3. `<cache>` — a symbolic link — is switched to the new generation with one `rename(2)`, so
///    readers see the old complete set or the new one, never a mix (see `CacheGenerations`).
///    The previous generation is kept until the next install; older ones are removed.
///
/// With ``trust`` set, the index must first pass ``IndexTrust``: signed (`index.json.minisig` beside
/// it) by a trusted key, not expired, its `sequence` not below the installed generation's; a refusal
/// (``PackClientError/untrusted(_:)``) comes before any download. The new generation records the
/// rollback floor, the highest sequence verified so far (``InstallManifest/indexSequence``); every
/// install carries it forward, one without keys and ``install(_:)`` (packs already downloaded, no
/// index to check) too, so an untrusted install never lowers or erases it.
///
/// With ``withPosters``, each chosen pack's posters pack (format 1.2) is fetched (nothing when the
/// installed generation already holds every poster of that very file; on an upgrade only its
/// catalog's frame and the missing posters' frames, as for a pack below; each poster at most once across
/// the chosen packs, see `fetchPosterPacks(_:from:downloader:client:installed:cancellation:)`), verified like a pack (see
/// `PosterInstallPlan`), and its posters are installed in the same generation, at
/// `<cache>/posters/<size>/<id>.gif`; ``InstalledCache/posterPath(forExercise:size:)`` finds them.
///
/// With ``preferredPixelSize`` and an index that has renditions (format 1.3), each exercise of the
/// chosen packs gets the smallest rendition at least that size, else the largest there is, and only
/// the packs giving those GIFs are fetched (``RenditionChoice``).
///
/// With a previous generation installed and a remote index, an upgrade fetches only what the
/// cache lacks: the new pack's catalog frame and the frames of GIFs not held yet, by single-range
/// requests into a sparse file, each frame checked as above (the whole-file size, SHA-256 and frame
/// scan only apply to whole downloads); see ``SparseUpgradeSettings`` and
/// ``InstallReport/fetches``. It downloads the whole pack when the server ignores `Range`, when
/// the ranges would cost more, or with nothing installed yet. Across the chosen packs, each GIF is
/// fetched at most once: the packs go largest first, and a later one is planned against the GIFs
/// the earlier ones bring too (so on a first install, a pack whose GIFs all came with another costs
/// its catalog frame); see `fetchPacks(_:from:downloader:client:previous:cancellation:unpacked:)`.
///
/// Cancelling the calling task ends ``install(from:packs:client:)`` with `CancellationError` at any
/// stage before the switch — the index or a pack in transfer, the checks, the staging (looked at
/// between entries), right before the `rename(2)` — and leaves `<cache>` exactly as it was, as a
/// failure does. The switch is the commit point: once it is done, the install is, and the call
/// returns its report.
///
/// Any failure, including a refused pack (``PackClientError/rejected(_:)``), deletes the staging
/// directory and a sparse upgrade's file and leaves `<cache>` exactly as it was; only a whole
/// download (or its `.part`) stays in `<cache>.d/downloads/`, for the next attempt to reuse. A
/// `<cache>` that is not gifpack's is refused before `<cache>.d` is made, and a first install that
/// is refused or fails removes the `<cache>.d` it made unless a download to resume is in it.
/// One install runs per cache at a time (an exclusive lock on `<cache>.d/install.lock`; a second one fails with
/// ``PackClientError/cacheLocked(path:)``). Disk work runs on dedicated threads, never Swift's
/// cooperative pool, and on every core: a whole pack's GIFs are decoded while it downloads
/// (`PackFollower`), the rest are staged on every core (`GenerationBuilder`), and a local pack's
/// SHA-256 is checked beside the staging.
///
/// ```swift
/// let installer = PackInstaller(cacheDirectory: cachesURL.appendingPathComponent("exercise-gifs").path)
/// let report = try await installer.install(from: PackIndexSource("https://cdn.example.com/gifpack/index.json"))
/// // <cache>/0001.gif … ; report.gifsWritten, report.removed
/// ```
package struct PackInstaller: Sendable {
    /// The path apps read GIFs from.
    package let cacheDirectory: String
    package var layout: InstallLayout
    package var limits: PackLimits
    /// Keep verified pack downloads after installing them (by default they are deleted).
    package var keepDownloads = false
    /// Transfer attempts per pack, each resuming the last (and per range of a sparse upgrade).
    package var downloadAttempts = 3
    /// Trusted signing keys: when set, ``install(from:packs:client:)`` accepts only an index signed
    /// by one of them, not expired and not older (by `sequence`) than the installed generation's
    /// floor, and records its sequence in the new generation when higher. nil: any index is accepted
    /// (see README); the floor is carried forward unchanged.
    package var trust: IndexTrust?
    /// Upgrades fetch only the frames the cache lacks, by range, when that costs less than the
    /// whole pack (see ``SparseUpgradeSettings``).
    package var sparseUpgrades = SparseUpgradeSettings()
    /// Also install each chosen pack's still posters (format 1.2), at every size its posters pack
    /// has, as `<cache>/posters/<size>/<id>.gif` (``InstallLayout/posterRelativePath(size:exercise:sha256:)``).
    /// A posters pack is not fetched at all when the installed generation came from the same
    /// posters pack and still holds every poster; on an upgrade only the posters the cache lacks
    /// are fetched, by range, like a pack's GIFs. false: nothing poster-related is fetched.
    package var withPosters = false
    /// The pixels the app shows a GIF at (a view's width in points × the screen's scale,
    /// ``RenditionChoice/pixelSize(points:scale:)``). With an index that has renditions (format 1.3),
    /// each exercise of each chosen pack gets the smallest rendition at least this size, else the
    /// largest there is (``RenditionChoice``), and only the packs that give a chosen GIF are fetched;
    /// placeholders and posters stay the first resolution's. nil, or an index without renditions:
    /// every pack of `packs[]` is installed as before renditions. Recorded in the manifest
    /// (``InstallManifest/preferredPixelSize``): a later install with another size is not "unchanged".
    package var preferredPixelSize: Int?
    /// The image formats the app displays, in order of preference (format 1.4): with `[.webp, .gif]`
    /// and an index that has a WebP rendition of a chosen pack (`formatPacks[]`), that pack's WebPs
    /// are installed instead of its GIFs (`<cache>/<id>.webp`; the GIFs a WebP pack lists stay
    /// `.gif`) and the GIF pack is not fetched; placeholders and posters stay the GIFs'. GIF is
    /// always the last resort. The default, `[.gif]`, installs the GIF packs and never reads a
    /// WebP pack. Recorded in the manifest (``InstallManifest/formats``).
    package var formats: [ImageFormat] = [.gif]
    /// The limits of every request (``HTTPTimeouts``): the low-speed window, counted from each
    /// request on, and ``HTTPTimeouts/deadline``, the longest one ``install(from:packs:client:)``
    /// may take over the network, the index, signature, every pack and every retry included
    /// (disk work is not cut short). nil deadline: none.
    package var timeouts = HTTPTimeouts()
    /// Tests: sees every cancellation checkpoint (``InstallStage``) go by.
    var stageHook: (@Sendable (InstallStage) -> Void)?
    /// Counts the install's bytes and GIFs as it goes (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress?
    /// The rollback floor another tier of the app keeps on disk for this index URL (a ``GIFLoader``'s
    /// lazy cache): with ``trust``, an index below it is refused like one below the installed
    /// generation's floor, and the index is not asked for conditionally on a generation below it.
    var floorSource: (@Sendable () throws -> Int?)?
    /// Tests: told each GIF a ``PackFollower`` hands over, with the bytes of its pack downloaded by then.
    var followHook: (@Sendable (_ sha256: String, _ downloaded: Int64) -> Void)?
    /// ``GIFLoader``: told each GIF a ``PackFollower`` hands over and the verified file it is in
    /// until the staging moves it (read it at once, on the caller's thread).
    var gifReadyHook: (@Sendable (_ sha256: String, _ path: String) -> Void)?
    /// ``GIFLoader``: told the index once it is accepted (loaded, and trusted when ``trust`` is set).
    var indexHook: (@Sendable (PackIndex) -> Void)?

    package init(cacheDirectory: String, layout: InstallLayout = .byID, limits: PackLimits = .standard) {
        self.cacheDirectory = CacheGenerations(cachePath: cacheDirectory).cachePath
        self.layout = layout
        self.limits = limits
    }

    /// Where pack downloads and their resumable `.part` files go (for tests; the install uses `CacheGenerations`).
    var downloadDirectory: String { CacheGenerations(cachePath: cacheDirectory).downloadsPath }

    /// Loads the index at `source` and installs the packs named in `names` (nil: every pack).
    /// Throws a ``PackClientError``, or `CancellationError` when the task is cancelled before the
    /// new generation is switched in (the cache then is as it was).
    package func install(from source: PackIndexSource, packs names: [String]? = nil,
                        client: (any HTTPTransport)? = nil) async throws -> InstallReport {
        let cancellation = InstallCancellation(hook: stageHook)
        let clock = InstallPhaseClock()
        do {
            var report = try await withTaskCancellationHandler {
                try await lockedInstall(from: source, packs: names, client: client, cancellation: cancellation, clock: clock)
            } onCancel: {
                cancellation.cancel()
            }
            report.phases = clock.phases()
            return report
        } catch {
            // A transfer the cancellation stopped (.transfer(…, .cancelled)), a checkpoint that saw it, or
            // anything else that failed once the call was cancelled: the caller asked to stop.
            if cancellation.isCancelled || Task.isCancelled || error as? PackClientError == .cancelled { throw CancellationError() }
            throw error
        }
    }

    private func lockedInstall(from source: PackIndexSource, packs names: [String]?, client: (any HTTPTransport)?,
                               cancellation: InstallCancellation, clock: InstallPhaseClock) async throws(PackClientError) -> InstallReport {
        let generations = CacheGenerations(cachePath: cacheDirectory)
        let lock = try await Self.lock(generations)
        // GIFs decoded while their pack downloads wait here for the staging (named like a staging
        // directory, so what an interrupted install leaves goes with the rest, CacheGenerations.removeStale).
        let unpacked = "\(generations.storePath)/\(CacheGenerations.stagingName(1))"
        do {
            let report = try await install(from: source, packs: names, client: client, generations: generations,
                                           unpacked: unpacked, cancellation: cancellation, clock: clock)
            await removeFiles([unpacked])
            clock.enter(.none)
            withExtendedLifetime(lock) {}
            return report
        } catch {
            await removeFiles([unpacked])
            // A refusal or failure of a first install leaves no <cache>.d behind (only what can resume a download).
            await Self.release(lock, generations: generations)
            throw error
        }
    }

    private func install(from source: PackIndexSource, packs names: [String]?, client: (any HTTPTransport)?,
                         generations: CacheGenerations, unpacked: String,
                         cancellation: InstallCancellation, clock: InstallPhaseClock) async throws(PackClientError) -> InstallReport {
        // One client for the index and every pack of a remote source, unless the caller brought one.
        var owned: (any HTTPTransport)?
        if client == nil, case .url = source.location {
            owned = URLSessionTransport(maxConnections: max(2, sparseUpgrades.maxRequestsInFlight))
        }
        let http = client ?? owned
        let timeouts = self.timeouts.startingCall()

        // The index: conditional on the one the installed generation came from when that generation
        // is what this call asks for again, so an unchanged index costs a 304 and no body.
        let current = try await installedGeneration(generations)
        // With trust, the floor is the higher of the installed generation's and the other tier's (one per URL for the app).
        let installedFloor = current?.manifest.indexSequence
        let otherFloor = try await otherTierFloor()
        let floor = [installedFloor, otherFloor].compactMap { $0 }.max()
        let condition = (otherFloor ?? .min) > (installedFloor ?? .min) ? nil : conditionalBasis(current?.manifest, names: names, source: source)
        let fetched: FetchedIndex
        try cancellation.checkpoint(.index)
        switch try await source.load(ifChangedFrom: condition?.validators, trust: trust,
                                     installedSequence: trust == nil ? nil : floor,
                                     client: http, limits: limits, timeouts: timeouts) {
        case .notModified:
            guard let current, let condition else {
                throw .unconditionalNotModified(source.description)
            }
            if let trust { try trust.acceptUnchanged(condition, location: source.description) }
            return Self.unchangedReport(current.manifest, directory: current.directory, cacheDirectory: cacheDirectory,
                                        generations: generations)
        case .modified(let loaded):
            fetched = loaded
        }
        let index = fetched.index
        indexHook?(index)
        clock.enter(.planning)
        let record = fetched.validators.map {
            InstalledIndex(validators: $0, packs: index.packs.map(\.name), expires: trust == nil ? nil : index.expires,
                           signedBy: trust == nil ? nil : IndexTrust.signerKeyID(of: fetched.signature))
        }
        let named = try select(names, from: index)
        if withPosters, let bare = named.first(where: { $0.posters == nil }) { throw .noPosters(pack: bare.name) }
        // With renditions, the packs of each exercise's chosen rendition (RenditionChoice.swift); with
        // formats, each of those in the app's preferred format (FormatChoice.swift).
        let selection = RenditionSelection(chosen: named, index: index, pixels: preferredPixelSize).preferring(formats, in: index)
        let chosen = selection.packs
        // The index is accepted: downloads of packs it no longer lists go before anything is fetched.
        try await removeStaleDownloads(generations, index: index)
        if let report = try await unchangedReport(for: chosen, posters: named, generations: generations,
                                                  refreshing: record, sequence: trust == nil ? nil : index.sequence) {
            return report
        }

        progress?.begin(gifs: selection.gifCount)
        var downloader = PackDownloader(directory: generations.downloadsPath, client: http, limits: limits)
        downloader.progress = progress
        downloader.maxAttempts = downloadAttempts
        downloader.timeouts = timeouts
        // Sparse upgrades (PackInstaller+Sparse.swift): only the missing frames, by range, when it pays.
        let previous = try await sparseBasis(for: source, generations: generations)
        clock.enter(.transfer)
        let packs = try await fetchPacks(chosen, from: source, downloader: downloader, client: http, previous: previous,
                                         cancellation: cancellation, unpacked: unpacked, selection: selection)
        let downloaded = packs.0
        var fetches = packs.1
        var posterSources: [PosterSource] = []
        if withPosters {
            do {
                let installed = try await installedGeneration(generations)
                let posters = try await fetchPosterPacks(named.compactMap(\.posters), from: source, downloader: downloader,
                                                         client: http, installed: installed, cancellation: cancellation)
                posterSources = posters.0
                fetches += posters.1
            } catch {
                await removeCopies(downloaded)
                throw error
            }
        }
        clock.enter(.planning)
        var report = try await installLocked(downloaded, posters: posterSources, generations: generations,
                                             indexSequence: trust == nil ? nil : index.sequence, indexRecord: record,
                                             cancellation: cancellation, selection: selection, clock: clock)
        report.fetches = fetches
        return report
    }

    /// Once `index` is accepted (loaded, and trusted when ``trust`` is set): the downloads of packs it
    /// no longer lists go (``StaleDownloads``), so `downloads/` never holds more than the packs of
    /// the index being installed.
    private func removeStaleDownloads(_ generations: CacheGenerations, index: PackIndex) async throws(PackClientError) {
        let directory = generations.downloadsPath
        try await BlockingWork.run("gifpack.downloads") { () throws(PackClientError) in
            _ = try StaleDownloads.remove(in: directory, keepingPacksOf: index)
        }
    }

    /// ``floorSource``'s floor (with ``trust`` only), read off Swift's cooperative pool.
    private func otherTierFloor() async throws(PackClientError) -> Int? {
        guard trust != nil, let floorSource else { return nil }
        return try await BlockingWork.run("gifpack.floor") { () throws(PackClientError) -> Int? in try LoaderFloors.read(floorSource) }
    }

    /// The installed generation (directory and manifest), nil when nothing is installed.
    private func installedGeneration(_ generations: CacheGenerations) async throws(PackClientError) -> GenerationBuilder.Previous? {
        try await BlockingWork.run("gifpack.manifest") { () throws(PackClientError) -> GenerationBuilder.Previous? in
            guard let generation = try generations.current() else { return nil }
            let directory = generations.generationPath(generation)
            return try InstallManifest.read(directory: directory).map { .init(directory: directory, manifest: $0) }
        }
    }

    /// The index record to make the index request conditional on: the installed generation's,
    /// when it came from this URL and holds what this call asks for (the same pack selection — with
    /// renditions, the packs whose renditions it installed —, layout, posters choice and
    /// ``preferredPixelSize``), and, with ``trust``, was verified by a key still trusted.
    /// Otherwise nil: the index is fetched whole.
    private func conditionalBasis(_ manifest: InstallManifest?, names: [String]?, source: PackIndexSource) -> InstalledIndex? {
        guard case .url(let url) = source.location, let manifest, let record = manifest.index,
              record.validators.belong(to: url) || record.validators.belong(to: CompressedIndex.beside(url)),
              manifest.layout == layout, (manifest.posterPacks != nil) == withPosters,
              manifest.preferredPixelSize == preferredPixelSize, manifest.formats == FormatChoice.recorded(formats) else { return nil }
        // With renditions, `all.360` was installed for `all`: the packs asked for are the families.
        let installed = Array(Set(manifest.packs.map { RenditionChoice.family(of: $0.name) })).sorted()
        let wanted = names.flatMap { $0.isEmpty ? nil : Array(Set($0)).sorted() } ?? record.packs
        guard installed == wanted, Set(wanted).isSubset(of: record.packs) else { return nil }
        if let trust {
            guard manifest.indexSequence != nil, let signer = record.signedBy, trust.trusts(keyID: signer) else { return nil }
        }
        return record
    }

    /// Installs packs already fetched and verified by a ``PackDownloader``.
    package func install(_ packs: [DownloadedPack]) async throws(PackClientError) -> InstallReport {
        let generations = CacheGenerations(cachePath: cacheDirectory)
        let clock = InstallPhaseClock()
        let lock = try await Self.lock(generations)
        do {
            clock.enter(.planning)
            var report = try await installLocked(packs, generations: generations, clock: clock)
            withExtendedLifetime(lock) {}
            clock.enter(.none)
            report.phases = clock.phases()
            return report
        } catch {
            await Self.release(lock, generations: generations)
            throw error
        }
    }

    /// Refuses a `<cache>` that is not gifpack's before anything is created, then creates
    /// `<cache>.d` (when missing) and takes the install lock.
    private static func lock(_ generations: CacheGenerations) async throws(PackClientError) -> InstallLock {
        try await BlockingWork.run("gifpack.lock") { () throws(PackClientError) -> InstallLock in
            _ = try generations.current()
            return try InstallLock(generations)
        }
    }

    /// After a failed install: when that install made `<cache>.d` and nothing was installed, removes
    /// what it left there (see ``CacheGenerations/removeUnusedStore()``), then lets the lock go.
    private static func release(_ lock: InstallLock, generations: CacheGenerations) async {
        guard lock.createdStore else { return }
        _ = await BlockingWork.result("gifpack.cleanup") { () throws(PackClientError) in
            withExtendedLifetime(lock) { generations.removeUnusedStore() }
        }
    }

    private func installLocked(_ packs: [DownloadedPack], posters: [PosterSource] = [], generations: CacheGenerations,
                               indexSequence: Int? = nil, indexRecord: InstalledIndex? = nil,
                               cancellation: InstallCancellation = InstallCancellation(),
                               selection: RenditionSelection? = nil, clock: InstallPhaseClock) async throws(PackClientError) -> InstallReport {
        let settings = self
        let outcome = await BlockingWork.result("gifpack.install") { () throws(PackClientError) -> InstallReport in
            try settings.installGeneration(packs, posters: posters, generations: generations, indexSequence: indexSequence,
                                           indexRecord: indexRecord, cancellation: cancellation, selection: selection, clock: clock)
        }
        switch outcome {
        case .success(let report):
            clock.enter(.switch)
            if !keepDownloads {
                await removeCopies(packs)
                await removeCopies(posters)
            }
            return report
        case .failure(let error):
            if case .rejected = error {
                await removeCopies(packs)
                await removeCopies(posters)
            } else {
                // A whole download is kept to be reused (checked again) by the next attempt; a sparse
                // upgrade's file never is (each attempt makes it anew): it goes now.
                await removeCopies(packs.filter { $0.fetchedGIFs != nil })
                await removeCopies(posters.filter { $0.fetchedPosters != nil })
            }
            throw error
        }
    }

    /// The packs to install, in index order, without repeats.
    private func select(_ names: [String]?, from index: PackIndex) throws(PackClientError) -> [PackDescription] {
        guard let names, !names.isEmpty else { return index.packs }
        var chosen: [PackDescription] = []
        for name in names where !chosen.contains(where: { $0.name == name }) {
            guard let pack = index.pack(named: name) else {
                throw .unknownPack(name, available: index.allPacks.map(\.name))
            }
            chosen.append(pack)
        }
        return chosen.sorted { $0.name < $1.name }
    }

    /// A report without any work when exactly these packs (and, with posters, the posters packs of
    /// `posters`, the packs asked for; without, none) are installed in this layout, for this
    /// ``preferredPixelSize``. The generation's manifest then takes the new
    /// index's record (`refreshing`: validators, expiry), so the next check is conditional on this
    /// index, and, with trusted keys, the floor raised to its `sequence` (a re-signed index with the
    /// same packs); `sequence` is nil without keys, which leaves the floor as it is.
    private func unchangedReport(for packs: [PackDescription], posters named: [PackDescription], generations: CacheGenerations,
                                 refreshing record: InstalledIndex?, sequence: Int?) async throws(PackClientError) -> InstallReport? {
        let wantedPosters = withPosters ? named.compactMap(\.posters).map { [$0.name, $0.sha256] }.sorted { $0[0] < $1[0] } : []
        let formats = FormatChoice.recorded(formats)
        return try await BlockingWork.run("gifpack.manifest") { [layout, cacheDirectory, preferredPixelSize] () throws(PackClientError) -> InstallReport? in
            guard let generation = try generations.current(),
                  var manifest = try InstallManifest.read(directory: generations.generationPath(generation)),
                  manifest.layout == layout, manifest.preferredPixelSize == preferredPixelSize, manifest.formats == formats,
                  manifest.packs.map({ [$0.name, $0.sha256] }) == packs.sorted(by: { $0.name < $1.name }).map({ [$0.name, $0.sha256] }),
                  (manifest.posterPacks ?? []).map({ [$0.name, $0.sha256] }) == wantedPosters
            else { return nil }
            let directory = generations.generationPath(generation)
            let floor = InstallManifest.floor(carrying: manifest.indexSequence, verified: sequence)
            if manifest.index != record || manifest.indexSequence != floor {
                manifest.index = record
                manifest.indexSequence = floor
                try manifest.replace(inDirectory: directory)
            }
            return Self.unchangedReport(manifest, directory: directory, cacheDirectory: cacheDirectory, generations: generations)
        }
    }

    /// The report of an install that changed nothing: the generation as its manifest describes it.
    private static func unchangedReport(_ manifest: InstallManifest, directory: String, cacheDirectory: String,
                                        generations: CacheGenerations) -> InstallReport {
        InstallReport(
            cacheDirectory: cacheDirectory, generationDirectory: directory,
            generation: manifest.generation, layout: manifest.layout, packs: manifest.packs, exercises: manifest.exercises.count,
            placeholders: manifest.exercises.values.filter { $0 == nil }.count, gifsWritten: 0, gifsReused: 0,
            linksCreated: 0, bytesWritten: 0, bytesDownloaded: 0, added: [], removed: [], changed: [],
            isUnchanged: true, posterPacks: manifest.posterPacks ?? [])
    }

    /// Deletes downloaded posters pack files (never a local index's own).
    func removeCopies(_ posters: [PosterSource]) async {
        await removeFiles(posters.compactMap(\.file).filter(\.isCopy).map(\.path))
    }

    /// Deletes downloaded pack files (never a local index's own packs).
    func removeCopies(_ packs: [DownloadedPack]) async {
        await removeFiles(packs.filter(\.isCopy).map(\.path))
    }

    private func removeFiles(_ paths: [String]) async {
        guard !paths.isEmpty else { return }
        _ = await BlockingWork.result("gifpack.cleanup") { () throws(PackClientError) in
            for path in paths { FileOps.remove(path) }
        }
    }
}

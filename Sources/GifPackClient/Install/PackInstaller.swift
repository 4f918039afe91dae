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
/// the chosen packs, see `Fetching.posterPacks(_:installed:)`), verified like a pack (see
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
/// its catalog frame); see `Fetching.packs(_:selection:)`.
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
    package func install(
        from source: PackIndexSource, packs names: [String]? = nil,
        client: (any HTTPTransport)? = nil
    ) async throws -> InstallReport {
        let run = Run(self, cancellation: InstallCancellation(hook: stageHook))
        do {
            var report = try await withTaskCancellationHandler {
                try await run.lockedInstall(from: source, packs: names, client: client)
            } onCancel: {
                run.cancellation.cancel()
            }
            report.phases = run.clock.phases()
            return report
        } catch {
            // A transfer the cancellation stopped (.transfer(…, .cancelled)), a checkpoint that saw it, or
            // anything else that failed once the call was cancelled: the caller asked to stop.
            if run.cancellation.isCancelled || Task.isCancelled || error as? PackClientError == .cancelled { throw CancellationError() }
            throw error
        }
    }

    /// Installs packs already fetched and verified by a ``PackDownloader``.
    package func install(_ packs: [DownloadedPack]) async throws(PackClientError) -> InstallReport {
        let run = Run(self, cancellation: InstallCancellation())
        let lock = try await run.takeLock()
        do {
            run.clock.enter(.planning)
            var report = try await run.installLocked(NewGeneration(packs: packs))
            withExtendedLifetime(lock) {}
            run.clock.enter(.none)
            report.phases = run.clock.phases()
            return report
        } catch {
            await run.release(lock)
            throw error
        }
    }

    /// ``floorSource``'s floor (with ``trust`` only), read off Swift's cooperative pool.
    private func otherTierFloor() async throws(PackClientError) -> Int? {
        guard trust != nil, let floorSource else { return nil }
        return try await BlockingWork.run("gifpack.floor") { () throws(PackClientError) -> Int? in try LoaderFloors.read(floorSource) }
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
            manifest.preferredPixelSize == preferredPixelSize, manifest.formats == FormatChoice.recorded(formats)
        else { return nil }
        // With renditions, `all.360` was installed for `all`: the packs asked for are the families.
        let installed = Array(Set(manifest.packs.map { RenditionChoice.family(of: $0.name) })).sorted()
        let wanted = names.flatMap { $0.isEmpty ? nil : Array(Set($0)).sorted() } ?? record.packs
        guard installed == wanted, Set(wanted).isSubset(of: record.packs) else { return nil }
        if let trust {
            guard manifest.indexSequence != nil, let signer = record.signedBy, trust.trusts(keyID: signer) else { return nil }
        }
        return record
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

    /// The report of an install that changed nothing: the generation as its manifest describes it.
    private static func unchangedReport(_ manifest: InstallManifest, directory: String, cacheDirectory: String) -> InstallReport {
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

/// One install, from the install lock to the report: the index (``PackInstaller/install(from:packs:client:)``),
/// the transfers (``PackInstaller/Fetching``), then the disk part on a dedicated thread: the packs'
/// checks, the staging of the new generation on every core (``GenerationBuilder/stageEntries(_:)``)
/// with a local pack's SHA-256 checked beside it, the switch, and the report.
extension PackInstaller {
    /// One install under way; its stages are the methods. What they all look at is here: the
    /// installer's settings, the cache's generations, the call's cancellation and its phase clock.
    struct Run: Sendable {
        let installer: PackInstaller
        let generations: CacheGenerations
        let cancellation: InstallCancellation
        let clock = InstallPhaseClock()

        init(_ installer: PackInstaller, cancellation: InstallCancellation) {
            self.installer = installer
            generations = CacheGenerations(cachePath: installer.cacheDirectory)
            self.cancellation = cancellation
        }

        /// Where GIFs decoded while their pack downloads wait for the staging (named like a staging
        /// directory, so what an interrupted install leaves goes with the rest, CacheGenerations.removeStale).
        var unpacked: String { "\(generations.storePath)/\(CacheGenerations.stagingName(1))" }

        /// Refuses a `<cache>` that is not gifpack's before anything is created, then creates
        /// `<cache>.d` (when missing) and takes the install lock.
        func takeLock() async throws(PackClientError) -> InstallLock {
            try await BlockingWork.run("gifpack.lock") { [generations] () throws(PackClientError) -> InstallLock in
                _ = try generations.current()
                return try InstallLock(generations)
            }
        }

        /// After a failed install: when that install made `<cache>.d` and nothing was installed, removes
        /// what it left there (see ``CacheGenerations/removeUnusedStore()``), then lets the lock go.
        func release(_ lock: InstallLock) async {
            guard lock.createdStore else { return }
            _ = await BlockingWork.result("gifpack.cleanup") { [generations] () throws(PackClientError) in
                withExtendedLifetime(lock) { generations.removeUnusedStore() }
            }
        }

        /// ``PackInstaller/install(from:packs:client:)`` under the install lock, then without what waited in ``unpacked``.
        func lockedInstall(
            from source: PackIndexSource, packs names: [String]?, client: (any HTTPTransport)?
        ) async throws(PackClientError) -> InstallReport {
            let lock = try await takeLock()
            do {
                let report = try await install(from: source, packs: names, client: client)
                await installer.removeFiles([unpacked])
                clock.enter(.none)
                withExtendedLifetime(lock) {}
                return report
            } catch {
                await installer.removeFiles([unpacked])
                // A refusal or failure of a first install leaves no <cache>.d behind (only what can resume a download).
                await release(lock)
                throw error
            }
        }

        /// The index loaded (conditionally) and accepted, the chosen packs fetched, the new generation installed.
        private func install(
            from source: PackIndexSource, packs names: [String]?, client: (any HTTPTransport)?
        ) async throws(PackClientError) -> InstallReport {
            let (trust, limits) = (installer.trust, installer.limits)
            // One client for the index and every pack of a remote source, unless the caller brought one.
            var owned: (any HTTPTransport)?
            if client == nil, case .url = source.location {
                owned = URLSessionTransport(maxConnections: max(2, installer.sparseUpgrades.maxRequestsInFlight))
            }
            let http = client ?? owned
            let timeouts = installer.timeouts.startingCall()

            // The index: conditional on the one the installed generation came from when that generation
            // is what this call asks for again, so an unchanged index costs a 304 and no body.
            let current = try await installedGeneration()
            // With trust, the floor is the higher of the installed generation's and the other tier's (one per URL for the app).
            let installedFloor = current?.manifest.indexSequence
            let otherFloor = try await installer.otherTierFloor()
            let floor = [installedFloor, otherFloor].compactMap { $0 }.max()
            let condition =
                (otherFloor ?? .min) > (installedFloor ?? .min) ? nil : installer.conditionalBasis(current?.manifest, names: names, source: source)
            let fetched: FetchedIndex
            try cancellation.checkpoint(.index)
            switch try await source.load(
                ifChangedFrom: condition?.validators, trust: trust,
                installedSequence: trust == nil ? nil : floor,
                client: http, limits: limits, timeouts: timeouts)
            {
            case .notModified:
                guard let current, let condition else {
                    throw .unconditionalNotModified(source.description)
                }
                if let trust { try trust.acceptUnchanged(condition, location: source.description) }
                return PackInstaller.unchangedReport(current.manifest, directory: current.directory, cacheDirectory: installer.cacheDirectory)
            case .modified(let loaded):
                fetched = loaded
            }
            let index = fetched.index
            installer.indexHook?(index)
            clock.enter(.planning)
            let record = fetched.validators.map {
                InstalledIndex(
                    validators: $0, packs: index.packs.map(\.name), expires: trust == nil ? nil : index.expires,
                    signedBy: trust == nil ? nil : IndexTrust.signerKeyID(of: fetched.signature))
            }
            let sequence = trust == nil ? nil : index.sequence
            let named = try installer.select(names, from: index)
            if installer.withPosters, let bare = named.first(where: { $0.posters == nil }) { throw .noPosters(pack: bare.name) }
            // With renditions, the packs of each exercise's chosen rendition (RenditionChoice.swift); with
            // formats, each of those in the app's preferred format (FormatChoice.swift).
            let selection = RenditionSelection(chosen: named, index: index, pixels: installer.preferredPixelSize)
                .preferring(installer.formats, in: index)
            let chosen = selection.packs
            // The index is accepted: downloads of packs it no longer lists go before anything is fetched.
            try await removeStaleDownloads(keepingPacksOf: index)
            if let report = try await unchangedReport(for: chosen, posters: named, refreshing: record, sequence: sequence) {
                return report
            }

            installer.progress?.begin(gifs: selection.gifCount)
            var downloader = PackDownloader(directory: generations.downloadsPath, client: http, limits: limits)
            downloader.progress = installer.progress
            downloader.maxAttempts = installer.downloadAttempts
            downloader.timeouts = timeouts
            // Sparse upgrades (Fetching): only the missing frames, by range, when it pays.
            let fetching = Fetching(
                installer: installer, source: source, client: http, downloader: downloader,
                cancellation: cancellation, unpacked: unpacked, previous: try await sparseBasis(for: source))
            clock.enter(.transfer)
            var (downloaded, fetches) = try await fetching.packs(chosen, selection: selection)
            var posterSources: [PosterSource] = []
            if installer.withPosters {
                do {
                    let installed = try await installedGeneration()
                    let posters = try await fetching.posterPacks(named.compactMap(\.posters), installed: installed)
                    posterSources = posters.0
                    fetches += posters.1
                } catch {
                    await installer.removeCopies(downloaded)
                    throw error
                }
            }
            clock.enter(.planning)
            var report = try await installLocked(
                NewGeneration(packs: downloaded, posters: posterSources, indexSequence: sequence, indexRecord: record, selection: selection))
            report.fetches = fetches
            return report
        }

        /// Once `index` is accepted (loaded, and trusted when ``trust`` is set): the downloads of packs it
        /// no longer lists go (``StaleDownloads``), so `downloads/` never holds more than the packs of
        /// the index being installed.
        private func removeStaleDownloads(keepingPacksOf index: PackIndex) async throws(PackClientError) {
            let directory = generations.downloadsPath
            try await BlockingWork.run("gifpack.downloads") { () throws(PackClientError) in
                _ = try StaleDownloads.remove(in: directory, keepingPacksOf: index)
            }
        }

        /// The installed generation (directory and manifest), nil when nothing is installed.
        private func installedGeneration() async throws(PackClientError) -> GenerationBuilder.Previous? {
            try await BlockingWork.run("gifpack.manifest") { [generations] () throws(PackClientError) -> GenerationBuilder.Previous? in
                guard let generation = try generations.current() else { return nil }
                let directory = generations.generationPath(generation)
                return try InstallManifest.read(directory: directory).map { .init(directory: directory, manifest: $0) }
            }
        }

        /// The installed generation an upgrade can reuse GIFs from; nil when sparse upgrades do not
        /// apply (turned off, a local index) or nothing is installed.
        private func sparseBasis(for source: PackIndexSource) async throws(PackClientError) -> GenerationBuilder.Previous? {
            guard installer.sparseUpgrades.isEnabled, case .url = source.location else { return nil }
            return try await installedGeneration()
        }

        /// A report without any work when exactly these packs (and, with posters, the posters packs of
        /// `posters`, the packs asked for; without, none) are installed in this layout, for this
        /// ``preferredPixelSize``. The generation's manifest then takes the new
        /// index's record (`refreshing`: validators, expiry), so the next check is conditional on this
        /// index, and, with trusted keys, the floor raised to its `sequence` (a re-signed index with the
        /// same packs); `sequence` is nil without keys, which leaves the floor as it is.
        private func unchangedReport(
            for packs: [PackDescription], posters named: [PackDescription],
            refreshing record: InstalledIndex?, sequence: Int?
        ) async throws(PackClientError) -> InstallReport? {
            let wantedPosters =
                installer.withPosters ? named.compactMap(\.posters).map { [$0.name, $0.sha256] }.sorted { $0[0] < $1[0] } : []
            let formats = FormatChoice.recorded(installer.formats)
            return try await BlockingWork.run("gifpack.manifest") { [installer, generations] () throws(PackClientError) -> InstallReport? in
                guard let generation = try generations.current(),
                    var manifest = try InstallManifest.read(directory: generations.generationPath(generation)),
                    manifest.layout == installer.layout, manifest.preferredPixelSize == installer.preferredPixelSize,
                    manifest.formats == formats,
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
                return PackInstaller.unchangedReport(manifest, directory: directory, cacheDirectory: installer.cacheDirectory)
            }
        }

        /// Installs `new` (``installGeneration(_:)``, on a dedicated thread), then removes the
        /// downloads it came from.
        func installLocked(_ new: NewGeneration) async throws(PackClientError) -> InstallReport {
            let outcome = await BlockingWork.result("gifpack.install") { [self] () throws(PackClientError) -> InstallReport in
                try installGeneration(new)
            }
            switch outcome {
            case .success(let report):
                clock.enter(.switch)
                if !installer.keepDownloads {
                    await installer.removeCopies(new.packs)
                    await installer.removeCopies(new.posters)
                }
                return report
            case .failure(let error):
                if case .rejected = error {
                    await installer.removeCopies(new.packs)
                    await installer.removeCopies(new.posters)
                } else {
                    // A whole download is kept to be reused (checked again) by the next attempt; a sparse
                    // upgrade's file never is (each attempt makes it anew): it goes now.
                    await installer.removeCopies(new.packs.filter { $0.fetchedGIFs != nil })
                    await installer.removeCopies(new.posters.filter { $0.fetchedPosters != nil })
                }
                throw error
            }
        }

        /// Plans, stages and switches in a new generation. Runs on a dedicated thread; stops at the
        /// checkpoints of ``cancellation`` until the switch.
        private func installGeneration(_ new: NewGeneration) throws(PackClientError) -> InstallReport {
            try cancellation.checkpoint(.verify)
            // A local pack's SHA-256 is checked on a thread of its own while the pack is staged; a file
            // that is not the index's is what the install reports, whatever else went wrong with it.
            let checksums = ParallelWork.start(name: "gifpack.pack-checksum") {
                Result { () throws(PackClientError) in
                    for pack in new.packs where pack.checksumPending { try PackDownloader.verify(pack.path, pack: pack.pack) }
                }
            }
            let staged: Staged
            do {
                staged = try stageGeneration(new)
            } catch {
                try checksums.wait().get()
                throw error
            }
            let (plan, generation) = (staged.plan, staged.generation)
            // What is left of a local pack's SHA-256 (checked beside the staging) is a check: decode.
            clock.enter(.decode)
            do { try checksums.wait().get() } catch {
                FileOps.remove(generations.generationPath(generation))
                throw error
            }
            // The commit point: cancelled before the rename, nothing changed; after it, the install is done.
            clock.enter(.switch)
            do {
                try cancellation.checkpoint(.switch)
                try generations.switchTo(generation)
            } catch {
                FileOps.remove(generations.generationPath(generation))
                throw error
            }
            cancellation.passed(.switched)
            // Only now, with the new generation in place: older generations and leftovers of interrupted installs.
            generations.removeStale(keeping: Set([generation] + [staged.current].compactMap { $0 }))
            clock.enter(.none)

            let exercises = plan.exercises
            let counts = staged.counts
            let changes = IndexDiff.exerciseChanges(from: staged.previous?.manifest.exercises ?? [:], to: exercises)
            return InstallReport(
                cacheDirectory: installer.cacheDirectory, generationDirectory: generations.generationPath(generation),
                generation: generation, layout: installer.layout, packs: plan.packs, exercises: exercises.count,
                placeholders: exercises.values.filter { $0 == nil }.count, gifsWritten: counts.gifsWritten,
                gifsReused: counts.gifsReused, linksCreated: counts.linksCreated, bytesWritten: counts.bytesWritten,
                bytesDownloaded: new.packs.reduce(0) { $0 + $1.bytesTransferred }
                    + new.posters.reduce(0) { $0 + ($1.file?.bytesTransferred ?? 0) },
                added: changes.added, removed: changes.removed, changed: changes.changed,
                isUnchanged: false, posterPacks: staged.posterPlan?.packs ?? [], postersWritten: counts.postersWritten,
                postersReused: counts.postersReused, gifChecksSkipped: counts.checksSkipped)
        }

        /// A generation planned and staged, moved to its final name but not switched in.
        private struct Staged {
            let current: Int?
            let previous: GenerationBuilder.Previous?
            let plan: InstallPlan
            let posterPlan: PosterInstallPlan?
            let generation: Int
            let counts: GenerationBuilder.Counts
        }

        /// Checks the packs' structure (``InstallPlan``), stages the new generation (``GenerationBuilder``)
        /// and gives it its final name; on a failure nothing of it is left.
        private func stageGeneration(_ new: NewGeneration) throws(PackClientError) -> Staged {
            let current = try generations.current()
            let previous: GenerationBuilder.Previous? = try current.flatMap { generation throws(PackClientError) in
                let directory = generations.generationPath(generation)
                return try InstallManifest.read(directory: directory).map { .init(directory: directory, manifest: $0) }
            }
            let plan = try InstallPlan(packs: new.packs, limits: installer.limits, selection: new.selection)
            let posterPlan = installer.withPosters ? try PosterInstallPlan(sources: new.posters, previous: previous) : nil
            let generation = CacheGenerations.next(after: try generations.numbersInUse() + [current].compactMap { $0 })
            let staging = "\(generations.storePath)/\(CacheGenerations.stagingName(generation))"
            var builder = GenerationBuilder(staging: staging, layout: installer.layout, previous: previous)
            builder.verifiedSequence = new.indexSequence
            builder.preferredPixelSize = installer.preferredPixelSize
            builder.formats = FormatChoice.recorded(installer.formats)
            builder.indexRecord = new.indexRecord
            builder.cancellation = cancellation
            builder.progress = installer.progress
            builder.phaseClock = clock
            if !installer.keepDownloads {
                // Deleted before the sync, not after the switch: the sync would write them first.
                builder.discardBeforeSync = new.packs.filter(\.isCopy).map(\.path) + new.posters.compactMap(\.file).filter(\.isCopy).map(\.path)
            }
            installer.progress?.installing()
            do {
                try builder.build(plan, posters: posterPlan, generation: generation)
                clock.enter(.switch)
                try FileOps.move(staging, to: generations.generationPath(generation))
            } catch {
                FileOps.remove(staging)
                throw error
            }
            return Staged(
                current: current, previous: previous, plan: plan, posterPlan: posterPlan, generation: generation,
                counts: builder.counts)
        }
    }

    /// What a new generation is made of: the verified packs and posters packs, and what the accepted
    /// index gives it (none for ``PackInstaller/install(_:)``): the sequence that raises the rollback
    /// floor, the record the next index request is conditional on, the exercises' renditions.
    struct NewGeneration: Sendable {
        var packs: [DownloadedPack]
        var posters: [PosterSource] = []
        var indexSequence: Int?
        var indexRecord: InstalledIndex?
        var selection: RenditionSelection?
    }
}

/// Sparse upgrades: how ``PackInstaller/install(from:packs:client:)`` gets each pack and, with
/// posters, each posters pack.
///
/// With a remote index, ``PackInstaller/sparseUpgrades`` enabled and a previous generation
/// installed, a pack is planned with ``SparseUpgradePlanner`` against the GIFs the previous
/// generation holds intact (size and SHA-256 checked), and the plan's ranges are fetched by
/// ``RangeFetcher`` into `<cache>.d/downloads/<name>-v<N>-<hash>.sparse`. A posters pack goes the
/// same way against the posters the previous generation holds intact: its catalog frame and the
/// missing posters' frames. The whole file is downloaded instead (``PackDownloader``) when there
/// is no previous generation, when the plan would cost more than the file, when the server answers
/// a range request with `200`, or (posters) when a poster the cache holds is not the one the new
/// posters catalog gives.
extension PackInstaller {
    /// The transfers of one install: the index's source, the client and downloader of every pack,
    /// the call's cancellation, where a whole download's GIFs go as a ``PackFollower`` decodes
    /// them (a folder per pack), and the installed generation a pack's plan reuses GIFs from
    /// (``PackInstaller/Run/sparseBasis(for:)``; nil: whole downloads).
    struct Fetching: Sendable {
        let installer: PackInstaller
        let source: PackIndexSource
        let client: (any HTTPTransport)?
        let downloader: PackDownloader
        let cancellation: InstallCancellation
        let unpacked: String
        let previous: GenerationBuilder.Previous?

        /// Fetches the chosen packs, each GIF at most once: the packs go largest first (most GIFs), and
        /// a later pack is planned against the GIFs the earlier ones fetched as well as those the
        /// previous generation holds, so a GIF in several packs comes with the first (by range when
        /// that pays, see ``pack(_:alsoFetched:unneeded:following:)``). Answers in the order of
        /// `chosen`; on a failure, removes what it downloaded. `selection`: with renditions, the GIFs of
        /// a pack no chosen exercise takes from it are left out of its plan like GIFs the cache holds.
        func packs(_ chosen: [PackDescription], selection: RenditionSelection) async throws(PackClientError) -> ([DownloadedPack], [PackFetchSummary]) {
            let order = chosen.indices.sorted { (chosen[$0].gifs.count, -$0) > (chosen[$1].gifs.count, -$1) }
            var fetched: [Int: (DownloadedPack, PackFetchSummary)] = [:]
            var planned = Set<String>()
            for position in order {
                let pack = chosen[position]
                do {
                    try cancellation.checkpoint(.transfer)
                    let item = try await self.pack(
                        pack, alsoFetched: planned, unneeded: selection.unneededGIFs(of: pack), following: "\(unpacked)/\(position)")
                    fetched[position] = item
                    planned.formUnion(item.0.fetchedGIFs ?? Set(pack.gifs.map(\.sha256)))
                } catch {
                    await installer.removeCopies(fetched.values.map(\.0))
                    throw error
                }
            }
            let inOrder = chosen.indices.compactMap { fetched[$0] }
            return (inOrder.map(\.0), inOrder.map(\.1))
        }

        /// Fetches `pack` sparsely when it pays, else whole; says which way it went. `alsoFetched`: GIFs
        /// another pack of the same install brings (the installed generation takes them from there);
        /// `unneeded`: GIFs no exercise takes from this pack (another rendition is chosen for them).
        /// A whole download's GIFs are decoded as they arrive, into `directory` (``PackFollower``).
        private func pack(
            _ pack: PackDescription, alsoFetched: Set<String>, unneeded: Set<String>, following directory: String
        ) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
            func whole(_ reason: String?, alreadySpent: Int64 = 0) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
                // The follower's hand-over hook: the tests' and the loader's, when either is set.
                let (followHook, gifReadyHook) = (installer.followHook, installer.gifReadyHook)
                var readyHook: (@Sendable (String, Int64, String) -> Void)?
                if followHook != nil || gifReadyHook != nil {
                    readyHook = { (sha256: String, written: Int64, path: String) in
                        followHook?(sha256, written)
                        gifReadyHook?(sha256, path)
                    }
                }
                let follower = PackFollower(
                    pack: pack, final: downloader.downloadPath(for: pack), directory: directory,
                    cancellation: cancellation, onReady: readyHook)
                // The follower's thread is joined whatever happens, so nothing writes under `unpacked` after the call.
                let fetched: Result<DownloadedPack, PackClientError>
                do { fetched = .success(try await downloader.fetch(pack, from: source, deferringLocalChecksum: true, follower: follower)) } catch {
                    fetched = .failure(error)
                }
                let followed = await BlockingWork.run("gifpack.follow") { () -> PackFollower.Followed in follower.results() }
                var item = try fetched.get()
                item.ready = followed.ready
                item.checkedCatalog = followed.catalog
                let summary = PackFetchSummary(
                    pack: pack.name, version: pack.version, method: item.isCopy ? .wholePack : .local,
                    bytesFetched: item.bytesTransferred + alreadySpent, wholePackBytes: pack.bytes,
                    fallbackReason: reason)
                return (item, summary)
            }
            guard installer.sparseUpgrades.isEnabled, let client, case .url(let url) = try source.packLocation(for: pack) else {
                return try await whole(nil)
            }
            let shared = Set(pack.gifs.map(\.sha256)).intersection(alsoFetched).union(unneeded)
            guard previous != nil || !shared.isEmpty else { return try await whole("no previous generation to upgrade from") }
            if let problem = PackDescriptionCheck.problems(in: pack, limits: installer.limits).first { throw .rejected(problem) }

            let available = try await BlockingWork.run("gifpack.sparse-plan") { () throws(PackClientError) -> Set<String> in
                let files = previous?.filesByHash ?? [:]
                var available = shared
                for gif in pack.gifs where !available.contains(gif.sha256) {
                    guard let file = files[gif.sha256],
                        GenerationBuilder.holds(file, sha256: gif.sha256, size: gif.location.size)
                    else { continue }
                    available.insert(gif.sha256)
                }
                return available
            }
            let plan = SparseUpgradePlanner.plan(pack: pack, available: available, settings: installer.sparseUpgrades)
            guard plan.isCheaperThanWholePack else { return try await whole(Self.costlier(plan, frames: "GIFs")) }

            let (path, outcome) = try await ranges(plan, of: .pack(pack), version: pack.version, sha256: pack.sha256, url: url, client: client)
            switch outcome {
            case .rangeIgnored(let stats):
                return try await whole(Self.rangesIgnored, alreadySpent: stats.bytes)
            case .fetched(let stats):
                let item = DownloadedPack(
                    pack: pack, path: path, isCopy: true, bytesTransferred: stats.bytes, resumedFrom: nil,
                    fetchedGIFs: Set(plan.fetchedGIFs))
                let summary = PackFetchSummary(
                    pack: pack.name, version: pack.version, method: .sparse, bytesFetched: stats.bytes,
                    wholePackBytes: pack.bytes, requests: stats.requests,
                    framesFetched: plan.fetchedGIFs.count)
                return (item, summary)
            }
        }

        /// Fetches the chosen packs' posters packs (``posters(_:installed:alsoFetched:)``), each poster
        /// at most once: the posters packs go largest first (most posters), and a later one
        /// is planned against the posters the earlier ones bring as well as those the installed
        /// generation holds, so a poster listed by several packs comes with the first — the later
        /// pack then fetches its catalog's frame and, by range, only the posters nobody brings, when
        /// that costs less than its whole file. A shared poster counts only when the later catalog
        /// gives it the SHA-256 the earlier one does (the install then reads it from the earlier file,
        /// checked against that SHA-256). Answers in the order of `chosen`; on a failure, removes what
        /// it downloaded.
        func posterPacks(
            _ chosen: [PosterPackDescription], installed: GenerationBuilder.Previous?
        ) async throws(PackClientError) -> ([PosterSource], [PackFetchSummary]) {
            let order = chosen.indices.sorted { (chosen[$0].posters.count, -$0) > (chosen[$1].posters.count, -$1) }
            var fetched: [Int: (PosterSource, PackFetchSummary)] = [:]
            var brought: [String: String] = [:]
            for position in order {
                do {
                    try cancellation.checkpoint(.transfer)
                    let item = try await posters(chosen[position], installed: installed, alsoFetched: brought)
                    fetched[position] = item
                    let more = await Self.postersBrought(by: item.0)
                    brought.merge(more) { earlier, _ in earlier }
                } catch {
                    await installer.removeCopies(fetched.values.map(\.0))
                    throw error
                }
            }
            let inOrder = chosen.indices.compactMap { fetched[$0] }
            return (inOrder.map(\.0), inOrder.map(\.1))
        }

        /// Poster path → the SHA-256 its catalog gives, for the posters whose frames `source`'s file
        /// holds (all of a whole file, the fetched ones of a sparse file; none without a file). A
        /// catalog that cannot be read brings nothing: the later packs fetch those posters themselves,
        /// and the install's checks refuse this file.
        private static func postersBrought(by source: PosterSource) async -> [String: String] {
            guard let file = source.file else { return [:] }
            let posters = source.posters
            let fetchedPosters = source.fetchedPosters
            let read = await BlockingWork.result("gifpack.posters") { () throws(PackClientError) -> [String: String] in
                let catalog = try PosterPackReader(path: file.path, posters: posters).catalog()
                var brought: [String: String] = [:]
                for poster in catalog.posters where fetchedPosters?.contains(poster.path) ?? true {
                    brought[poster.path] = poster.sha256
                }
                return brought
            }
            guard case .success(let brought) = read else { return [:] }
            return brought
        }

        /// A posters pack: nothing fetched when the installed generation holds every poster of this
        /// very file intact; else, as for a pack, the catalog's frame and the missing posters' frames
        /// when that pays, or the whole (verified) file. `alsoFetched`: poster path → SHA-256, the
        /// posters another posters pack of the same install brings (``posterPacks(_:installed:)``);
        /// they count as held when this pack's catalog gives them that same SHA-256.
        private func posters(
            _ posters: PosterPackDescription, installed: GenerationBuilder.Previous?, alsoFetched: [String: String]
        ) async throws(PackClientError) -> (PosterSource, PackFetchSummary) {
            let kept = await BlockingWork.result("gifpack.posters") { () throws(PackClientError) -> Bool in
                installed?.holdsEveryPoster(of: posters) ?? false
            }
            if case .success(true) = kept {
                return (
                    PosterSource(posters: posters, file: nil),
                    PackFetchSummary(
                        pack: posters.name, version: posters.version, method: .installed, bytesFetched: 0,
                        wholePackBytes: posters.bytes)
                )
            }
            func whole(_ reason: String?, alreadySpent: Int64 = 0) async throws(PackClientError) -> (PosterSource, PackFetchSummary) {
                let file = try await downloader.fetch(posters, from: source)
                return (
                    PosterSource(posters: posters, file: file),
                    PackFetchSummary(
                        pack: posters.name, version: posters.version, method: file.isCopy ? .wholePack : .local,
                        bytesFetched: file.bytesTransferred + alreadySpent, wholePackBytes: posters.bytes,
                        fallbackReason: reason)
                )
            }
            guard installer.sparseUpgrades.isEnabled, let client, case .url(let url) = try source.packLocation(for: posters) else {
                return try await whole(nil)
            }
            let shared = Set(posters.posters.map(\.path).filter { alsoFetched[$0] != nil })
            guard installed != nil || !shared.isEmpty else { return try await whole("no previous generation to upgrade from") }

            let held = try await BlockingWork.run("gifpack.sparse-plan") { () throws(PackClientError) -> Set<String> in
                installed?.heldPosters(of: posters).subtracting(shared) ?? []
            }
            let available = held.union(shared)
            let plan = SparseUpgradePlanner.plan(posters: posters, available: available, settings: installer.sparseUpgrades)
            guard plan.isCheaperThanWholePack else { return try await whole(Self.costlier(plan, frames: "posters")) }

            let (path, outcome) = try await ranges(
                plan, of: .posters(posters), version: posters.version, sha256: posters.sha256, url: url, client: client)
            switch outcome {
            case .rangeIgnored(let stats):
                return try await whole(Self.rangesIgnored, alreadySpent: stats.bytes)
            case .fetched(let stats):
                // The posters the plan reuses were matched by the SHA-256 recorded at their install, or
                // given by another posters pack's catalog; the new catalog (checked against the index by
                // the fetch) must give them that same one.
                let differing = try await BlockingWork.run("gifpack.posters") { () throws(PackClientError) -> [String] in
                    do throws(PackClientError) {
                        let catalog = try PosterPackReader(path: path, posters: posters).catalog()
                        let paths =
                            (installed?.postersDiffering(from: catalog, among: held) ?? [])
                            + catalog.posters.filter { shared.contains($0.path) && alsoFetched[$0.path] != $0.sha256 }.map(\.path).sorted()
                        if !paths.isEmpty { FileOps.remove(path) }
                        return paths
                    } catch {
                        FileOps.remove(path)
                        throw error
                    }
                }
                if let example = differing.first {
                    return try await whole(
                        "\(differing.count) posters the cache holds or another chosen posters pack brings differ "
                            + "from the new posters pack's (e.g. \(SafePath.printable(example)))", alreadySpent: stats.bytes)
                }
                let file = PackDownloader.FetchedFile(path: path, isCopy: true, bytesTransferred: stats.bytes, resumedFrom: nil)
                return (
                    PosterSource(posters: posters, file: file, fetchedPosters: Set(plan.fetchedPaths)),
                    PackFetchSummary(
                        pack: posters.name, version: posters.version, method: .sparse, bytesFetched: stats.bytes,
                        wholePackBytes: posters.bytes, requests: stats.requests,
                        framesFetched: plan.fetchedPaths.count)
                )
            }
        }


        /// Fetches the plan's ranges of `target` into `<downloads>/<name>-v<N>-<hash>.sparse`.
        private func ranges(
            _ plan: SparseUpgradePlan, of target: RangeFetcher.Target, version: Int, sha256: String,
            url: String, client: any HTTPTransport
        ) async throws(PackClientError) -> (path: String, outcome: RangeFetcher.Outcome) {
            let directory = downloader.directory
            try await BlockingWork.run("gifpack.downloads") { () throws(PackClientError) in
                try FileOps.makeDirectories(directory)
            }
            let path = "\(directory)/\(target.name)-v\(version)-\(sha256.prefix(16)).sparse"
            let transfer = installer.progress?.transfer(expecting: plan.bytes)
            defer { transfer?.end() }
            let fetcher = RangeFetcher(
                client: client, url: url, target: target, path: path, attempts: installer.downloadAttempts,
                settings: installer.sparseUpgrades, timeouts: downloader.timeouts, progress: transfer)
            return (path, try await fetcher.fetch(plan))
        }

        private static let rangesIgnored = "the server ignores Range requests (it answered 200)"

        private static func costlier(_ plan: SparseUpgradePlan, frames: String) -> String {
            "fetching \(plan.fetchedPaths.count) \(frames) in \(plan.ranges.count) ranges "
                + "(\(plan.estimatedCost) bytes with request overhead) costs more than the whole pack"
        }
    }
}

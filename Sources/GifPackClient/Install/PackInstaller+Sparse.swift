import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

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
    /// Where a whole download's GIFs go as a ``PackFollower`` decodes them, and the install's cancellation.
    struct Following: Sendable {
        let directory: String
        let cancellation: InstallCancellation
    }

    /// The installed generation an upgrade can reuse GIFs from; nil when sparse upgrades do not
    /// apply (turned off, a local index) or nothing is installed.
    func sparseBasis(for source: PackIndexSource,
                     generations: CacheGenerations) async throws(PackClientError) -> GenerationBuilder.Previous? {
        guard sparseUpgrades.isEnabled, case .url = source.location else { return nil }
        return try await BlockingWork.run("gifpack.sparse-basis") { () throws(PackClientError) -> GenerationBuilder.Previous? in
            guard let generation = try generations.current() else { return nil }
            let directory = generations.generationPath(generation)
            return try InstallManifest.read(directory: directory).map { .init(directory: directory, manifest: $0) }
        }
    }

    /// Fetches the chosen packs, each GIF at most once: the packs go largest first (most GIFs), and
    /// a later pack is planned against the GIFs the earlier ones fetched as well as those the
    /// previous generation holds, so a GIF in several packs comes with the first (by range when
    /// that pays, see ``fetchPack(_:from:downloader:client:previous:alsoFetched:follow:)``). Answers in
    /// the order of `chosen`; on a failure, removes what it downloaded.
    /// `unpacked`: where the GIFs of whole downloads go as they are decoded during the download
    /// (``PackFollower``), one folder per pack; nil: decoded after. `selection`: with renditions, the
    /// GIFs of a pack no chosen exercise takes from it are left out of its plan like GIFs the cache holds.
    func fetchPacks(_ chosen: [PackDescription], from source: PackIndexSource, downloader: PackDownloader,
                    client: (any HTTPTransport)?, previous: GenerationBuilder.Previous?,
                    cancellation: InstallCancellation, unpacked: String? = nil,
                    selection: RenditionSelection? = nil) async throws(PackClientError) -> ([DownloadedPack], [PackFetchSummary]) {
        let order = chosen.indices.sorted { (chosen[$0].gifs.count, -$0) > (chosen[$1].gifs.count, -$1) }
        var fetched: [Int: (DownloadedPack, PackFetchSummary)] = [:]
        var planned = Set<String>()
        for position in order {
            let pack = chosen[position]
            do {
                try cancellation.checkpoint(.transfer)
                let follow = unpacked.map { Following(directory: "\($0)/\(position)", cancellation: cancellation) }
                let item = try await fetchPack(pack, from: source, downloader: downloader, client: client, previous: previous,
                                               alsoFetched: planned, unneeded: selection?.unneededGIFs(of: pack) ?? [], follow: follow)
                fetched[position] = item
                planned.formUnion(item.0.fetchedGIFs ?? Set(pack.gifs.map(\.sha256)))
            } catch {
                await removeCopies(fetched.values.map(\.0))
                throw error
            }
        }
        let inOrder = chosen.indices.compactMap { fetched[$0] }
        return (inOrder.map(\.0), inOrder.map(\.1))
    }

    /// The follower's hand-over hook: the tests' and the loader's, when either is set.
    static func readyHook(_ follow: (@Sendable (String, Int64) -> Void)?,
                          _ ready: (@Sendable (String, String) -> Void)?) -> (@Sendable (String, Int64, String) -> Void)? {
        if follow == nil, ready == nil { return nil }
        return { (sha256: String, written: Int64, path: String) in
            follow?(sha256, written)
            ready?(sha256, path)
        }
    }

    /// Fetches `pack` sparsely when it pays, else whole; says which way it went. `alsoFetched`: GIFs
    /// another pack of the same install brings (the installed generation takes them from there);
    /// `unneeded`: GIFs no exercise takes from this pack (another rendition is chosen for them).
    func fetchPack(_ pack: PackDescription, from source: PackIndexSource, downloader: PackDownloader,
                   client: (any HTTPTransport)?, previous: GenerationBuilder.Previous?,
                   alsoFetched: Set<String> = [], unneeded: Set<String> = [], follow: Following? = nil) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
        func whole(_ reason: String?, alreadySpent: Int64 = 0) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
            let readyHook = Self.readyHook(followHook, gifReadyHook)
            let follower = follow.map {
                PackFollower(pack: pack, final: downloader.downloadPath(for: pack), directory: $0.directory,
                             cancellation: $0.cancellation, onReady: readyHook)
            }
            // The follower's thread is joined whatever happens, so nothing writes under `unpacked` after the call.
            let fetched: Result<DownloadedPack, PackClientError>
            do { fetched = .success(try await downloader.fetch(pack, from: source, deferringLocalChecksum: true, follower: follower)) } catch {
                fetched = .failure(error)
            }
            let ready = await BlockingWork.run("gifpack.follow") { () -> [String: PackFollower.Ready] in follower?.results() ?? [:] }
            var item = try fetched.get()
            item.ready = ready
            let summary = PackFetchSummary(pack: pack.name, version: pack.version, method: item.isCopy ? .wholePack : .local,
                                           bytesFetched: item.bytesTransferred + alreadySpent, wholePackBytes: pack.bytes,
                                           fallbackReason: reason)
            return (item, summary)
        }
        guard sparseUpgrades.isEnabled, let client, case .url(let url) = try source.packLocation(for: pack) else {
            return try await whole(nil)
        }
        let shared = Set(pack.gifs.map(\.sha256)).intersection(alsoFetched).union(unneeded)
        guard previous != nil || !shared.isEmpty else { return try await whole("no previous generation to upgrade from") }
        if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }

        let available = try await BlockingWork.run("gifpack.sparse-plan") { () throws(PackClientError) -> Set<String> in
            let files = previous?.filesByHash ?? [:]
            var available = shared
            for gif in pack.gifs where !available.contains(gif.sha256) {
                guard let file = files[gif.sha256],
                      GenerationBuilder.holds(file, sha256: gif.sha256, size: gif.location.size) else { continue }
                available.insert(gif.sha256)
            }
            return available
        }
        let plan = SparseUpgradePlanner.plan(pack: pack, available: available, settings: sparseUpgrades)
        guard plan.isCheaperThanWholePack else { return try await whole(Self.costlier(plan, frames: "GIFs")) }

        let (path, outcome) = try await fetchRanges(plan, of: .pack(pack), version: pack.version, sha256: pack.sha256,
                                                    url: url, client: client, downloader: downloader)
        switch outcome {
        case .rangeIgnored(let stats):
            return try await whole(Self.rangesIgnored, alreadySpent: stats.bytes)
        case .fetched(let stats):
            let item = DownloadedPack(pack: pack, path: path, isCopy: true, bytesTransferred: stats.bytes, resumedFrom: nil,
                                      fetchedGIFs: Set(plan.fetchedGIFs))
            let summary = PackFetchSummary(pack: pack.name, version: pack.version, method: .sparse, bytesFetched: stats.bytes,
                                           wholePackBytes: pack.bytes, requests: stats.requests,
                                           framesFetched: plan.fetchedGIFs.count)
            return (item, summary)
        }
    }

    /// A posters pack: nothing fetched when the installed generation holds every poster of this
    /// very file intact; else, as for a pack, the catalog's frame and the missing posters' frames
    /// when that pays, or the whole (verified) file. `alsoFetched`: poster path → SHA-256, the
    /// posters another posters pack of the same install brings (``fetchPosterPacks(_:from:downloader:client:installed:cancellation:)``);
    /// they count as held when this pack's catalog gives them that same SHA-256.
    func fetchPosters(_ posters: PosterPackDescription, from source: PackIndexSource, downloader: PackDownloader,
                      client: (any HTTPTransport)?, installed: GenerationBuilder.Previous?,
                      alsoFetched: [String: String] = [:]) async throws(PackClientError) -> (PosterSource, PackFetchSummary) {
        let kept = await BlockingWork.result("gifpack.posters") { () throws(PackClientError) -> Bool in
            installed?.holdsEveryPoster(of: posters) ?? false
        }
        if case .success(true) = kept {
            return (PosterSource(posters: posters, file: nil),
                    PackFetchSummary(pack: posters.name, version: posters.version, method: .installed, bytesFetched: 0,
                                     wholePackBytes: posters.bytes))
        }
        func whole(_ reason: String?, alreadySpent: Int64 = 0) async throws(PackClientError) -> (PosterSource, PackFetchSummary) {
            let file = try await downloader.fetch(posters, from: source)
            return (PosterSource(posters: posters, file: file),
                    PackFetchSummary(pack: posters.name, version: posters.version, method: file.isCopy ? .wholePack : .local,
                                     bytesFetched: file.bytesTransferred + alreadySpent, wholePackBytes: posters.bytes,
                                     fallbackReason: reason))
        }
        guard sparseUpgrades.isEnabled, let client, case .url(let url) = try source.packLocation(for: posters) else {
            return try await whole(nil)
        }
        let shared = Set(posters.posters.map(\.path).filter { alsoFetched[$0] != nil })
        guard installed != nil || !shared.isEmpty else { return try await whole("no previous generation to upgrade from") }

        let held = try await BlockingWork.run("gifpack.sparse-plan") { () throws(PackClientError) -> Set<String> in
            installed?.heldPosters(of: posters).subtracting(shared) ?? []
        }
        let available = held.union(shared)
        let plan = SparseUpgradePlanner.plan(posters: posters, available: available, settings: sparseUpgrades)
        guard plan.isCheaperThanWholePack else { return try await whole(Self.costlier(plan, frames: "posters")) }

        let (path, outcome) = try await fetchRanges(plan, of: .posters(posters), version: posters.version, sha256: posters.sha256,
                                                    url: url, client: client, downloader: downloader)
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
                    let paths = (installed?.postersDiffering(from: catalog, among: held) ?? [])
                        + catalog.posters.filter { shared.contains($0.path) && alsoFetched[$0.path] != $0.sha256 }.map(\.path).sorted()
                    if !paths.isEmpty { FileOps.remove(path) }
                    return paths
                } catch {
                    FileOps.remove(path)
                    throw error
                }
            }
            if let example = differing.first {
                return try await whole("\(differing.count) posters the cache holds or another chosen posters pack brings differ "
                    + "from the new posters pack's (e.g. \(SafePath.printable(example)))", alreadySpent: stats.bytes)
            }
            let file = PackDownloader.FetchedFile(path: path, isCopy: true, bytesTransferred: stats.bytes, resumedFrom: nil)
            return (PosterSource(posters: posters, file: file, fetchedPosters: Set(plan.fetchedPaths)),
                    PackFetchSummary(pack: posters.name, version: posters.version, method: .sparse, bytesFetched: stats.bytes,
                                     wholePackBytes: posters.bytes, requests: stats.requests,
                                     framesFetched: plan.fetchedPaths.count))
        }
    }

    /// Fetches the plan's ranges of `target` into `<downloads>/<name>-v<N>-<hash>.sparse`.
    private func fetchRanges(_ plan: SparseUpgradePlan, of target: RangeFetcher.Target, version: Int, sha256: String,
                             url: String, client: any HTTPTransport,
                             downloader: PackDownloader) async throws(PackClientError) -> (path: String, outcome: RangeFetcher.Outcome) {
        let directory = downloader.directory
        try await BlockingWork.run("gifpack.downloads") { () throws(PackClientError) in
            try FileOps.makeDirectories(directory)
        }
        let path = "\(directory)/\(target.name)-v\(version)-\(sha256.prefix(16)).sparse"
        let transfer = progress?.transfer(expecting: plan.bytes)
        defer { transfer?.end() }
        let fetcher = RangeFetcher(client: client, url: url, target: target, path: path, attempts: downloadAttempts,
                                   settings: sparseUpgrades, timeouts: downloader.timeouts, progress: transfer)
        return (path, try await fetcher.fetch(plan))
    }

    private static let rangesIgnored = "the server ignores Range requests (it answered 200)"

    private static func costlier(_ plan: SparseUpgradePlan, frames: String) -> String {
        "fetching \(plan.fetchedPaths.count) \(frames) in \(plan.ranges.count) ranges "
            + "(\(plan.estimatedCost) bytes with request overhead) costs more than the whole pack"
    }
}

import GifPackFormat
import GifPackTransport

/// Sparse upgrades: how ``PackInstaller/install(from:packs:client:)`` gets each pack.
///
/// With a remote index, ``PackInstaller/sparseUpgrades`` enabled and a previous generation
/// installed, a pack is planned with ``SparseUpgradePlanner`` against the GIFs the previous
/// generation holds intact (size and SHA-256 checked), and the plan's ranges are fetched by
/// ``RangeFetcher`` into `<cache>.d/downloads/<name>-v<N>-<hash>.sparse`. The whole pack is
/// downloaded instead (``PackDownloader``) when there is no previous generation, when the plan
/// would cost more than the pack, or when the server answers a range request with `200`.
extension PackInstaller {
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

    /// Fetches `pack` sparsely when it pays, else whole; says which way it went.
    func fetchPack(_ pack: PackDescription, from source: PackIndexSource, downloader: PackDownloader,
                   client: (any HTTPTransport)?, previous: GenerationBuilder.Previous?) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
        func whole(_ reason: String?, alreadySpent: Int64 = 0) async throws(PackClientError) -> (DownloadedPack, PackFetchSummary) {
            let item = try await downloader.fetch(pack, from: source)
            let summary = PackFetchSummary(pack: pack.name, version: pack.version, method: item.isCopy ? .wholePack : .local,
                                           bytesFetched: item.bytesTransferred + alreadySpent, wholePackBytes: pack.bytes,
                                           fallbackReason: reason)
            return (item, summary)
        }
        guard sparseUpgrades.isEnabled, let client, case .url(let url) = try source.packLocation(for: pack) else {
            return try await whole(nil)
        }
        guard let previous else { return try await whole("no previous generation to upgrade from") }
        if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }

        let available = try await BlockingWork.run("gifpack.sparse-plan") { () throws(PackClientError) -> Set<String> in
            let files = previous.filesByHash
            var available = Set<String>()
            for gif in pack.gifs {
                guard let file = files[gif.sha256],
                      GenerationBuilder.holds(file, sha256: gif.sha256, size: gif.location.size) else { continue }
                available.insert(gif.sha256)
            }
            return available
        }
        let plan = SparseUpgradePlanner.plan(pack: pack, available: available, settings: sparseUpgrades)
        guard plan.isCheaperThanWholePack else {
            return try await whole("fetching \(plan.fetchedGIFs.count) GIFs in \(plan.ranges.count) ranges "
                + "(\(plan.estimatedCost) bytes with request overhead) costs more than the whole pack")
        }

        let directory = downloader.directory
        try await BlockingWork.run("gifpack.downloads") { () throws(PackClientError) in
            try FileOps.makeDirectories(directory)
        }
        let path = "\(directory)/\(pack.name)-v\(pack.version)-\(pack.sha256.prefix(16)).sparse"
        let fetcher = RangeFetcher(client: client, url: url, pack: pack, path: path, attempts: downloadAttempts,
                                   settings: sparseUpgrades, timeouts: downloader.timeouts)
        switch try await fetcher.fetch(plan) {
        case .rangeIgnored(let stats):
            return try await whole("the server ignores Range requests (it answered 200)", alreadySpent: stats.bytes)
        case .fetched(let stats):
            let item = DownloadedPack(pack: pack, path: path, isCopy: true, bytesTransferred: stats.bytes, resumedFrom: nil,
                                      fetchedGIFs: Set(plan.fetchedGIFs))
            let summary = PackFetchSummary(pack: pack.name, version: pack.version, method: .sparse, bytesFetched: stats.bytes,
                                           wholePackBytes: pack.bytes, requests: stats.requests,
                                           framesFetched: plan.fetchedGIFs.count)
            return (item, summary)
        }
    }
}

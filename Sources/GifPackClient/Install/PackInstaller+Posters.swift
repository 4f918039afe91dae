import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// Posters across the chosen packs: each poster fetched at most once per install, by the rule
/// ``PackInstaller/fetchPacks(_:from:downloader:client:previous:cancellation:)`` follows for GIFs.
extension PackInstaller {
    /// Fetches the chosen packs' posters packs (``fetchPosters(_:from:downloader:client:installed:alsoFetched:)``),
    /// each poster at most once: the posters packs go largest first (most posters), and a later one
    /// is planned against the posters the earlier ones bring as well as those the installed
    /// generation holds, so a poster listed by several packs comes with the first — the later
    /// pack then fetches its catalog's frame and, by range, only the posters nobody brings, when
    /// that costs less than its whole file. A shared poster counts only when the later catalog
    /// gives it the SHA-256 the earlier one does (the install then reads it from the earlier file,
    /// checked against that SHA-256). Answers in the order of `chosen`; on a failure, removes what
    /// it downloaded.
    func fetchPosterPacks(_ chosen: [PosterPackDescription], from source: PackIndexSource, downloader: PackDownloader,
                          client: (any HTTPTransport)?, installed: GenerationBuilder.Previous?,
                          cancellation: InstallCancellation) async throws(PackClientError) -> ([PosterSource], [PackFetchSummary]) {
        let order = chosen.indices.sorted { (chosen[$0].posters.count, -$0) > (chosen[$1].posters.count, -$1) }
        var fetched: [Int: (PosterSource, PackFetchSummary)] = [:]
        var brought: [String: String] = [:]
        for position in order {
            do {
                try cancellation.checkpoint(.transfer)
                let item = try await fetchPosters(chosen[position], from: source, downloader: downloader, client: client,
                                                  installed: installed, alsoFetched: brought)
                fetched[position] = item
                let more = await Self.postersBrought(by: item.0)
                brought.merge(more) { earlier, _ in earlier }
            } catch {
                await removeCopies(fetched.values.map(\.0))
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
}

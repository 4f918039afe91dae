import Foundation
import GifPackHTTP

/// What a build would do, without sending a single image request: the catalog is fetched (those
/// requests are counted), then each wanted GIF is classified from the build state.
///
/// Nothing is written: the state is read from a private copy, with the checks a build makes. A damaged
/// state (see ``StateRecovery``) is not moved aside; the plan says so (``Plan/stateRecovery``) and
/// is made from what a build would rebuild — the same recovery, worked out in memory from the
/// output directory's `index.json` and the cached blobs.
///
/// ```swift
/// let plan = try await DryRun(manifest: manifest, options: options).plan()
/// print(plan.fullRequests, plan.conditionalRequests)
/// ```
package struct DryRun: Sendable {
    package let manifest: Manifest
    package let options: BuildOptions

    package init(manifest: Manifest, options: BuildOptions) {
        self.manifest = manifest
        self.options = options
    }

    /// The requests a build would make, by kind.
    package struct Plan: Sendable, Codable, Equatable {
        package var catalogRequests = 0
        package var exercises = 0
        package var wanted = 0
        package var packs: [String: Int] = [:]
        /// Requests for GIFs the cache does not have.
        package var fullRequests = 0
        /// Requests with If-None-Match / If-Modified-Since (304 when unchanged).
        package var conditionalRequests = 0
        /// Not requested: fetched more recently than refresh_after.
        package var skippedFresh = 0
        /// Not requested: a 404 remembered within missing_ttl.
        package var skippedKnownMissing = 0
        /// The request budget (max_requests), if any.
        package var requestBudget: Int?
        /// Set when the state database is damaged: where a build would move it (nothing was moved)
        /// and what it would rebuild from the index and the blobs.
        package var stateRecovery: StateRecovery?
        /// With several resolutions: each one's requests, in the order the build sends them (the
        /// counts above are their sums).
        package var renditions: [Requests]?
        /// Image requests, at most, this build would send: one per GIF plus retries.
        package var imageRequests: Int { fullRequests + conditionalRequests }
    }

    /// One resolution's share of a ``Plan``.
    package struct Requests: Sendable, Codable, Equatable {
        package var resolution: Int
        package var wanted = 0
        package var fullRequests = 0
        package var conditionalRequests = 0
        package var skippedFresh = 0
        package var skippedKnownMissing = 0
    }

    package func plan() async throws -> Plan {
        let layout = CacheLayout(root: options.cacheDirectory)
        let client = try HTTPClient(caFile: manifest.fetch.caFile)
        defer { client.shutdown() }
        let catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client).fetchCatalog()
        let packPlan = try PackPlan(specs: manifest.packs, catalog: catalog)
        var plan = Plan()
        plan.catalogRequests = client.statistics.requestsStarted
        plan.exercises = catalog.exercises.count
        plan.packs = Dictionary(uniqueKeysWithValues: packPlan.entries.map { ($0.spec.name, $0.exercises.count) })
        plan.requestBudget = manifest.fetch.maxRequests
        plan.wanted = packPlan.wanted.count
        let renditions = try RenditionPlan.all(for: manifest.source, plan: packPlan, catalog: catalog)
        let (decisions, recovery) = try await decide(renditions, catalog: catalog.exercises, layout: layout)
        plan.stateRecovery = recovery
        var requests: [Requests] = []
        for (rendition, decisions) in zip(renditions, decisions) {
            var counts = Requests(resolution: rendition.resolution.pixels ?? 0, wanted: rendition.plan.wanted.count)
            for decision in decisions {
                switch decision {
                case .reuseFresh: counts.skippedFresh += 1
                case .knownMissing: counts.skippedKnownMissing += 1
                case .request(let conditional):
                    if conditional == nil { counts.fullRequests += 1 } else { counts.conditionalRequests += 1 }
                }
            }
            plan.fullRequests += counts.fullRequests
            plan.conditionalRequests += counts.conditionalRequests
            plan.skippedFresh += counts.skippedFresh
            plan.skippedKnownMissing += counts.skippedKnownMissing
            requests.append(counts)
        }
        if renditions.count > 1 { plan.renditions = requests }
        return plan
    }

    /// The planner's decision for each wanted exercise of each resolution, from a private copy of
    /// the state (or, when it is damaged, from what a build would rebuild, in memory).
    private func decide(
        _ renditions: [RenditionPlan], catalog exercises: ExerciseList,
        layout: CacheLayout
    ) async throws -> ([[FetchPlanner.Decision]], StateRecovery?) {
        let sourceKey = manifest.source.stateKey
        let first = manifest.source.resolution
        let planner = FetchPlanner(settings: manifest.fetch, store: BlobStore(layout: layout), now: Date())
        let (indexPath, fetch) = ("\(options.outputDirectory)/index.json", manifest.fetch)
        let keys = renditions.map(\.resolution.stateKey)
        return try await BlockingWork.run { () throws -> ([[FetchPlanner.Decision]], StateRecovery?) in
            var known: [[String: GIFState]] = keys.map { _ in [:] }
            var recovery: StateRecovery?
            let reading = { (state: BuildState) throws -> [[String: GIFState]] in try keys.map { try state.gifs(resolution: $0) } }
            switch try StateOpener.inspect(layout: layout, source: sourceKey, reading: reading) {
            case .absent: break
            case .sound(let gifs): known = gifs
            case .damaged(var damaged):
                // What the build would record again, in memory: the disk stays as it is.
                let rebuilt = try BuildState(inMemorySource: sourceKey)
                try StateOpener.rebuild(
                    &damaged, state: rebuilt, indexPath: indexPath, catalog: exercises, layout: layout,
                    resolution: first, fetch: fetch)
                known = try reading(rebuilt)
                recovery = damaged
            }
            return (
                try zip(renditions, known).map { rendition, known in
                    try rendition.plan.wanted.map { planner.decide($0, known: known[$0.id]) }
                }, recovery
            )
        }
    }
}

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
public struct DryRun: Sendable {
    public let manifest: Manifest
    public let options: BuildOptions

    public init(manifest: Manifest, options: BuildOptions) {
        self.manifest = manifest
        self.options = options
    }

    /// The requests a build would make, by kind.
    public struct Plan: Sendable, Codable, Equatable {
        public var catalogRequests = 0
        public var exercises = 0
        public var wanted = 0
        public var packs: [String: Int] = [:]
        /// Requests for GIFs the cache does not have.
        public var fullRequests = 0
        /// Requests with If-None-Match / If-Modified-Since (304 when unchanged).
        public var conditionalRequests = 0
        /// Not requested: fetched more recently than refresh_after.
        public var skippedFresh = 0
        /// Not requested: a 404 remembered within missing_ttl.
        public var skippedKnownMissing = 0
        /// The request budget (max_requests), if any.
        public var requestBudget: Int?
        /// Set when the state database is damaged: where a build would move it (nothing was moved)
        /// and what it would rebuild from the index and the blobs.
        public var stateRecovery: StateRecovery?
        /// Image requests, at most, this build would send: one per GIF plus retries.
        public var imageRequests: Int { fullRequests + conditionalRequests }
    }

    public func plan() async throws -> Plan {
        let layout = CacheLayout(root: options.cacheDirectory)
        let client = try HTTPClient(caFile: manifest.fetch.caFile)
        defer { client.shutdown() }
        let catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client).fetchCatalog()
        let packPlan = PackPlan(specs: manifest.packs, catalog: catalog)
        var plan = Plan()
        plan.catalogRequests = client.statistics.requestsStarted
        plan.exercises = catalog.exercises.count
        plan.packs = Dictionary(uniqueKeysWithValues: packPlan.entries.map { ($0.spec.name, $0.exercises.count) })
        plan.requestBudget = manifest.fetch.maxRequests
        let wanted = packPlan.wanted
        plan.wanted = wanted.count
        let sourceKey = manifest.source.stateKey
        let resolution = manifest.source.resolution
        let planner = FetchPlanner(settings: manifest.fetch, store: BlobStore(layout: layout), now: Date())
        let (indexPath, fetch, exercises) = ("\(options.outputDirectory)/index.json", manifest.fetch, catalog.exercises)
        let (decisions, recovery) = try await BlockingWork.run { () throws -> ([FetchPlanner.Decision], StateRecovery?) in
            var known: [String: GIFState] = [:]
            var recovery: StateRecovery?
            switch try StateOpener.inspect(layout: layout, source: sourceKey, reading: { try $0.gifs(resolution: resolution.stateKey) }) {
            case .absent: break
            case .sound(let gifs): known = gifs
            case .damaged(var damaged):
                // What the build would record again, in memory: the disk stays as it is.
                let rebuilt = try BuildState(inMemorySource: sourceKey)
                try StateOpener.rebuild(&damaged, state: rebuilt, indexPath: indexPath, catalog: exercises, layout: layout,
                                        resolution: resolution, fetch: fetch)
                known = try rebuilt.gifs(resolution: resolution.stateKey)
                recovery = damaged
            }
            return (wanted.map { planner.decide($0, known: known[$0.id]) }, recovery)
        }
        plan.stateRecovery = recovery
        for decision in decisions {
            switch decision {
            case .reuseFresh: plan.skippedFresh += 1
            case .knownMissing: plan.skippedKnownMissing += 1
            case .request(let conditional):
                if conditional == nil { plan.fullRequests += 1 } else { plan.conditionalRequests += 1 }
            }
        }
        return plan
    }
}

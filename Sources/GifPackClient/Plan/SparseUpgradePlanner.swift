import GifPackFormat

/// How ``PackInstaller`` upgrades a cache by fetching only the frames it lacks.
///
/// With a previous generation installed and a remote index, an install fetches the new pack's
/// catalog frame and the frames of the GIFs the previous generation does not hold, each as a
/// single-range `Range` request (never a multi-range one), instead of the whole pack; with
/// posters, likewise the posters pack's catalog frame and the frames of the posters it lacks. Frames
/// closer together than ``coalesceGap`` bytes are fetched in one range (the gap's bytes come
/// along); at most ``maxRequestsInFlight`` requests run at once. The plan is dropped for the
/// whole-pack download when it would cost more than the pack (each request counted as
/// ``requestOverheadBytes`` on top of its bytes).
///
/// ```swift
/// var installer = PackInstaller(cacheDirectory: dir)
/// installer.sparseUpgrades.coalesceGap = 64 * 1024   // fewer, larger requests on a high-latency link
/// installer.sparseUpgrades.isEnabled = false         // always download whole packs
/// ```
package struct SparseUpgradeSettings: Sendable, Equatable {
    /// False: always download whole packs.
    package var isEnabled = true
    /// Two frames whose gap is smaller than this many bytes are fetched with one range request.
    package var coalesceGap: Int64 = 8 * 1024
    /// Range requests running at once (at least 1).
    package var maxRequestsInFlight = 3
    /// What one request is reckoned to cost in bytes (headers both ways) when a plan is weighed
    /// against the whole pack.
    package var requestOverheadBytes: Int64 = 1024

    package init() {}
}

/// The byte ranges of one pack that an upgrade fetches, from ``SparseUpgradePlanner``.
///
/// ```swift
/// let plan = SparseUpgradePlanner.plan(pack: pack, available: hashesInCache, settings: .init())
/// plan.ranges.count, plan.bytes, plan.wholePackBytes, plan.isCheaperThanWholePack
/// ```
package struct SparseUpgradePlan: Sendable, Equatable {
    /// One range request: the bytes `first...last` of the pack and the frames they hold.
    package struct Range: Sendable, Equatable {
        package var first: Int64
        package var last: Int64
        /// The entries whose frames lie in the range, in offset order.
        package var entries: [EntryLocation]

        package var length: Int64 { last - first + 1 }
        package var bytes: ClosedRange<Int64> { first...last }
    }

    /// The pack's name (a posters pack's: `<pack>-posters`).
    package let pack: String
    /// The ranges to request, in offset order; the first holds the catalog frame.
    package let ranges: [Range]
    /// SHA-256 of the GIFs whose frames are fetched, sorted (empty in a posters pack's plan).
    package let fetchedGIFs: [String]
    /// GIFs of the pack the cache already holds (0 in a posters pack's plan).
    package let reusedGIFs: Int
    /// Tar paths of the frames fetched besides the catalog's, sorted: `gifs/<sha256>.gif`, or a
    /// posters pack's `posters/<size>/<sha256>.gif`.
    package let fetchedPaths: [String]
    /// Frames of the file (besides the catalog's) the cache already holds: GIFs, or posters.
    package let reusedFrames: Int
    /// Bytes of the frames that are needed (catalog and missing GIFs or posters), without coalescing gaps.
    package let frameBytes: Int64
    /// The size of the pack file: what a whole download costs.
    package let wholePackBytes: Int64
    /// Bytes the ranges cover (frames plus the gaps coalescing brought in).
    package var bytes: Int64 { ranges.reduce(0) { $0 + $1.length } }
    /// ``bytes`` plus the overhead of each request.
    package let estimatedCost: Int64

    /// True when fetching the ranges costs less than downloading the whole pack.
    package var isCheaperThanWholePack: Bool { estimatedCost < wholePackBytes }
}

/// Works out which frames of a new pack an upgrade must fetch and how to group them into range
/// requests. Pure computation: no I/O.
///
/// Needed are the catalog frame (always: the install checks the catalog against the index) and
/// the frame of every GIF whose hash is not in `available` (the hashes the previous generation
/// holds on disk); for a posters pack, the frame of every poster whose path is not in `available`
/// (the posters the previous generation holds intact). Needed frames are sorted by offset and
/// merged into one range while the gap to the next is below ``SparseUpgradeSettings/coalesceGap``.
///
/// ```swift
/// let plan = SparseUpgradePlanner.plan(pack: newPack, available: ["ab12…", …], settings: .init())
/// for range in plan.ranges { print("bytes=\(range.first)-\(range.last)") }
/// let posterPlan = SparseUpgradePlanner.plan(posters: newPack.posters!, available: ["posters/80/ab12….gif"], settings: .init())
/// ```
package enum SparseUpgradePlanner {
    package static func plan(
        pack: PackDescription, available: Set<String>,
        settings: SparseUpgradeSettings
    ) -> SparseUpgradePlan {
        let missing = pack.gifs.filter { !available.contains($0.sha256) }
        return plan(
            file: pack.name, bytes: pack.bytes, catalog: pack.catalog, missing: missing.map(\.location),
            reused: pack.gifs.count - missing.count, fetchedGIFs: missing.map(\.sha256).sorted(),
            reusedGIFs: pack.gifs.count - missing.count, settings: settings)
    }

    /// A posters pack's plan: `available` holds the paths (`posters/<size>/<sha256>.gif`) of the
    /// posters the cache holds.
    package static func plan(
        posters: PosterPackDescription, available: Set<String>,
        settings: SparseUpgradeSettings
    ) -> SparseUpgradePlan {
        let missing = posters.posters.filter { !available.contains($0.path) }
        return plan(
            file: posters.name, bytes: posters.bytes, catalog: posters.catalog, missing: missing,
            reused: posters.posters.count - missing.count, fetchedGIFs: [],
            reusedGIFs: 0, settings: settings)
    }

    private static func plan(
        file: String, bytes: Int64, catalog: EntryLocation, missing: [EntryLocation], reused: Int,
        fetchedGIFs: [String], reusedGIFs: Int, settings: SparseUpgradeSettings
    ) -> SparseUpgradePlan {
        let needed = ([catalog] + missing).sorted { $0.frameOffset < $1.frameOffset }
        var ranges: [SparseUpgradePlan.Range] = []
        for location in needed {
            let first = location.frameOffset
            let last = location.frameOffset + location.frameLength - 1
            if var current = ranges.last, first - current.last - 1 < max(1, settings.coalesceGap) {
                current.last = max(current.last, last)
                current.entries.append(location)
                ranges[ranges.count - 1] = current
            } else {
                ranges.append(.init(first: first, last: last, entries: [location]))
            }
        }
        let frameBytes = needed.reduce(Int64(0)) { $0 + $1.frameLength }
        let covered = ranges.reduce(Int64(0)) { $0 + $1.length }
        return SparseUpgradePlan(
            pack: file, ranges: ranges, fetchedGIFs: fetchedGIFs, reusedGIFs: reusedGIFs,
            fetchedPaths: missing.map(\.path).sorted(), reusedFrames: reused, frameBytes: frameBytes, wholePackBytes: bytes,
            estimatedCost: covered + Int64(ranges.count) * max(0, settings.requestOverheadBytes))
    }
}

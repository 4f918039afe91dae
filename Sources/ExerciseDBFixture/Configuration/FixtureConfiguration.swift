/// Everything that shapes one fixture server: the generated catalog, its GIFs, and how the
/// server behaves (latency, key, paging cap, plan resolution, quota).
///
/// It is a plain value: tweak a copy, hand it to ``FixtureServer``. The defaults make a small,
/// fast catalog for tests (40 exercises, 32 px GIFs); ``realistic(count:)`` approximates the real
/// service's sizes for demos and benchmarks.
///
/// ```swift
/// var configuration = FixtureConfiguration()
/// configuration.exerciseCount = 12
/// configuration.apiKey = "test-key"
/// configuration.quota = 100
/// let server = try FixtureServer(configuration)
/// ```
package struct FixtureConfiguration: Sendable, Equatable {
    /// Number of generated exercises (ignored when ``realDataDirectory`` is set).
    package var exerciseCount: Int = 40
    /// Seed for every generated name, id and pixel: same seed, same bytes.
    package var seed: UInt64 = 1
    /// Width and height in pixels of generated GIFs at resolution 180; other resolutions scale it
    /// linearly (360 → twice as wide).
    package var gifDimension: Int = 32
    /// Frames per generated GIF, drawn per exercise.
    package var framesRange: ClosedRange<Int> = 2...6
    /// Palette entries per generated GIF, drawn per exercise with bits per pixel skewed towards
    /// the low end, so large GIFs are rare.
    package var colorsRange: ClosedRange<Int> = 2...8
    /// When set, 70% of generated GIFs use exactly this many colours and the rest are drawn
    /// from ``colorsRange``: a peak with a thin tail, like the real catalog's sizes.
    package var typicalColors: Int? = nil
    /// Every Nth exercise reuses an earlier exercise's exact GIF bytes (0 = never).
    package var duplicateEvery: Int = 7
    /// When set, at most this many distinct GIFs are made: every exercise past the first this many
    /// originals reuses one of them (drawn by the seed), so a catalog of 100,000 exercises needs as
    /// few GIFs as the real data has, and the server is not the bottleneck of a scale benchmark.
    package var distinctGIFs: Int? = nil
    /// When set, every original generated GIF gets a size drawn from this list (bytes at resolution
    /// 180, scaled by area at others): a GIF synthesized smaller is padded up to it with comment
    /// extensions before its trailer (a larger one stays as it is). A real sample's file sizes
    /// make a catalog of the real GIFs' sizes without their bytes (bench part 5, scale-real).
    package var gifSizes: [Int]? = nil
    /// Delay added before every response (control routes excepted).
    package var latencyMilliseconds: Int = 0
    /// When set, the RapidAPI routes require `X-RapidAPI-Key` to equal it, else 401.
    package var apiKey: String? = nil
    /// Largest page a list request gets; larger `limit`s are clamped to it.
    package var maxPageSize: Int = 100
    /// Image requests above this resolution are served at it, silently, still 200.
    package var planMaxResolution: Int = 1080
    /// When set, serve the catalogs and GIFs of a real-data folder (`catalog-rapidapi.json`,
    /// `catalog-v1.json`, `images.csv`, `gifs/<sha256>.gif`) instead of generated ones. The data is
    /// read at runtime only.
    package var realDataDirectory: String? = nil
    /// Monthly request quota: every `/image` request spends one; at zero they get the 429
    /// monthly-quota body. `nil` = unlimited and no `x-ratelimit-requests-*` headers.
    package var quota: Int? = nil
    /// When above 0, every RapidAPI list record carries an extra field `attributes` holding arrays
    /// nested this deep (`[[[…]]]`): a hostile catalog for parsers.
    package var recordNesting: Int = 0
    /// When set, the RapidAPI list route misbehaves this way (see ``ListFault``).
    package var listFault: ListFault? = nil
    /// TCP port to listen on (127.0.0.1 only); 0 picks a free ephemeral port.
    package var port: Int = 0

    /// The small, fast test defaults.
    package init() {}

    /// Sizes like the real service: 180x180 GIFs of 10 to 14 frames whose random pixels mostly
    /// use 3 colours (the rest 2 to 12), which lands them between about 46 and 240 KB with a
    /// median near 94 KB, and about one exercise in eight sharing another's GIF.
    package static func realistic(count: Int = 1324) -> FixtureConfiguration {
        var configuration = FixtureConfiguration()
        configuration.exerciseCount = count
        configuration.gifDimension = 180
        configuration.framesRange = 10...14
        configuration.colorsRange = 2...12
        configuration.typicalColors = 3
        configuration.duplicateEvery = 8
        return configuration
    }
}

extension FixtureConfiguration {
    /// Rejects values the server cannot honour, naming the field and the accepted range.
    func validate() throws(FixtureError) {
        func require(_ condition: Bool, _ field: String, _ reason: String) throws(FixtureError) {
            if !condition { throw .invalidConfiguration(field: field, reason: reason) }
        }
        if realDataDirectory == nil {
            try require((1...1_000_000).contains(exerciseCount), "exerciseCount", "must be 1...1000000, got \(exerciseCount)")
        }
        try require((1...1024).contains(gifDimension), "gifDimension", "must be 1...1024, got \(gifDimension)")
        try require(
            framesRange.lowerBound >= 1 && framesRange.upperBound <= 1000,
            "framesRange", "must lie within 1...1000, got \(framesRange)")
        try require(
            colorsRange.lowerBound >= 2 && colorsRange.upperBound <= 256,
            "colorsRange", "must lie within 2...256, got \(colorsRange)")
        if let typicalColors {
            try require((2...256).contains(typicalColors), "typicalColors", "must be 2...256, got \(typicalColors)")
        }
        if let distinctGIFs { try require(distinctGIFs >= 1, "distinctGIFs", "must be at least 1, got \(distinctGIFs)") }
        try require(duplicateEvery >= 0, "duplicateEvery", "must be 0 (never) or more, got \(duplicateEvery)")
        try require(latencyMilliseconds >= 0, "latencyMilliseconds", "must not be negative, got \(latencyMilliseconds)")
        try require(maxPageSize >= 1, "maxPageSize", "must be at least 1, got \(maxPageSize)")
        try require(
            FixtureCatalog.resolutions.contains(planMaxResolution), "planMaxResolution",
            "must be one of \(FixtureCatalog.resolutions), got \(planMaxResolution)")
        try require((quota ?? 0) >= 0, "quota", "must not be negative, got \(quota ?? 0)")
        try require((0...65535).contains(port), "port", "must be 0...65535, got \(port)")
    }
}

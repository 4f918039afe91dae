/// The exercises a ``FixtureServer`` lists and the GIF bytes each exercise id serves, in both API
/// shapes: RapidAPI (``exercises``, 4-digit ids) and v1 (``v1Exercises``, 7-char ids).
///
/// Generated catalogs pair each RapidAPI exercise with a v1 twin that serves the same GIF; a
/// real-data catalog keeps the sample's two lists as they are. A catalog is a value: take it
/// from a server to know what a client should have received.
///
/// ```swift
/// let catalog = server.catalog
/// let id = catalog.exercises[0].id
/// let gif = catalog.gifBytes(id: id, resolution: 180)   // what GET /image?exerciseId=…&resolution=180 sends
/// ```
package struct FixtureCatalog: Sendable {
    /// The resolution GIFs are made at (and the only one of real-data GIFs).
    package static let baseResolution = 180
    /// The resolutions `/image` accepts.
    package static let resolutions = [180, 360, 720, 1080]

    /// The RapidAPI listing, in order.
    package private(set) var exercises: [RapidAPIExercise]
    /// The v1 listing, in order.
    package private(set) var v1Exercises: [V1Exercise]
    /// Requests above it are served at it (``FixtureConfiguration/planMaxResolution``).
    package let planMaxResolution: Int

    private let rapidGIFKeys: [String: String]
    private let v1GIFKeys: [String: String]
    /// v1 id → RapidAPI id for generated twins: both name one exercise.
    private let rapidIDByV1ID: [String: String]
    private var replacements: [String: ServedGIF] = [:]
    /// Replacements at one resolution only (id → resolution → GIF), before ``replacements``.
    private var resolutionReplacements: [String: [Int: ServedGIF]] = [:]
    private let store: GIFStore

    init(configuration: FixtureConfiguration) throws(FixtureError) {
        planMaxResolution = configuration.planMaxResolution
        if let directory = configuration.realDataDirectory {
            let loaded = try RealDataLoader.load(directory: directory)
            exercises = loaded.exercises
            v1Exercises = loaded.v1Exercises
            rapidGIFKeys = loaded.rapidGIFKeys
            v1GIFKeys = loaded.v1GIFKeys
            rapidIDByV1ID = [:]
            store = GIFStore(loaded: loaded.gifs)
        } else {
            let generated = CatalogGenerator.generate(configuration)
            exercises = generated.exercises
            v1Exercises = generated.v1Exercises
            rapidGIFKeys = generated.gifKeyByID
            v1GIFKeys = generated.rapidIDByV1ID.mapValues { generated.gifKeyByID[$0]! }
            rapidIDByV1ID = generated.rapidIDByV1ID
            store = try GIFStore(recipes: generated.recipes, baseDimension: configuration.gifDimension)
        }
    }

    /// The bytes `/image` sends for a RapidAPI id at a requested resolution (above the plan's
    /// maximum: the maximum's bytes), or `/media/<id>.gif` for a v1 id at 180. Nil for an unknown
    /// id or a resolution `/image` does not accept.
    package func gifBytes(id: String, resolution: Int = FixtureCatalog.baseResolution) -> [UInt8]? {
        servedGIF(id: id, resolution: resolution)?.bytes
    }

    /// The `ETag` header value (quotes included) served with ``gifBytes(id:resolution:)``.
    package func gifETag(id: String, resolution: Int = FixtureCatalog.baseResolution) -> String? {
        servedGIF(id: id, resolution: resolution)?.etag
    }

    func isRapidID(_ id: String) -> Bool { rapidGIFKeys[id] != nil }
    func isV1ID(_ id: String) -> Bool { v1GIFKeys[id] != nil }

    /// Each distinct GIF at 180 once, under the first id (RapidAPI listing first, then v1) that
    /// serves it: what a deduplicating client should end up storing.
    package func distinctGIFs() -> [String: [UInt8]] {
        var seen = Set<String>()
        var result: [String: [UInt8]] = [:]
        for id in exercises.map(\.id) + v1Exercises.map(\.exerciseId) {
            guard let gif = servedGIF(id: id, resolution: FixtureCatalog.baseResolution),
                seen.insert(gif.etag).inserted
            else { continue }
            result[id] = gif.bytes
        }
        return result
    }

    /// Fault schedules, replacements and stats name one exercise by this id, whichever shape's
    /// id was used.
    func canonicalID(_ id: String) -> String { rapidIDByV1ID[id] ?? id }

    /// The GIF served for `id` at a requested resolution, with its validators.
    func servedGIF(id: String, resolution: Int) -> ServedGIF? {
        guard FixtureCatalog.resolutions.contains(resolution) else { return nil }
        if let replacement = resolutionReplacements[canonicalID(id)]?[resolution] { return replacement }
        if let replacement = replacements[canonicalID(id)] { return replacement }
        guard let key = rapidGIFKeys[id] ?? v1GIFKeys[id] else { return nil }
        return store.gif(key: key, resolution: min(resolution, planMaxResolution))
    }

    /// From now on the exercise `id` (either shape's id, and its twin) is listed named `name`: an
    /// upstream change to one record.
    mutating func rename(id: String, to name: String) {
        let canonical = canonicalID(id)
        for index in exercises.indices where exercises[index].id == canonical { exercises[index].name = name }
        for index in v1Exercises.indices where canonicalID(v1Exercises[index].exerciseId) == canonical { v1Exercises[index].name = name }
    }

    /// From now on `id` (and its twin) serves `bytes` at every resolution, modified at `time`.
    mutating func replaceGIF(id: String, with bytes: [UInt8], at time: Int) {
        replacements[canonicalID(id)] = ServedGIF(bytes: bytes, lastModified: time)
    }

    /// From now on `id` (and its twin) serves `bytes` when `resolution` is asked for, modified at `time`.
    mutating func replaceGIF(id: String, resolution: Int, with bytes: [UInt8], at time: Int) {
        resolutionReplacements[canonicalID(id), default: [:]][resolution] = ServedGIF(bytes: bytes, lastModified: time)
    }

    /// The catalog with every v1 `gifUrl` pointing at `base` (e.g. `http://127.0.0.1:8080`).
    func resolvingMediaURLs(base: String) -> FixtureCatalog {
        var copy = self
        for index in copy.v1Exercises.indices {
            copy.v1Exercises[index].gifUrl = base + V1Exercise.mediaPath(for: copy.v1Exercises[index].exerciseId)
        }
        return copy
    }
}

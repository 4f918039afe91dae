import Foundation
import Synchronization

/// The catalog's GIF bytes, by GIF key (several exercises may share one key). GIFs at the base
/// resolution (180) are made up front and kept; other resolutions of generated GIFs are made on
/// first request and kept in a cache bounded to ``scaledCacheBudget`` bytes (oldest dropped
/// first, and regenerated identically if asked for again). Real-data GIFs exist only at 180 and
/// are served for every resolution.
///
/// Shared by every copy of a ``FixtureCatalog``; safe from any thread.
///
/// ```swift
/// let store = try GIFStore(recipes: recipes, baseDimension: 32)
/// store.gif(key: "g0", resolution: 360)?.bytes.count
/// ```
final class GIFStore: Sendable {
    static let scaledCacheBudget = 512 << 20

    private struct ScaledKey: Hashable {
        let key: String
        let resolution: Int
    }

    private let originals: [String: ServedGIF]
    private let recipes: [String: GIFRecipe]
    private let baseDimension: Int
    /// GIFs scaled on demand, oldest first out once over ``scaledCacheBudget``.
    private struct Scaled {
        var gifs: [ScaledKey: ServedGIF] = [:]
        var order: [ScaledKey] = []
        var bytes = 0
    }

    private let scaled = Mutex(Scaled())

    /// GIFs loaded from files, by key.
    init(loaded: [String: [UInt8]]) {
        originals = loaded.mapValues { ServedGIF(bytes: $0, lastModified: ServedGIF.originalLastModified) }
        recipes = [:]
        baseDimension = 0
    }

    /// Synthesizes every recipe at the base resolution, in parallel.
    init(recipes: [GIFRecipe], baseDimension: Int) throws(FixtureError) {
        let results = GIFStore.synthesizeAll(recipes, baseDimension: baseDimension)
        var originals: [String: ServedGIF] = [:]
        for (recipe, result) in zip(recipes, results) {
            switch result {
            case .success(let gif): originals[recipe.key] = gif
            case .failure(let error): throw error
            }
        }
        self.originals = originals
        self.recipes = Dictionary(uniqueKeysWithValues: recipes.map { ($0.key, $0) })
        self.baseDimension = baseDimension
    }

    /// The GIF of `key` at `resolution`, or nil for an unknown key or a failed synthesis.
    func gif(key: String, resolution: Int) -> ServedGIF? {
        guard let original = originals[key] else { return nil }
        guard resolution != FixtureCatalog.baseResolution, let recipe = recipes[key] else { return original }
        let scaledKey = ScaledKey(key: key, resolution: resolution)
        if let cached = scaled.withLock({ $0.gifs[scaledKey] }) { return cached }
        guard let bytes = try? recipe.synthesize(baseDimension: baseDimension, resolution: resolution) else {
            return nil
        }
        let made = ServedGIF(bytes: bytes, lastModified: ServedGIF.originalLastModified)
        scaled.withLock { scaled in
            guard scaled.gifs[scaledKey] == nil else { return }
            scaled.gifs[scaledKey] = made
            scaled.order.append(scaledKey)
            scaled.bytes += bytes.count
            while scaled.bytes > GIFStore.scaledCacheBudget, scaled.order.count > 1 {
                let evicted = scaled.order.removeFirst()
                scaled.bytes -= scaled.gifs.removeValue(forKey: evicted)?.bytes.count ?? 0
            }
        }
        return made
    }

    private static func synthesizeAll(
        _ recipes: [GIFRecipe], baseDimension: Int
    ) -> [Result<ServedGIF, FixtureError>] {
        let results = Mutex([Result<ServedGIF, FixtureError>?](repeating: nil, count: recipes.count))
        DispatchQueue.concurrentPerform(iterations: recipes.count) { index in
            let result = Result { () throws(FixtureError) -> ServedGIF in
                let bytes = try recipes[index].synthesize(
                    baseDimension: baseDimension, resolution: FixtureCatalog.baseResolution)
                return ServedGIF(bytes: bytes, lastModified: ServedGIF.originalLastModified)
            }
            results.withLock { $0[index] = result }
        }
        return results.withLock { $0.map { $0! } }
    }
}

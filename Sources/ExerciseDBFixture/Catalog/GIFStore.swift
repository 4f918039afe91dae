import Foundation

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
final class GIFStore: @unchecked Sendable {  // @unchecked: the scaled GIFs are read and written under `lock`; the originals are constant.
    static let scaledCacheBudget = 512 << 20

    private struct ScaledKey: Hashable {
        let key: String
        let resolution: Int
    }

    private let originals: [String: ServedGIF]
    private let recipes: [String: GIFRecipe]
    private let baseDimension: Int
    private let lock = NSLock()
    private var scaled: [ScaledKey: ServedGIF] = [:]
    private var scaledOrder: [ScaledKey] = []
    private var scaledBytes = 0

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
        lock.lock()
        let cached = scaled[scaledKey]
        lock.unlock()
        if let cached { return cached }
        guard let bytes = try? recipe.synthesize(baseDimension: baseDimension, resolution: resolution) else {
            return nil
        }
        let made = ServedGIF(bytes: bytes, lastModified: ServedGIF.originalLastModified)
        lock.lock()
        defer { lock.unlock() }
        if scaled[scaledKey] == nil {
            scaled[scaledKey] = made
            scaledOrder.append(scaledKey)
            scaledBytes += bytes.count
            while scaledBytes > GIFStore.scaledCacheBudget, scaledOrder.count > 1 {
                let evicted = scaledOrder.removeFirst()
                scaledBytes -= scaled.removeValue(forKey: evicted)?.bytes.count ?? 0
            }
        }
        return made
    }

    private static func synthesizeAll(
        _ recipes: [GIFRecipe], baseDimension: Int
    ) -> [Result<ServedGIF, FixtureError>] {
        let lock = NSLock()
        nonisolated(unsafe) var results = [Result<ServedGIF, FixtureError>?](repeating: nil, count: recipes.count)
        DispatchQueue.concurrentPerform(iterations: recipes.count) { index in
            let result = Result { () throws(FixtureError) -> ServedGIF in
                let bytes = try recipes[index].synthesize(
                    baseDimension: baseDimension, resolution: FixtureCatalog.baseResolution)
                return ServedGIF(bytes: bytes, lastModified: ServedGIF.originalLastModified)
            }
            lock.lock()
            results[index] = result
            lock.unlock()
        }
        return results.map { $0! }
    }
}

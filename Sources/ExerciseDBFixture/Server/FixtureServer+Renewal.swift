import GIFSynthesis
import GifPackGIF

extension FixtureServer {
    /// Gives `percent` % of the exercises (at least one, evenly spread in id order) a newly drawn
    /// GIF of the same width and height: a later release of the same catalog, for upgrade tests
    /// and benchmarks. Same `seed`, same new bytes. Returns the ids changed, sorted.
    ///
    /// ```swift
    /// let changed = try server.renewGIFs(percent: 1)   // 13 of 1,324 exercises
    /// ```
    @discardableResult
    public func renewGIFs(percent: Double, seed: UInt64 = 0x5EED) throws -> [String] {
        let catalog = self.catalog
        let ids = catalog.exercises.map(\.id).sorted()
        guard !ids.isEmpty, percent > 0 else { return [] }
        let count = min(ids.count, max(1, Int((Double(ids.count) * percent / 100).rounded())))
        let step = Double(ids.count) / Double(count)
        var changed: [String] = []
        for slot in 0..<count {
            let id = ids[min(ids.count - 1, Int(Double(slot) * step))]
            let old = catalog.gifBytes(id: id, resolution: 180) ?? []
            let width = old.count >= 10 ? Int(old[6]) | Int(old[7]) << 8 : 32
            let height = old.count >= 10 ? Int(old[8]) | Int(old[9]) << 8 : 32
            let bytes = try GIFSynthesizer.animatedGIF(width: max(1, width), height: max(1, height), frames: 12, colors: 3,
                                                       seed: seed &+ UInt64(slot))
            replaceGIF(id: id, with: bytes)
            changed.append(id)
        }
        return changed
    }
}

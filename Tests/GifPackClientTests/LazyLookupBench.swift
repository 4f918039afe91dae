import Foundation
@testable import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

/// The lazy tier's answer time as the catalog grows: an index of
/// 1,000, 10,000 and 100,000 exercises (a 60-exercise build's pack, its exercise list made that long,
/// each row showing one of its GIFs), the GIFs stored in the lazy cache, and the median time of one
/// `GIFLoader.gif(for:)` answered from it (memory emptied before each). Runs only with
/// `GIFPACK_LOADER_BENCH=<output.json>` and writes `<output.json>.lazy-scale`; it records times and
/// asserts only that every answer came from the lazy cache.
@Suite(
    "Bench: the lazy tier at scale (GIFPACK_LOADER_BENCH)", .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["GIFPACK_LOADER_BENCH"] != nil))
struct LazyLookupBench {
    /// `index.json` of `site` with the first pack's exercises replaced by `count` rows (ids `x000001`, …)
    /// showing its GIFs in turn; the compressed copy removed, so clients read this one.
    static func lengthen(site: String, to count: Int) throws -> [String] {
        let path = "\(site)/index.json"
        var index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var packs = try #require(index["packs"] as? [[String: Any]])
        let gifs = try #require(packs[0]["gifs"] as? [[String: Any]]).compactMap { $0["sha256"] as? String }
        let ids = (1...count).map { String(format: "x%06d", $0) }
        packs[0]["exercises"] = ids.enumerated().map { ["id": $1, "gif": gifs[$0 % gifs.count]] }
        index["packs"] = packs
        try JSONSerialization.data(withJSONObject: index, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: "\(path).zst")
        return ids
    }

    @Test func lazyTierAtScale() async throws {
        let output = try #require(ProcessInfo.processInfo.environment["GIFPACK_LOADER_BENCH"]) + ".lazy-scale"
        let served = try await GIFLoaderTests.Served.make(count: 60)
        defer { served.stop() }
        let distinct = try #require(try served.dists.index().packs.first?.gifs.count)
        var figures: [String: Double] = [:]
        for count in [1_000, 10_000, 100_000] {
            let ids = try Self.lengthen(site: served.dists.site, to: count)
            let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("scale-\(count)"))
            // Every GIF stored once (by range), then answers from the lazy cache.
            for id in ids.prefix(distinct) { _ = try await loader.gif(for: id) }
            var runs: [Double] = []
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<100 {
                let id = try #require(ids.randomElement(using: &generator))
                loader.emptyMemory()
                var tier: GIFTier?
                runs.append(try await GIFLoaderBench.microseconds { tier = try await loader.gif(for: id)?.tier })
                #expect(tier == .lazyCache)
            }
            figures["lazyAt\(count)"] = GIFLoaderBench.median(runs)
            figures["indexBytesAt\(count)"] = Double(try Data(contentsOf: URL(fileURLWithPath: served.dists.site + "/index.json")).count)
        }
        let json = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys, .prettyPrinted])
        try json.write(to: URL(fileURLWithPath: output))
    }
}

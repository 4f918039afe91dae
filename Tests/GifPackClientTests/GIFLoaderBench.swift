import Foundation
@testable import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The loader's figures per tier (bench/loader.sh): how long an answer takes from memory, the
/// installed packs, the lazy disk cache and the network by range, twenty coalesced callers, and a
/// relaunch: twenty cells asking at once for their first GIF against one alone.
/// Runs only with `GIFPACK_LOADER_BENCH=<output.json>`; it records times and asserts none (the
/// requests it counts are checked by GIFLoaderTests).
@Suite(
    "Bench: the loader's tiers (GIFPACK_LOADER_BENCH)", .tags(.nginx), .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment["GIFPACK_LOADER_BENCH"] != nil))
struct GIFLoaderBench {
    /// Median of the times `body` takes, in microseconds.
    static func median(_ runs: [Double]) -> Double {
        let sorted = runs.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func microseconds(_ body: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
    }

    @Test func tierFigures() async throws {
        let output = try #require(ProcessInfo.processInfo.environment["GIFPACK_LOADER_BENCH"])
        let served = try await GIFLoaderTests.Served.make(count: 60)
        defer { served.stop() }
        let ids = served.distinct
        let installed = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("installed"))
        try await installed.refresh()
        var runs: [String: [Double]] = [:]
        for id in ids {
            installed.emptyMemory()
            runs["installed", default: []].append(try await Self.microseconds { _ = try await installed.gif(for: id) })
            runs["memory", default: []].append(try await Self.microseconds { _ = try await installed.gif(for: id) })
        }
        let lazy = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("lazy"))
        _ = try await lazy.lazy.index()
        var frameBytes: [Double] = []
        for id in ids {
            runs["network", default: []].append(try await Self.microseconds { _ = try await lazy.gif(for: id) })
            lazy.emptyMemory()
            runs["lazyCache", default: []].append(try await Self.microseconds { _ = try await lazy.gif(for: id) })
            frameBytes.append(Double(try #require(try served.dists.index().packs.first?.gifEntry(forExercise: id)).location.frameLength))
        }
        for (round, id) in ids.prefix(10).enumerated() {
            let fresh = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("coalesced-\(round)"))
            _ = try await fresh.lazy.index()
            let mark = try await served.nginx.mark()
            runs["coalesced20", default: []].append(
                try await Self.microseconds {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<20 { group.addTask { _ = try await fresh.gif(for: id) } }
                        try await group.waitForAll()
                    }
                })
            runs["coalescedRequests", default: []].append(Double(try await served.rangeRequests(since: mark).count))
        }
        // A relaunch: a new loader on the folder where the packs are installed, nothing in memory. One
        // cell alone, against twenty cells asking at once for twenty different exercises (the time
        // until the last of them has its GIF); the twenty share one read of the installed manifest.
        let cells = Array(ids.prefix(20))
        try #require(cells.count == 20, "the served dist has \(ids.count) distinct GIFs, fewer than twenty")
        for round in 0..<9 {
            let alone = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("installed"))
            var tier: GIFTier?
            runs["relaunch1", default: []].append(try await Self.microseconds { tier = try await alone.gif(for: cells[round])?.tier })
            try #require(tier == .installed, "a relaunched cell was answered from \(String(describing: tier))")
            let screen = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("installed"))
            var tiers: [GIFTier?] = []
            runs["relaunch20", default: []].append(
                try await Self.microseconds {
                    tiers = try await withThrowingTaskGroup(of: GIFTier?.self) { group in
                        for id in cells { group.addTask { try await screen.gif(for: id)?.tier } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                })
            try #require(tiers.count == 20 && tiers.allSatisfy { $0 == .installed }, "\(tiers)")
            runs["relaunch20ManifestReads", default: []].append(Double(screen.snapshotReads.withLock { $0 }))
        }
        var figures: [String: Double] = runs.mapValues(Self.median)
        figures["gifs"] = Double(ids.count)
        figures["frameBytesMedian"] = Self.median(frameBytes)
        let json = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys, .prettyPrinted])
        try json.write(to: URL(fileURLWithPath: output))
    }
}

import Foundation

extension BuildPipeline {
    /// Each pack's decision (keep the one written before, or assemble) once every frame an assembly
    /// will copy is verified: the describe step decides, the verify stage checks the frames of the
    /// packs to assemble. A GIF whose cached bytes no longer match their hash is dropped and its
    /// exercises downloaded again, whole, before any pack is written; the packs are then decided
    /// again with the new results (a pack may now be current, or hold new GIFs to check).
    func describeAndVerify(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> DecidedPacks {
        var results = results
        while true {
            let decisions = try await describeStage(plan, results: results, tools: tools, indexes: indexes)
            guard
                let repaired = try await verifyStage(
                    decisions, results: results, wanted: plan.wanted, tools: tools,
                    into: &report)
            else {
                return DecidedPacks(decisions: decisions, results: results)
            }
            results = repaired
        }
    }

    /// Decides every pack of the plan (see ``PackMaker/decide(_:results:history:)``).
    private func describeStage(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools,
        indexes: KnownIndexes
    ) async throws -> [PackMaker.Decision] {
        let (maker, state) = (packMaker(tools), tools.state)
        return try await BlockingWork.run("gifpack.describe") {
            try plan.entries.map { entry in
                let name = entry.spec.name
                let history = PackMaker.History(
                    references: indexes.packs(named: name),
                    recorded: try state.writtenPacks(pack: name))
                return try maker.decide(entry, results: results, history: history)
            }
        }
    }

    /// The verify stage: checks the frame of every GIF a pack to assemble copies (see
    /// ``FrameCache/verify(sha256:size:)``), on both cores. Returns nil when all are sound, or the
    /// results with each damaged GIF's exercises downloaded again. Bytes that no longer match their
    /// hash never enter a pack; a GIF found damaged twice in one run fails the build.
    private func verifyStage(
        _ decisions: [PackMaker.Decision], results: FetchResults, wanted: ExerciseList,
        tools: GIFTools, into report: inout BuildReport
    ) async throws -> FetchResults? {
        let sizes = decisions.reduce(into: [String: Int64]()) { sizes, decision in
            sizes.merge(decision.gifSizes) { first, _ in first }
        }
        let frames = tools.frames
        let hashes = sizes.keys.filter { !frames.isVerified(sha256: $0) }.sorted()
        guard !hashes.isEmpty else { return nil }
        let parts = hashes.count < 64 ? 1 : 2
        let damaged = try await withThrowingTaskGroup(of: [String].self) { group in
            for part in 0..<parts {
                group.addTask {
                    try await BlockingWork.run("gifpack.verify") {
                        try stride(from: part, to: hashes.count, by: parts).map { hashes[$0] }
                            .filter { try !frames.verify(sha256: $0, size: sizes[$0] ?? 0) }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        guard !damaged.isEmpty else { return nil }
        var repaired = results
        for hash in damaged.sorted() {
            try await replace(damaged: hash, results: &repaired, wanted: wanted, tools: tools, into: &report)
        }
        return repaired
    }

    /// Drops a damaged blob (its file, its frame and what the state knows of it) and downloads its
    /// exercises again, whole; their new results replace the old in `results`.
    private func replace(
        damaged hash: String, results: inout FetchResults, wanted: ExerciseList, tools: GIFTools,
        into report: inout BuildReport
    ) async throws {
        let current = results
        let users = try wanted.filtered { if case .stored(let gif)? = current[$0.id] { gif.sha256 == hash } else { false } }.array()
        let (layout, framePath, state) = (tools.layout, tools.frames.path(sha256: hash), tools.state)
        try await BlockingWork.run {
            FileSystem.remove(layout.blobPath(sha256: hash))
            FileSystem.remove(framePath)
            try state.forgetBlob(sha256: hash)
        }
        let ids = users.prefix(5).map(\.id).joined(separator: ", ")
        let failure = "the cached GIF \(hash) of exercise(s) \(ids) was damaged (its bytes no longer match their hash)"
        guard !report.damagedBlobs.contains(hash) else {
            throw BuildEnded(status: .failed, message: failure + " again after it was downloaded again; the index was not changed")
        }
        report.damagedBlobs.append(hash)
        let again = try await tools.fetcher().fetch(ExerciseList(users))
        if let stop = again.stop {
            report.stopReason = stop
            throw BuildEnded(
                status: stop.exitStatus,
                message: failure + "; downloading it again stopped: \(stop). It was removed "
                    + "from the cache and the next run downloads it; the index was not changed")
        }
        again.results.forEach { results[$0] = $1 }
        report.gifs = BuildReport.GIFSummary()
        report.gifs.wanted = wanted.count
        report.rejections = []
        report.resolutionMismatches = []
        try summarise(results, wanted: wanted, resolution: tools.resolution, into: &report)
        guard manifest.fetch.maxMissing.allows(missing: report.gifs.missing, of: wanted.count) else {
            throw BuildEnded(
                status: .failed,
                message: failure + "; downloading it again failed, leaving \(report.gifs.missing) of "
                    + "\(wanted.count) exercises without a valid GIF, more than max_missing "
                    + "(\(manifest.fetch.maxMissing)); the index was not changed")
        }
    }

    /// The maker of this build's packs at the tools' resolution.
    func packMaker(_ tools: GIFTools) -> PackMaker {
        var source = sourceDescription
        (source.resolution, source.resolutions) = (tools.resolution.pixels, nil)
        return PackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames, source: source,
            placeholders: tools.placeholders)
    }

    /// The source as the index describes it (`resolutions` only when there are several).
    var sourceDescription: SourceDescription {
        let resolutions = manifest.source.resolutions
        return SourceDescription(
            kind: manifest.source.kind.rawValue,
            baseURL: manifest.output.writesBaseURL ? manifest.source.baseURL : nil,
            resolution: manifest.source.resolution.pixels,
            resolutions: resolutions.count > 1 ? resolutions.compactMap(\.pixels) : nil,
            formats: manifest.output.makesWebP ? manifest.output.formats.map { ImageFormat(rawValue: $0.rawValue) } : nil)
    }
}

/// What the verify stage hands the pack stage: each pack's decision (in the plan's order), every
/// frame an assembly copies verified, and the results the decisions were made from.
struct DecidedPacks: Sendable {
    var decisions: [PackMaker.Decision]
    var results: FetchResults
}

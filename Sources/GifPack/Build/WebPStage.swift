import Foundation

extension BuildPipeline {
    /// The WebP renditions of the distinct GIFs `plan`'s packs hold (`output.formats` with
    /// `webp`): the fetch's processing workers encoded them beside the transfers (``GIFIntake``),
    /// so here they are cache hits; a GIF the fetch did not get to (its encoding failed, or the
    /// cache lost it) is encoded now, and a failure ends the build. Counted in ``BuildReport/webp``.
    /// Then each pack's WebP rendition at this resolution (``FormatPackMaker``), for `formatPacks[]`.
    func webpStage(
        _ plan: PackPlan, results: FetchResults, tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> [PackDescription] {
        guard let cache = tools.webp, let resolution = tools.resolution.pixels else { return [] }
        var distinct: [String: Int64] = [:]
        for entry in plan.entries {
            try entry.exercises.forEach { exercise in
                if case .stored(let gif)? = results[exercise.id] { distinct[gif.sha256] = gif.bytes }
            }
        }
        let hashes = distinct.keys.sorted()
        let layout = tools.layout
        let records = try await BlockingWork.run("gifpack.webp") {
            try hashes.map { hash in (hash, try cache.ensure(sha256: hash, blobPath: layout.blobPath(sha256: hash))) }
        }
        var summary = report.webp ?? BuildReport.WebPSummary()
        for (hash, record) in records {
            summary.add(record, gifBytes: distinct[hash] ?? 0)
        }
        summary.encoded = cache.encodedCount
        report.webp = summary
        let byHash = Dictionary(uniqueKeysWithValues: records)
        var source = sourceDescription
        (source.baseURL, source.resolution, source.resolutions, source.formats) = (nil, resolution, nil, nil)
        let maker = FormatPackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames, webp: cache,
            placeholders: tools.placeholders, source: source)
        var descriptions: [PackDescription] = []
        for entry in plan.entries {
            let name = FormatPackMaker.name(pack: entry.spec.name, resolution: resolution)
            let state = tools.state
            let (description, outcome) = try await BlockingWork.run("gifpack.webp-pack") {
                let history = PackMaker.History(references: indexes.packs(named: name), recorded: try state.writtenPacks(pack: name))
                return try maker.make(entry, resolution: resolution, results: results, records: byHash, history: history)
            }
            descriptions.append(description)
            report.packs.append(.init(description, outcome: outcome.rawValue, exercises: entry.exercises.count))
            observer?(.packFinished(report.packs[report.packs.count - 1]))
        }
        return descriptions
    }
}

extension BuildReport.WebPSummary {
    /// Counts one GIF's rendition.
    mutating func add(_ record: WebPCache.Record, gifBytes: Int64) {
        gifs += 1
        outcomes[record.outcome, default: 0] += 1
        self.gifBytes += gifBytes
        renditionBytes += record.webpBytes ?? gifBytes
        ratio = self.gifBytes > 0 ? Double(renditionBytes) / Double(self.gifBytes) : nil
        guard let mean = record.meanSSIM, let worst = record.worstSSIM else { return }
        let webps = gifs - (outcomes["gif"] ?? 0)
        meanSSIM = ((meanSSIM ?? 0) * Double(webps - 1) + mean) / Double(webps)
        worstSSIM = min(worstSSIM ?? worst, worst)
        worstSSIMDistribution[Self.bucket(worst), default: 0] += 1
    }

    static func bucket(_ ssim: Double) -> String {
        switch ssim {
        case ..<0.98: "<0.98"
        case ..<0.99: "0.98-0.99"
        case ..<0.995: "0.99-0.995"
        case ..<0.999: "0.995-0.999"
        default: ">=0.999"
        }
    }
}

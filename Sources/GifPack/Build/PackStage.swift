import Foundation

extension BuildPipeline {
    /// The pack stage: each pack kept or assembled as decided, from frames the verify stage
    /// checked, with its posters pack made beside it; every pack reported as it is finished.
    func packStage(
        _ plan: PackPlan, decided: DecidedPacks, tools: GIFTools, posters: Bool, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> [PackDescription] {
        let maker = packMaker(tools)
        let results = decided.results
        var descriptions: [PackDescription] = []
        for (entry, decision) in zip(plan.entries, decided.decisions) {
            // The posters pack is made on its own thread while the pack is assembled: it needs
            // only the pack's distinct GIFs, which the results already give, and the second core
            // would otherwise sit idle after the last download.
            let postersWork = posters ? startPosters(entry, results: results, tools: tools, indexes: indexes) : nil
            var description: PackDescription, outcome: PackMaker.Outcome
            do {
                switch decision {
                case .current(let current): (description, outcome) = (current, .unchanged)
                case .assemble(let content):
                    (description, outcome) = try await BlockingWork.run { try maker.assemble(content, results: results) }
                }
            } catch {
                // Whatever the posters thread does now, it finishes before the build ends.
                _ = await postersWork?.result
                throw error
            }
            if let (posters, postersOutcome) = try await postersWork?.value {
                description.posters = posters
                if postersOutcome == .written { report.posterPacksPublished.append(posters.file) }
            }
            descriptions.append(description)
            report.packs.append(.init(description, outcome: outcome.rawValue, exercises: entry.exercises.count))
            observer?(.packFinished(report.packs[report.packs.count - 1]))
        }
        report.gifs.placeholdersDerived = tools.placeholders.derivedCount
        return descriptions
    }

    /// The posters pack of `entry`, made in a task of its own; nil when the manifest wants none.
    private func startPosters(
        _ entry: PackPlan.Entry, results: FetchResults, tools: GIFTools,
        indexes: KnownIndexes
    ) -> Task<(PosterPackDescription, PackMaker.Outcome), any Error>? {
        guard !manifest.output.posterSizes.isEmpty else { return nil }
        let posterMaker = PosterPackMaker(
            outputDirectory: options.outputDirectory, frames: tools.frames,
            placeholders: tools.placeholders)
        let (name, state) = (entry.spec.name, tools.state)
        return Task {
            var distinct: Set<String> = []  // a few thousand GIFs, however many exercises share them
            try entry.exercises.forEach { exercise in
                if case .stored(let gif)? = results[exercise.id] { distinct.insert(gif.sha256) }
            }
            let hashes = distinct.sorted()
            let references = [
                indexes.local?.pack(named: name)?.posters,
                indexes.previous?.index.pack(named: name)?.posters
            ].compactMap { $0 }
            return try await BlockingWork.run("gifpack.posters") {
                try posterMaker.make(
                    pack: name, gifHashes: hashes, references: references,
                    recorded: try state.writtenPacks(pack: PosterPackMaker.name(forPack: name)))
            }
        }
    }

    /// The index stage: the index of the packs (written last, atomically, only when its
    /// bytes change, signed when the manifest says so), and every listed version recorded as
    /// written in the state.
    func indexStage(
        _ descriptions: [PackDescription], renditionPacks: [PackDescription], formatPacks: [PackDescription] = [],
        state: BuildState, indexes: KnownIndexes,
        into report: inout BuildReport
    ) async throws -> PackIndex {
        let index = PackIndex(
            generator: options.generator, source: sourceDescription, packs: descriptions,
            renditionPacks: renditionPacks, formatPacks: formatPacks)
        let indexWriter = IndexWriter(outputDirectory: options.outputDirectory)
        let (signing, now) = (manifest.signing, options.now ?? Date())
        report.index = try await BlockingWork.run {
            let summary = try indexWriter.write(
                index, localIndex: indexes.local, signing: signing, previous: indexes.previous,
                state: state, now: now)
            // Every listed version counts as written from now on (earlier records are kept as they are).
            for description in descriptions + renditionPacks + formatPacks {
                try state.recordWritten(
                    pack: description.name, version: description.version, file: description.file,
                    sha256: description.sha256, contentDigest: description.contentDigest, at: now)
                if let posters = description.posters {
                    try state.recordWritten(
                        pack: posters.name, version: posters.version, file: posters.file,
                        sha256: posters.sha256, contentDigest: posters.contentDigest, at: now)
                }
            }
            return summary
        }
        return index
    }

    /// The prune stage: what nothing needs any more (see ``Pruner``).
    func pruneStage(_ index: PackIndex, cache: OpenedCache) async throws -> Pruner.Result {
        let pruner = Pruner(outputDirectory: options.outputDirectory, layout: cache.layout, keep: manifest.output.keepVersions)
        let state = cache.state
        return try await BlockingWork.run { try pruner.prune(index: index, state: state) }
    }

    /// The status and message of a build that went through every stage.
    func conclude(_ report: inout BuildReport) {
        let newVersions = report.packs.filter { $0.outcome == PackMaker.Outcome.written.rawValue }.count
        let stillMissing = report.gifs.missing
        report.exitStatus = stillMissing > 0 ? .partial : .success
        report.message =
            newVersions == 0
            ? "nothing changed: \(report.packs.count) pack(s) already current"
            : "wrote \(newVersions) new pack version(s) of \(report.packs.count)"
        if newVersions == 0, let summary = report.index, summary.signed, summary.written, let sequence = summary.sequence {
            report.message += "; index signed anew (sequence \(sequence), expires \(summary.expires ?? "?"))"
        }
        if stillMissing > 0 { report.message += "; \(stillMissing) exercise(s) have no GIF" }
        concludeRenditions(&report)
        if !report.damagedBlobs.isEmpty {
            report.message += "; \(report.damagedBlobs.count) damaged cached GIF(s) were downloaded again"
        }
    }
}

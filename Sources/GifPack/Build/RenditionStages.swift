import Foundation

extension BuildPipeline {
    /// The fetch stage of every resolution in the manifest's order: the first for every exercise
    /// before the next starts, so a quota or budget that runs out takes the sharper renditions, never
    /// the essential one. Each resolution's counts go to ``BuildReport/renditions`` (``BuildReport/gifs``
    /// keeps the first's). A stop ends the build with what it fetched kept in the cache and state;
    /// a quota or budget stop after the first resolution was fetched whole comes back as
    /// ``FetchedRenditions/stop``, with the results of the resolutions before it. The first
    /// resolution's fetch goes on from `early`'s (the GIFs asked for while the list arrived).
    func fetchRenditions(
        _ renditions: [RenditionPlan], tools: GIFTools, early: EarlyFetch?,
        into report: inout BuildReport
    ) async throws -> FetchedRenditions {
        var all: [FetchResults] = []
        for rendition in renditions {
            guard !rendition.plan.entries.isEmpty else {
                all.append(FetchResults())
                continue
            }
            let tools = tools.at(rendition.resolution)
            if renditions.count > 1, let pixels = rendition.resolution.pixels {
                observer?(.renditionStarted(resolution: pixels, position: all.count + 1, count: renditions.count))
            }
            do {
                all.append(
                    try await withCounts(of: rendition, among: renditions.count, report: &report) { report in
                        try await fetchStage(rendition.plan.wanted, tools: tools, early: rendition.isFirst ? early : nil, into: &report)
                    })
            } catch let stop as BuildEnded where !all.isEmpty && stop.status == .quotaExhausted {
                return FetchedRenditions(results: all, stop: stop)
            }
        }
        return FetchedRenditions(results: all, stop: nil)
    }

    /// Whether a build whose fetch `stop`ped in a later resolution writes the resolutions before
    /// it: only when neither index (the output's, `--previous-index`) lists a pack of a resolution
    /// the stop leaves out, so the stop never takes a rendition away from apps (that index then
    /// stays as it is, whole), and some pack takes those resolutions.
    func writesBefore(_ stop: FetchedRenditions, renditions: [RenditionPlan], indexes: KnownIndexes) -> Bool {
        guard renditions.prefix(stop.results.count).contains(where: { !$0.plan.entries.isEmpty }) else { return false }
        let waiting = Set(renditions.dropFirst(stop.results.count).compactMap(\.resolution.pixels))
        let listed = [indexes.local, indexes.previous?.index].compactMap { $0 }.flatMap(\.allPacks)
        return !listed.contains { $0.resolution.map(waiting.contains) ?? false }
    }

    /// The status and message of a build whose fetch stopped in a later resolution and wrote
    /// the resolutions before it: the stop's status (5), what was written, what waits.
    func concludeStopped(_ stop: BuildEnded, renditions: [RenditionPlan], fetched: Int, into report: inout BuildReport) {
        let newVersions = report.packs.filter { $0.outcome == PackMaker.Outcome.written.rawValue }.count
        let pixels = { (renditions: ArraySlice<RenditionPlan>) in
            renditions.compactMap(\.resolution.pixels).map { "\($0) px" }.joined(separator: ", ")
        }
        let reason = report.stopReason.map { "\($0)" } ?? "the fetch stopped"
        let skipped = report.notAttempted.map { "; \($0.sentence)" } ?? ""
        let missing = report.gifs.missing > 0 ? ", \(report.gifs.missing) exercise(s) without a GIF" : ""
        report.exitStatus = stop.status
        report.message =
            "\(reason)\(skipped); wrote \(pixels(renditions.prefix(fetched))), fetched whole "
            + "(\(newVersions) new pack version(s) of \(report.packs.count)\(missing)); \(pixels(renditions.dropFirst(fetched))) "
            + "not written. Every GIF fetched so far is kept, and the next run goes on from there"
    }

    /// Each resolution's packs decided, verified and made: the first's (``PackIndex/packs``, with
    /// posters) and the others' (``PackIndex/renditionPacks``). A pack of another resolution none of
    /// whose exercises has a GIF at it is not made: the index lists the renditions the build got.
    /// `results` may hold fewer resolutions than `renditions` (a stop): only theirs are packed.
    func packRenditions(
        _ renditions: [RenditionPlan], results: [FetchResults], tools: GIFTools, indexes: KnownIndexes,
        into report: inout BuildReport
    )
        async throws -> (packs: [PackDescription], renditionPacks: [PackDescription], formatPacks: [PackDescription])
    {
        var (packs, renditionPacks, formatPacks): ([PackDescription], [PackDescription], [PackDescription]) = ([], [], [])
        for (rendition, results) in zip(renditions, results) {
            var plan = rendition.plan
            if !rendition.isFirst {
                plan.entries = try plan.entries.filter { entry in
                    try entry.exercises.contains { if case .stored? = results[$0.id] { true } else { false } }
                }
            }
            guard !plan.entries.isEmpty else { continue }
            let tools = tools.at(rendition.resolution)
            let decided = try await withCounts(of: rendition, among: renditions.count, report: &report) { report in
                try await describeAndVerify(plan, results: results, tools: tools, indexes: indexes, into: &report)
            }
            var descriptions = try await packStage(
                plan, decided: decided, tools: tools, posters: rendition.isFirst,
                indexes: indexes, into: &report)
            formatPacks += try await webpStage(plan, results: results, tools: tools, indexes: indexes, into: &report)
            if renditions.count > 1 {
                for position in descriptions.indices { descriptions[position].resolution = rendition.resolution.pixels }
                if let position = report.renditions?.firstIndex(where: { $0.resolution == rendition.resolution.pixels }) {
                    report.renditions?[position].packs = descriptions.count
                }
            }
            if rendition.isFirst { packs = descriptions } else { renditionPacks += descriptions }
        }
        return (packs, renditionPacks, formatPacks)
    }

    /// Runs a stage of `rendition` with ``BuildReport/gifs`` holding that resolution's counts, and
    /// records them in ``BuildReport/renditions`` (when there are several resolutions) however the
    /// stage ends.
    private func withCounts<T>(
        of rendition: RenditionPlan, among count: Int, report: inout BuildReport,
        _ stage: (inout BuildReport) async throws -> T
    ) async throws -> T {
        let first = report.gifs
        if !rendition.isFirst {
            report.gifs = report.renditions?.first { $0.resolution == rendition.resolution.pixels }?.gifs ?? BuildReport.GIFSummary()
        }
        report.gifs.wanted = rendition.plan.wanted.count
        func finish(_ report: inout BuildReport) {
            if count > 1, let pixels = rendition.resolution.pixels {
                var summary = BuildReport.RenditionSummary(resolution: pixels, gifs: report.gifs)
                summary.planCeiling = report.gifs.rejectedByReason[RejectionReason.planCeiling.code] ?? 0
                var renditions = report.renditions ?? []
                if let position = renditions.firstIndex(where: { $0.resolution == pixels }) {
                    summary.packs = renditions[position].packs
                    renditions[position] = summary
                } else {
                    renditions.append(summary)
                }
                report.renditions = renditions
            }
            if !rendition.isFirst { report.gifs = first }
        }
        do {
            let value = try await stage(&report)
            finish(&report)
            return value
        } catch {
            finish(&report)
            throw error
        }
    }

    /// At a resolution other than the first, a GIF of another size (the API plan's ceiling serves
    /// a smaller one, still 200) is never packed under that resolution: it becomes a
    /// `plan-ceiling` rejection, and its exercise keeps its other renditions. The sizes served are
    /// recorded (``BuildReport/GIFSummary/otherSizesServed``) for the message.
    func refuseOtherSizes(
        _ results: inout FetchResults, wanted: ExerciseList, resolution: Resolution,
        into report: inout BuildReport
    ) throws(StateUnreadable) {
        guard let pixels = resolution.pixels else { return }
        var sides = Set(report.gifs.otherSizesServed ?? [])
        var exercises = wanted.makeIterator()
        while let exercise = try exercises.nextInFetch() {
            guard case .stored(let gif)? = results[exercise.id], gif.resolutionMismatch else { continue }
            let side = max(gif.info.width, gif.info.height)
            sides.insert(side)
            results[exercise.id] = .rejected(
                FetchRejection(
                    exerciseID: exercise.id, url: exercise.imageURL, reason: .planCeiling,
                    detail: "served \(gif.info.width)×\(gif.info.height), not \(pixels) px"
                        + (side < pixels ? ": the API plan's resolution limit" : ""),
                    status: 200))
        }
        report.gifs.otherSizesServed = sides.isEmpty ? nil : sides.sorted()
    }

    /// The message and status of a build with several resolutions: one line per resolution some
    /// exercises lack, saying what was served when the API served another size than asked (the
    /// size asked for and the sizes got, naming the plan's limit only when every one was smaller),
    /// and exit 3 unless `--allow-missing-renditions`.
    func concludeRenditions(_ report: inout BuildReport) {
        guard let renditions = report.renditions else { return }
        var missing = 0
        for rendition in renditions.dropFirst() where rendition.gifs.missing > 0 {
            missing += rendition.gifs.missing
            let kept =
                rendition.packs == 0
                ? "no \(rendition.resolution) px pack was made"
                : "those exercises keep their other renditions"
            if rendition.planCeiling > 0 {
                let sides = rendition.gifs.otherSizesServed ?? []
                let smaller = !sides.isEmpty && sides.allSatisfy { $0 < rendition.resolution }
                report.message +=
                    "; \(rendition.resolution) px: the API served \(rendition.planCeiling) of \(rendition.gifs.wanted) "
                    + "GIFs at \(Self.pixelList(sides)), not the \(rendition.resolution) px asked for"
                    + (smaller ? ", the limit of its plan (BASIC serves 180 px only, PRO up to 360 px)" : "") + "; \(kept)"
            } else {
                report.message += "; \(rendition.gifs.missing) exercise(s) have no \(rendition.resolution) px rendition; \(kept)"
            }
        }
        if missing > 0, report.exitStatus == .success, !options.allowMissingRenditions {
            report.exitStatus = .partial
            report.message += " (--allow-missing-renditions: exit 0)"
        }
    }

    /// "180 px", "180 and 720 px", "180, 360 and 720 px"; "another size" when none was recorded.
    static func pixelList(_ sides: [Int]) -> String {
        guard let last = sides.last else { return "another size" }
        let numbers = sides.map(String.init)
        return (sides.count == 1 ? numbers[0] : numbers.dropLast().joined(separator: ", ") + " and " + String(last)) + " px"
    }
}

/// The fetch of every resolution: the results of those fetched (all of them, or those before a
/// quota or budget ``stop`` in a resolution after the first).
struct FetchedRenditions: Sendable {
    var results: [FetchResults]
    var stop: BuildEnded?
}

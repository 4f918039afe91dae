import Foundation
import GifPackFormat
import GifPackIndexReader

/// The disk part of an install (``PackInstaller/install(from:packs:client:)``), on a dedicated
/// thread: the packs' checks, the staging of the new generation on every core
/// (``GenerationBuilder/stageEntries(_:)``) with a local pack's SHA-256 checked beside it, the
/// switch, and the report.
extension PackInstaller {
    /// Plans, stages and switches in a new generation. Runs on a dedicated thread; stops at the
    /// checkpoints of `cancellation` until the switch.
    func installGeneration(_ packs: [DownloadedPack], posters: [PosterSource], generations: CacheGenerations,
                                   indexSequence: Int?, indexRecord: InstalledIndex?,
                                   cancellation: InstallCancellation, selection: RenditionSelection? = nil,
                                   clock: InstallPhaseClock) throws(PackClientError) -> InstallReport {
        try cancellation.checkpoint(.verify)
        // A local pack's SHA-256 is checked on a thread of its own while the pack is staged; a file
        // that is not the index's is what the install reports, whatever else went wrong with it.
        let checksums = ParallelWork.start(name: "gifpack.pack-checksum") {
            Result { () throws(PackClientError) in
                for pack in packs where pack.checksumPending { try PackDownloader.verify(pack.path, pack: pack.pack) }
            }
        }
        let staged: Staged
        do {
            staged = try stageGeneration(packs, posters: posters, generations: generations, indexSequence: indexSequence,
                                         indexRecord: indexRecord, cancellation: cancellation, selection: selection, clock: clock)
        } catch {
            try checksums.wait().get()
            throw error
        }
        let (current, previous, plan, posterPlan, generation) = (staged.current, staged.previous, staged.plan,
                                                                 staged.posterPlan, staged.generation)
        // What is left of a local pack's SHA-256 (checked beside the staging) is a check: decode.
        clock.enter(.decode)
        do { try checksums.wait().get() } catch {
            FileOps.remove(generations.generationPath(generation))
            throw error
        }
        // The commit point: cancelled before the rename, nothing changed; after it, the install is done.
        clock.enter(.switch)
        do {
            try cancellation.checkpoint(.switch)
            try generations.switchTo(generation)
        } catch {
            FileOps.remove(generations.generationPath(generation))
            throw error
        }
        cancellation.passed(.switched)
        // Only now, with the new generation in place: older generations and leftovers of interrupted installs.
        generations.removeStale(keeping: Set([generation] + [current].compactMap { $0 }))
        clock.enter(.none)

        let old = previous?.manifest.exercises ?? [:]
        let new = plan.exercises
        let counts = staged.counts
        let changes = IndexDiff.exerciseChanges(from: old, to: new)
        return InstallReport(
            cacheDirectory: cacheDirectory, generationDirectory: generations.generationPath(generation),
            generation: generation, layout: layout, packs: plan.packs, exercises: new.count,
            placeholders: new.values.filter { $0 == nil }.count, gifsWritten: counts.gifsWritten,
            gifsReused: counts.gifsReused, linksCreated: counts.linksCreated, bytesWritten: counts.bytesWritten,
            bytesDownloaded: packs.reduce(0) { $0 + $1.bytesTransferred } + posters.reduce(0) { $0 + ($1.file?.bytesTransferred ?? 0) },
            added: changes.added, removed: changes.removed, changed: changes.changed,
            isUnchanged: false, posterPacks: posterPlan?.packs ?? [], postersWritten: counts.postersWritten,
            postersReused: counts.postersReused, gifChecksSkipped: counts.checksSkipped)
    }

    /// A generation planned and staged, moved to its final name but not switched in.
    struct Staged {
        let current: Int?
        let previous: GenerationBuilder.Previous?
        let plan: InstallPlan
        let posterPlan: PosterInstallPlan?
        let generation: Int
        let counts: GenerationBuilder.Counts
    }

    /// Checks the packs' structure (``InstallPlan``), stages the new generation (``GenerationBuilder``)
    /// and gives it its final name; on a failure nothing of it is left.
    private func stageGeneration(_ packs: [DownloadedPack], posters: [PosterSource], generations: CacheGenerations,
                                 indexSequence: Int?, indexRecord: InstalledIndex?,
                                 cancellation: InstallCancellation, selection: RenditionSelection?,
                                 clock: InstallPhaseClock) throws(PackClientError) -> Staged {
        let current = try generations.current()
        let previous: GenerationBuilder.Previous? = try current.flatMap { generation throws(PackClientError) in
            let directory = generations.generationPath(generation)
            return try InstallManifest.read(directory: directory).map { .init(directory: directory, manifest: $0) }
        }
        let plan = try InstallPlan(packs: packs, limits: limits, selection: selection)
        let posterPlan = withPosters ? try PosterInstallPlan(sources: posters, previous: previous) : nil
        let generation = CacheGenerations.next(after: try generations.numbersInUse() + [current].compactMap { $0 })
        let staging = "\(generations.storePath)/\(CacheGenerations.stagingName(generation))"
        var builder = GenerationBuilder(staging: staging, layout: layout, previous: previous)
        builder.verifiedSequence = indexSequence
        builder.preferredPixelSize = preferredPixelSize
        builder.formats = FormatChoice.recorded(formats)
        builder.indexRecord = indexRecord
        builder.cancellation = cancellation
        builder.progress = progress
        builder.phaseClock = clock
        if !keepDownloads {
            // Deleted before the sync, not after the switch: the sync would write them first.
            builder.discardBeforeSync = packs.filter(\.isCopy).map(\.path) + posters.compactMap(\.file).filter(\.isCopy).map(\.path)
        }
        progress?.installing()
        do {
            try builder.build(plan, posters: posterPlan, generation: generation)
            clock.enter(.switch)
            try FileOps.move(staging, to: generations.generationPath(generation))
        } catch {
            FileOps.remove(staging)
            throw error
        }
        return Staged(current: current, previous: previous, plan: plan, posterPlan: posterPlan, generation: generation,
                      counts: builder.counts)
    }
}

import Foundation
import GifPackHTTP

/// The cache a build holds: its directories claimed and locked, and its state open.
struct OpenedCache {
    let layout: CacheLayout
    let state: BuildState
    /// The size of the last catalog (nil before the first run): the catalog's pages are fetched
    /// in parallel without a request past the end, and the shrink guard compares with it.
    let expectedCount: Int?
    /// What was done about a damaged state, if anything.
    let recovery: StateRecovery?
    private let locks: [BuildLock]

    init(layout: CacheLayout, state: BuildState, expectedCount: Int?, recovery: StateRecovery?, locks: [BuildLock]) {
        (self.layout, self.state, self.expectedCount, self.recovery, self.locks) = (layout, state, expectedCount, recovery, locks)
    }

    /// Closes the state, then frees the locks (whatever still holds this value, the locks go with
    /// the last reference; the state is closed before).
    func close() {
        state.close()
        withExtendedLifetime(locks) {}
    }
}

/// The indexes a build compares with: the live one (`--previous-index`) and the output
/// directory's own, read before the first request.
struct KnownIndexes: Sendable {
    var previous: PreviousIndex?
    var local: PackIndex?

    /// The descriptions of the pack `name` in either index (the output's, `--previous-index`).
    func packs(named name: String) -> [PackDescription] {
        [local?.pack(named: name), previous?.index.pack(named: name)].compactMap { $0 }
    }
}

extension BuildPipeline {
    /// Claims and locks the output and cache directories, and opens (or recovers) the state.
    func openCache() async throws -> OpenedCache {
        let layout = CacheLayout(root: options.cacheDirectory)
        try claimDirectories()
        let locks = try BuildLock.acquire([options.outputDirectory, options.cacheDirectory])
        let sourceKey = manifest.source.stateKey
        let (state, expectedCount, recovery) = try await BlockingWork.run {
            try layout.prepare()
            let (state, recovery) = try StateOpener.open(layout: layout, source: sourceKey)
            return (state, try state.lastCatalogCount(), recovery)
        }
        return OpenedCache(layout: layout, state: state, expectedCount: expectedCount, recovery: recovery, locks: locks)
    }

    /// The live index first: without it the build cannot know which names and sequence are taken.
    /// Then the output directory's own index (which it holds under the lock), read before the first
    /// request: an unreadable one stops the build before any quota is spent. Its exercise lists
    /// are let go once it is checked.
    func readIndexes(client: HTTPClient) async throws -> KnownIndexes {
        let previous: PreviousIndex? =
            if let location = options.previousIndex {
                try await PreviousIndex.load(location, client: client)
            } else { nil }
        let indexPath = self.indexPath
        let local = try await BlockingWork.run("gifpack.index") { () throws(OutputIndexUnreadable) -> PackIndex? in
            guard var index = try BuilderIndexReader.readOutputIndex(indexPath) else { return nil }
            // Checked whole, then kept without its exercise lists (about 1 MB at 100,000 exercises
            // for the whole build): the catalog gives them, and the index writer compares its bytes.
            for at in index.packs.indices { index.packs[at].exercises = [] }
            for at in index.renditionPacks?.indices ?? 0..<0 { index.renditionPacks?[at].exercises = [] }
            return index
        }
        return KnownIndexes(previous: previous, local: local)
    }

    /// Refuses an output or cache directory that is neither empty nor gifpack's, and marks the
    /// ones it takes (see ``DirectoryClaim``), before anything is written, created or deleted.
    func claimDirectories() throws {
        func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        if canonical(options.outputDirectory) == canonical(options.cacheDirectory) {
            try DirectoryClaim.claim(options.outputDirectory, roles: [.output, .cache])
        } else {
            // Both are checked before either is created or marked.
            try DirectoryClaim.check(options.outputDirectory, roles: [.output])
            try DirectoryClaim.check(options.cacheDirectory, roles: [.cache])
            try DirectoryClaim.claim(options.outputDirectory, roles: [.output])
            try DirectoryClaim.claim(options.cacheDirectory, roles: [.cache])
        }
    }
}

/// Times the build's stages into the report (`stageSeconds`) and tells the observer as each
/// one starts.
struct StageClock {
    let clock: ContinuousClock
    let observer: BuildObserver?
    private var started: ContinuousClock.Instant
    private var stages: IndexingIterator<[BuildStage]>
    /// The stage running (the last one once every stage has ended).
    private(set) var current: BuildStage = .catalog

    /// Starts the first stage.
    init(clock: ContinuousClock, observer: BuildObserver?) {
        self.clock = clock
        self.observer = observer
        started = clock.now
        stages = BuildStage.allCases.makeIterator()
        if let first = stages.next() {
            current = first
            observer?(.stageStarted(first))
        }
    }

    /// Ends `stage` and starts the next.
    mutating func end(_ stage: BuildStage, into report: inout BuildReport) {
        record(stage, into: &report)
        started = clock.now
        if let next = stages.next() {
            current = next
            observer?(.stageStarted(next))
        }
    }

    /// Records the time of `stage` so far (a stage that ended the build).
    func record(_ stage: BuildStage, into report: inout BuildReport) {
        report.stageSeconds[stage.rawValue] = (clock.now - started).seconds
    }
}

import GifPackFormat
import Foundation
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// Fills a staging directory with one complete generation of the cache.
///
/// Every GIF entry of every pack is read from its frame and checked (header, capped size,
/// SHA-256, then decoded and compared with its catalog record, as `verify` does), so a pack is
/// refused for any hostile entry, even one whose GIF needs no writing.
/// For each GIF an exercise uses: if the previous generation holds a file with that hash (per its
/// manifest, and confirmed by hashing the file) it is hard-linked in, so an upgrade leaves
/// unchanged files alone (same inode, same mtime) and the pack entry is only verified — and not
/// decoded again when the previous generation's manifest records that it checked those bytes
/// against the same catalog record (``InstallManifest/checkedGIFs``); otherwise
/// the GIF is decompressed from its frame straight into a new file, which counts only once its
/// SHA-256 matched. Further names for the same GIF (exercises sharing it, `by-id`)
/// are hard links to the first. Where the file system refuses a hard link the file is copied.
/// With posters (``PosterInstallPlan``), each exercise's posters are placed the same way
/// (``placePosters(_:plan:directories:)``). The manifest (and for `by-hash` the id map) is written
/// last, and everything new is made durable at once (``Durability``).
///
/// ```swift
/// var builder = GenerationBuilder(staging: dir, layout: .byID, previous: previous)
/// try builder.build(plan, generation: 8)
/// builder.counts.gifsWritten
/// ```
struct GenerationBuilder {
    struct Counts: Equatable, Sendable {
        var gifsWritten = 0
        var gifsReused = 0
        var linksCreated = 0
        var bytesWritten: Int64 = 0
        var postersWritten = 0
        var postersReused = 0
        /// Kept GIFs not decoded again: the previous generation checked the same bytes against the
        /// same catalog record.
        var checksSkipped = 0

        mutating func add(_ other: Counts) {
            gifsWritten += other.gifsWritten
            gifsReused += other.gifsReused
            linksCreated += other.linksCreated
            bytesWritten += other.bytesWritten
            postersWritten += other.postersWritten
            postersReused += other.postersReused
            checksSkipped += other.checksSkipped
        }
    }

    /// The generation an install replaces: its directory and manifest.
    struct Previous {
        let directory: String
        let manifest: InstallManifest
    }

    let staging: String
    let layout: InstallLayout
    let previous: Previous?
    /// The sequence of the index the packs came from, when trusted keys verified it (nil without
    /// keys). The manifest records the floor: this or the previous generation's, whichever is higher.
    var verifiedSequence: Int?
    /// The remote index the generation comes from (``InstallManifest/index``).
    var indexRecord: InstalledIndex?
    /// The pixel size renditions were chosen for (``InstallManifest/preferredPixelSize``).
    var preferredPixelSize: Int?
    /// The image formats the install preferred (``InstallManifest/formats``).
    var formats: [ImageFormat]?
    /// Looked at before each entry: a cancelled install stops staging (the caller removes the staging directory).
    var cancellation: InstallCancellation?
    /// Told of each GIF placed (``GIFLoader/refresh(progress:)``).
    var progress: InstallProgress?
    /// The install's phases (``InstallPhases``): decode and file writes, then sync.
    var phaseClock: InstallPhaseClock?
    var counts = Counts()
    /// Downloaded pack files the install deletes (not kept, ``PackInstaller/keepDownloads``): removed
    /// once everything is staged, right before the one sync, so their pages, still dirty, are
    /// dropped instead of written to the disk by the sync only to be deleted after the switch.
    var discardBeforeSync: [String] = []
    /// Files created (not linked) in the staging directory.
    private(set) var written: [String] = []

    init(staging: String, layout: InstallLayout, previous: Previous?) {
        self.staging = staging
        self.layout = layout
        self.previous = previous
    }

    /// Notes a file created in the staging directory (made durable with the rest).
    mutating func recordWritten(_ path: String) { written.append(path) }

    mutating func build(_ plan: InstallPlan, posters: PosterInstallPlan? = nil, generation: Int) throws(PackClientError) {
        try FileOps.makeDirectory(staging)
        if layout == .byHash { try FileOps.makeDirectory("\(staging)/gifs") }
        phaseClock?.enter(.decode)
        let stagingStart = TimeSpan.now()
        let times = StagingTimes()
        let staged = try stageEntries(plan, times: times)
        let stagingEnd = TimeSpan.now()
        phaseClock?.enter(.fileWrites)
        // The staging's wall time, split by its threads' time in file calls against all their time.
        phaseClock?.move(InstallPhaseClock.seconds(from: stagingStart, to: stagingEnd) * times.fileShare, from: .decode, to: .fileWrites)
        counts.add(staged.counts)
        written += staged.written
        let checked = staged.checked
        var directories = [staging]
        if layout == .byHash {
            let map = "\(staging)/\(InstallLayout.idMapFileName)"
            try FileOps.writeNew(map, try InstallManifest.canonicalJSON(plan.exercises, path: InstallLayout.idMapFileName))
            written.append(map)
            directories.append("\(staging)/gifs")
        }
        if posters != nil { phaseClock?.enter(.decode) }
        let posterRecords = try posters.map { posters throws(PackClientError) in
            try placePosters(posters, plan: plan, directories: &directories)
        }
        phaseClock?.enter(.fileWrites)
        try writePlaceholders(plan)
        let manifest = InstallManifest(
            generation: generation, layout: layout, packs: plan.packs, exercises: plan.exercises,
            indexSequence: InstallManifest.floor(carrying: previous?.manifest.indexSequence, verified: verifiedSequence),
            posterPacks: posters?.packs, posters: posterRecords,
            checkedGIFs: checked, index: indexRecord, preferredPixelSize: preferredPixelSize,
            placeholderGIFs: plan.basis.mapValues(\.gif), formats: formats, imageFormats: plan.imageFormats)
        let manifestPath = "\(staging)/\(InstallManifest.fileName)"
        try FileOps.writeNew(manifestPath, try manifest.encoded())
        written.append(manifestPath)
        // Every entry is staged: nothing reads the downloads again.
        for path in discardBeforeSync { Self.discard(path) }
        phaseClock?.enter(.sync)
        try Durability.flush(files: written, directories: directories)
    }

    /// Drops a download's pages unwritten, then removes it. Truncated first: the plan's readers
    /// still hold it open, so an unlink alone would leave its dirty pages for the sync to write.
    private static func discard(_ path: String) {
        if let fd = try? FileOps.openRegular(path, [.writeOnly, .truncate]) { SystemCalls.close(fd) }
        FileOps.remove(path)
    }

    /// The index's placeholders of the installed GIFs (``InstalledPlaceholders``), when it has any.
    /// A GIF of a rendition beyond the first keeps its own size and timing but shows the BlurHash
    /// and average colour of its exercise's first-resolution GIF, so a cell looks the same whichever
    /// rendition the app installed.
    private mutating func writePlaceholders(_ plan: InstallPlan) throws(PackClientError) {
        var gifs: [String: GIFPlaceholder] = [:]
        for source in plan.entries where plan.idsByHash[source.entry.sha256] != nil {
            guard var placeholder = source.entry.placeholder else { continue }
            if let first = plan.basis[source.entry.sha256]?.placeholder {
                placeholder.blurHash = first.blurHash
                placeholder.averageColor = first.averageColor
            }
            gifs[source.entry.sha256] = placeholder
        }
        guard !gifs.isEmpty else { return }
        let path = "\(staging)/\(InstalledPlaceholders.fileName)"
        try FileOps.writeNew(path, try InstalledPlaceholders(gifs: gifs).encoded())
        written.append(path)
    }

    /// True when `path` is a regular file of `size` bytes hashing to `sha256`.
    static func holds(_ path: String, sha256: String, size: Int64) -> Bool {
        guard FileOps.regularFileSize(path) == size, let digest = try? StreamingSHA256.file(at: path) else { return false }  // unreadable: not reusable
        return digest.sha256 == sha256
    }

    /// A hard link from `source` to `target`, or a copy (fsynced) where links are not possible.
    static func linkOrCopy(_ source: String, to target: String) throws(PackClientError) {
        if SystemCalls.link(source, to: target) == 0 { return }
        let code = Errno.current
        let noLink: [Errno] = [.improperLink, .notPermitted, .tooManyLinks, .notSupported, .notSupportedOnSocket, .permissionDenied]
        guard noLink.contains(code) else {
            throw .posix(target, "link \(source) to", code.code)
        }
        try copy(source, to: target)
    }

    private static func copy(_ source: String, to target: String) throws(PackClientError) {
        let fd = try FileOps.openRegular(source, .readOnly)
        defer { SystemCalls.close(fd) }
        let file = try FileOps.client { () throws(FileSystemError) in try NewFile(path: target) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch { throw .posix(source, "read", error.code) }
            if got == 0 { break }
            try FileOps.client { () throws(FileSystemError) in try file.append(UnsafeRawBufferPointer(rebasing: chunk[0..<got])) }
        }
        try FileOps.client { () throws(FileSystemError) in try file.finish(sync: true) }
    }
}

extension GenerationBuilder.Previous {
    /// Hash → a file of this generation holding it (per the manifest; not checked).
    var filesByHash: [String: String] {
        var files: [String: String] = [:]
        for (id, hash) in manifest.exercises.sorted(by: { $0.key < $1.key }) {
            guard let hash, files[hash] == nil, ExerciseID.isValid(id), SafePath.isSHA256(hash) else { continue }
            files[hash] = "\(directory)/\(manifest.layout.relativePath(exercise: id, sha256: hash, format: manifest.imageFormat(for: hash)))"
        }
        return files
    }
}

/// The GIFs of a generation, staged on every core: ``GenerationBuilder/stageEntries(_:)``.
///
/// Which entry places which GIF is decided first, in entry order and alone (cheap): the first
/// present entry of each hash an exercise uses places it; a later entry of the same hash is only
/// verified; an entry a sparse upgrade did not fetch is skipped when a present one places its GIF.
/// The work of each entry — reading its frame, decompressing, SHA-256, walking the GIF against its
/// catalog record, writing its file and links — is independent of every other entry's (one zstd
/// frame per entry; a hash's names belong to its one placing entry), so ``ParallelWork`` runs it on
/// the calling thread and the other cores, taking entries in order from one queue. A GIF is
/// decompressed into memory, checked there, and written with one `write`: one pass over its bytes.
/// A GIF that a ``PackFollower`` already decoded, checked against the same record and wrote while
/// its pack downloaded is moved into place instead (one `rename(2)`).
///
/// The queue looks at the cancellation (``InstallStage/stage``) once per entry, under its lock, so
/// the checkpoints stay one per entry and in order; after a failure or a cancellation no further
/// entry starts, the entries under way finish, and the failure of the lowest entry is thrown:
/// the one a one-by-one staging would have stopped at.
extension GenerationBuilder {
    /// What staging every entry made: counts, files created, catalog records checked by hash.
    struct Staged {
        var counts = Counts()
        var written: [String] = []
        var checked: [String: GIFMetadata] = [:]
    }

    /// What one entry does.
    enum Action: Sendable {
        /// Nothing: another entry places this GIF.
        case skip
        /// Verified (read, hashed, walked), not written: its GIF is placed by another entry or used by no exercise.
        case verify
        /// Places the GIF under `names` (relative to the staging directory), from `reusable` (a
        /// previous generation's file) when it still holds it, else from the entry.
        case place(names: [String], reusable: String?, previouslyChecked: GIFMetadata?)
    }

    /// What placing one entry did.
    struct Outcome: Sendable {
        var counts = Counts()
        var written: String?
        var checked: GIFMetadata?
        /// Thread time in the calls that create, move or link its files.
        var fileNanoseconds: UInt64 = 0
    }

    /// `times` gets each entry's thread time, and its part in file calls (``InstallPhases/fileWrites``).
    func stageEntries(_ plan: InstallPlan, times: StagingTimes? = nil) throws(PackClientError) -> Staged {
        let actions = Self.actions(plan, layout: layout, previous: previous)
        let queue = StagingQueue(count: actions.count, cancellation: cancellation)
        let entries = plan.entries, staging = self.staging, progress = self.progress
        ParallelWork.run(width: ParallelWork.defaultWidth, name: "gifpack.stage") {
            while let index = queue.take() {
                let start = TimeSpan.now()
                let result = Result { () throws(PackClientError) -> Outcome in
                    let outcome = try Self.stage(entries[index], action: actions[index], staging: staging)
                    if case .place = actions[index] { progress?.gifPlaced() }
                    return outcome
                }
                if case .success(let outcome) = result {
                    times?.add(files: outcome.fileNanoseconds, all: TimeSpan.now() &- start)
                }
                queue.finish(index, result)
            }
        }
        var staged = Staged()
        for (index, outcome) in try queue.outcomes().enumerated() {
            staged.counts.add(outcome.counts)
            if let path = outcome.written { staged.written.append(path) }
            if let metadata = outcome.checked { staged.checked[entries[index].entry.sha256] = metadata }
        }
        return staged
    }

    /// Each entry's action, decided in entry order.
    static func actions(_ plan: InstallPlan, layout: InstallLayout, previous: Previous?) -> [Action] {
        let reusable = previous?.filesByHash ?? [:]
        // A GIF several packs list is fetched with one of them only: it is placed from that pack's entry.
        let present = Set(plan.entries.filter(\.isPresent).map(\.entry.sha256))
        var placed = Set<String>()
        return plan.entries.map { source in
            let hash = source.entry.sha256
            if !source.isPresent, present.contains(hash), !placed.contains(hash) { return .skip }
            guard let ids = plan.idsByHash[hash], placed.insert(hash).inserted else {
                return source.isPresent ? .verify : .skip
            }
            let format = source.entry.imageFormat
            let names =
                layout == .byID
                ? ids.map { layout.relativePath(exercise: $0, sha256: hash, format: format) }
                : [layout.relativePath(exercise: ids[0], sha256: hash, format: format)]
            return .place(names: names, reusable: reusable[hash], previouslyChecked: previous?.manifest.checkedGIFs?[hash])
        }
    }

    /// One entry's work (any thread).
    static func stage(_ source: InstallPlan.Source, action: Action, staging: String) throws(PackClientError) -> Outcome {
        var outcome = Outcome()
        // Decoded, hashed, walked against this very record and written while the pack downloaded.
        let ready = source.ready.flatMap { $0.metadata == source.metadata ? $0 : nil }
        guard case .place(let names, let reusable, let previouslyChecked) = action else {
            if case .verify = action, ready == nil { try check(.bytes(try readAll(source)), source) }
            return outcome
        }
        let hash = source.entry.sha256
        let first = "\(staging)/\(names[0])"
        if let old = reusable, holds(old, sha256: hash, size: source.entry.location.size) {
            if source.isPresent {
                try IndexedEntry.read(
                    source.entry.location, sha256: hash, image: source.entry.imageFormat, side: source.side, pack: source.pack,
                    reader: source.reader
                ) { _ in }
            }
            try timed(&outcome) { () throws(PackClientError) in try linkOrCopy(old, to: first) }
            outcome.counts.gifsReused += 1
            // These very bytes were decoded and checked against this very record when the
            // previous generation was installed.
            if source.metadata != nil, previouslyChecked == source.metadata {
                outcome.counts.checksSkipped += 1
            } else {
                try check(.file(first), source)
            }
        } else if !source.isPresent {
            throw .unreadable(
                location: reusable ?? GIFEntry.path(forSHA256: hash),
                detail: "the previous generation no longer holds this GIF intact and the sparse upgrade did not fetch it; install again")
        } else {
            if let ready {
                try timed(&outcome) { () throws(PackClientError) in try FileOps.move(ready.path, to: first) }
            } else {
                // Decompressed and hashed into memory, walked there, written once (made durable later with the rest).
                let bytes = try readAll(source)
                try check(.bytes(bytes), source)
                try timed(&outcome) { () throws(PackClientError) in try FileOps.writeNew(first, bytes) }
            }
            outcome.written = first
            outcome.counts.gifsWritten += 1
            outcome.counts.bytesWritten += source.entry.location.size
        }
        outcome.checked = source.metadata
        for name in names.dropFirst() {
            try timed(&outcome) { () throws(PackClientError) in try linkOrCopy(first, to: "\(staging)/\(name)") }
            outcome.counts.linksCreated += 1
        }
        return outcome
    }

    /// Runs a file call, its time added to the entry's ``Outcome/fileNanoseconds``.
    private static func timed(_ outcome: inout Outcome, _ body: () throws(PackClientError) -> Void) throws(PackClientError) {
        let start = TimeSpan.now()
        defer { outcome.fileNanoseconds &+= TimeSpan.now() &- start }
        try body()
    }

    /// The entry's GIF, read through its frame with every check of ``IndexedEntry``.
    private static func readAll(_ source: InstallPlan.Source) throws(PackClientError) -> [UInt8] {
        try IndexedEntry.readAll(
            source.entry.location, sha256: source.entry.sha256, image: source.entry.imageFormat, side: source.side,
            pack: source.pack, reader: source.reader)
    }

    /// The GIF decodes and matches its catalog record (the checks `verify` runs), else the pack is refused.
    static func check(_ gif: GIFMetadataCheck.Source, _ source: InstallPlan.Source) throws(PackClientError) {
        let name = SafePath.printable(source.pack)
        if let problem = GIFMetadataCheck.problems(
            gif, metadata: source.metadata, side: source.side, format: source.entry.imageFormat, pack: name,
            entry: SafePath.printable(source.entry.location.path)
        ).first {
            throw .rejected(problem)
        }
    }
}

/// The entries of one staging, handed out in order to the threads of ``ParallelWork``, and what
/// each came to.
private final class StagingQueue: Sendable {
    private struct State {
        var next = 0
        var stopped = false
        var results: [Result<GenerationBuilder.Outcome, PackClientError>?]
    }

    private let count: Int
    private let cancellation: InstallCancellation?
    private let state: Locked<State>

    init(count: Int, cancellation: InstallCancellation?) {
        self.count = count
        self.cancellation = cancellation
        state = Locked(State(results: Array(repeating: nil, count: count)))
    }

    /// The next entry to stage; nil when every entry was handed out, after a failure, or once the
    /// install is cancelled (the checkpoint's failure is that entry's).
    func take() -> Int? {
        state.withLock { state -> Int? in
            guard !state.stopped, state.next < count else { return nil }
            let index = state.next
            state.next += 1
            do throws(PackClientError) { try cancellation?.checkpoint(.stage) } catch {
                state.results[index] = .failure(error)
                state.stopped = true
                return nil
            }
            return index
        }
    }

    func finish(_ index: Int, _ result: Result<GenerationBuilder.Outcome, PackClientError>) {
        state.withLock { state in
            state.results[index] = result
            if case .failure = result { state.stopped = true }
        }
    }

    /// Every entry's outcome in order, or the failure of the lowest entry that failed.
    func outcomes() throws(PackClientError) -> [GenerationBuilder.Outcome] {
        let all = state.withLock { $0.results }
        var outcomes: [GenerationBuilder.Outcome] = []
        outcomes.reserveCapacity(all.count)
        for result in all {
            switch result {
            case .success(let outcome)?: outcomes.append(outcome)
            case .failure(let error)?: throw error
            // Entries are handed out in order and each one handed out finishes: a missing outcome
            // comes after the failure that stopped the queue (thrown above).
            case nil: throw .cancelled
            }
        }
        return outcomes
    }
}

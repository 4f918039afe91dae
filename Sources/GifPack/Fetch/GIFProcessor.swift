import Foundation
import GifPackHTTP
import Synchronization

/// Validates, stores, precompresses and records downloaded GIFs off the Swift cooperative pool.
///
/// Decoding a GIF, fsyncing it into the blob store, compressing its pack frame and writing the
/// state database are blocking, CPU- and disk-heavy steps. They run one at a time on a dedicated
/// serial worker thread, so the fetch window is never held up by them and the second core does
/// this work while curl's thread waits on the network. Each finished GIF is recorded in the state
/// in its own transaction. `submit` returns at once; `drain()` waits for everything submitted.
///
/// ```swift
/// processor.submit(exercise: exercise, download: download, path: partPath)
/// let results = await processor.drain()
/// ```
final class GIFProcessor: Sendable {
    /// Threads taking the jobs from one queue: decoding and compressing keep the second core busy,
    /// and one thread's fsync wait overlaps the other's work; whichever is free takes the next job,
    /// so one long job (a large GIF's WebP) never leaves another thread idle behind a queue of its
    /// own. Two, at a lower priority than the threads that move requests along (see
    /// ``WorkerThread``), so a GIF build keeps its transfers going on a busy machine. When WebPs are
    /// encoded the encoder is what bounds the build: three, at normal priority, so both cores encode
    /// while one thread waits on a GIF's fsync (the first WebP build of the real sample: 0.95x the
    /// time with three, median of 6 pairs) and a neighbour on the machine does not take the
    /// encoders' share (1.34x to 1.21x its bound quiet, 2.41x to 1.68x beside a busy loop).
    private let queue: WorkerThread
    /// Validation, storage, frame and placeholders of one GIF (see ``GIFIntake``).
    private let intake: GIFIntake
    /// The state writes (see ``FetchStateRecorder``).
    private let recorder: FetchStateRecorder
    private let results = Mutex(FetchResults())
    /// Blobs this run found in the store with their placeholders derived: a GIF shared by many
    /// fresh exercises is looked at once, not once per batch of them.
    private let confirmedBlobs = Mutex(Set<String>())
    private let processed = Mutex(0)
    /// While not nil, the results recorded are told later (``releaseNotifications()``): the early
    /// fetch's, before the fetch's count starts.
    private let held = Mutex<[(String, GIFFetchResult)]?>(nil)
    private let backlog = Mutex<(pending: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))
    /// Downloads (or batches of fresh GIFs to reuse) waiting for processing before the fetch window
    /// and the planner pause: a crash loses at most this many finished downloads besides the
    /// requests in flight. Downloads wait as files, so
    /// the backlog costs disk, not memory; large enough that a burst of GIFs slow to decode (or a
    /// busy CPU) does not stop the requests, which would leave the network idle.
    static let maxBacklog = 16

    private let observer: BuildObserver?
    /// Where a download not kept (refused, or a duplicate of a stored GIF) goes back to.
    private let downloads: DownloadFiles
    /// Called with the path when storing a GIF fails because the disk is full.
    private let onDiskFull: (@Sendable (String) -> Void)?

    deinit { queue.stop() }

    init(
        store: BlobStore, downloads: DownloadFiles, frames: FrameCache, limits: GIFLimits, resolution: Resolution, state: BuildState?,
        placeholders: PlaceholderCache? = nil, webp: WebPCache? = nil, observer: BuildObserver? = nil, onDiskFull: (@Sendable (String) -> Void)? = nil
    ) {
        self.observer = observer
        self.onDiskFull = onDiskFull
        self.downloads = downloads
        queue = WorkerThread(name: "gifpack.process", threads: webp == nil ? 2 : 3, niceness: webp == nil ? 5 : 0)
        intake = GIFIntake(
            store: store, frames: frames, limits: limits, resolution: resolution, placeholders: placeholders,
            webp: webp)
        recorder = FetchStateRecorder(state: state, resolution: resolution)
    }

    /// Records a result decided without processing; `notify: false` keeps it out of the event
    /// stream (the exercises a stopped build never attempted are summarised once instead).
    func record(_ result: GIFFetchResult, for exerciseID: String, notify: Bool = true) {
        // Exercises that share a GIF share one record of it (``FetchResults``).
        results.withLock { $0[exerciseID] = result }
        guard notify, let observer else { return }
        let told = held.withLock { held -> Bool in
            guard held != nil else { return true }
            held?.append((exerciseID, result))
            return false
        }
        if told { observer(.gifFinished(exerciseID: exerciseID, result: result)) }
    }

    /// Holds the results' events until ``releaseNotifications()`` (at most the early fetch's exercises).
    func holdNotifications() { held.withLock { $0 = [] } }

    /// Tells the events held, and every later one as it comes.
    func releaseNotifications() {
        let events = held.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        for (id, result) in events { observer?(.gifFinished(exerciseID: id, result: result)) }
    }

    /// Records a final failure (and remembers it in the state: a 404 as missing).
    func recordFailure(_ rejection: FetchRejection, missing: Bool) {
        record(.rejected(rejection), for: rejection.exerciseID)
        queue.async { [recorder] in recorder.failure(rejection, missing: missing) }
    }

    /// Queues a download that passed the response checks for full validation and storage.
    func submit(exercise: Exercise, download: HTTPDownload, path: String) {
        backlog.withLock { $0.pending += 1 }
        queue.async { [self] in
            record(process(exercise: exercise, download: download, path: path), for: exercise.id)
            finishBacklogJob()
        }
    }

    /// Counts a queued job as done and wakes the waiters once the backlog is below its bound.
    private func finishBacklogJob() {
        let waiters = backlog.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            guard state.pending < Self.maxBacklog else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once fewer than ``maxBacklog`` downloads wait for processing.
    func waitForBacklog() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = backlog.withLock { state -> Bool in
                if state.pending < Self.maxBacklog { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Uses the stored blob of a GIF the state knows (fresh, or confirmed by a 304).
    func reuse(exercise: Exercise, known: GIFState, origin: GIFOrigin) {
        reuse([(exercise, known)], origin: origin)
    }

    /// Uses the stored blobs of several GIFs the state knows, in one job: a batch of the plan's
    /// fresh exercises costs one hand-over to a worker, and one look at the store per distinct GIF.
    func reuse(_ items: [(exercise: Exercise, known: GIFState)], origin: GIFOrigin) {
        guard !items.isEmpty else { return }
        // A batch counts as one job of the backlog (see ``waitForBacklog()``).
        backlog.withLock { $0.pending += 1 }
        queue.async { [self] in
            defer { finishBacklogJob() }
            var present: [String: Bool] = [:]
            for (exercise, known) in items {
                if let hash = known.metadata?.sha256, present[hash] == nil, confirmedBlobs.withLock({ $0.contains(hash) }) {
                    present[hash] = true
                }
                guard let metadata = known.metadata,
                    present[metadata.sha256] ?? intake.store.contains(sha256: metadata.sha256)
                else {
                    record(
                        .rejected(
                            FetchRejection(
                                exerciseID: exercise.id, url: exercise.imageURL, reason: .storeFailed,
                                detail: "the stored GIF is gone from the cache", status: nil)), for: exercise.id)
                    continue
                }
                if present[metadata.sha256] == nil {
                    // Derived once per blob: a cache hit unless the placeholder settings changed. A
                    // failure here is reported by the pack maker, which asks again.
                    try? intake.derive(sha256: metadata.sha256)
                    confirmedBlobs.withLock { _ = $0.insert(metadata.sha256) }
                }
                present[metadata.sha256] = true
                if origin == .notModified { recorder.notModified(exerciseID: exercise.id) }
                record(
                    .stored(
                        StoredGIF(
                            exerciseID: exercise.id, reusing: metadata, origin: origin,
                            requestedResolution: intake.resolution)), for: exercise.id)
            }
        }
    }

    /// Makes room for `count` results at once (see ``FetchResults/reserveCapacity(_:)``).
    func reserveResults(_ count: Int) { results.withLock { $0.reserveCapacity(count) } }

    /// Waits until every submitted GIF is processed and returns all results by exercise id.
    func drain() async -> FetchResults {
        await queue.drain()
        return results.withLock { $0 }
    }

    /// State write failures (the build goes on; the report lists them).
    var stateWriteErrors: [String] { recorder.writeErrors }

    /// Validates a download, stores it with its frame and placeholders, and records it: each step
    /// is ``GIFIntake``'s, each state write ``FetchStateRecorder``'s.
    private func process(exercise: Exercise, download: HTTPDownload, path: String) -> GIFFetchResult {
        let url = exercise.imageURL
        let sha256 = download.sha256
        let info: GIFInfo
        do { info = try intake.inspect(path: path) } catch {
            downloads.giveBack(path)
            let rejection = FetchRejection(
                exerciseID: exercise.id, url: url, reason: RejectionReason(error),
                detail: error.detail, status: download.head.status)
            recorder.failure(rejection, missing: false)
            return .rejected(rejection)
        }
        let newlyStored: Bool
        do { newlyStored = try intake.store(temporaryFile: path, sha256: sha256, size: download.bytesWritten) } catch {
            downloads.giveBack(path)
            if let full = GIFIntake.diskFullPath(error) { onDiskFull?(full) }
            return .rejected(
                FetchRejection(
                    exerciseID: exercise.id, url: url, reason: .storeFailed,
                    detail: String(describing: error), status: download.head.status))
        }
        if !newlyStored { downloads.giveBack(path) }
        do { try intake.derive(sha256: sha256) } catch {
            return .rejected(
                FetchRejection(
                    exerciseID: exercise.id, url: url, reason: .storeFailed,
                    detail: String(describing: error), status: download.head.status))
        }
        let gif = StoredGIF(
            exerciseID: exercise.id, sha256: sha256, bytes: download.bytesWritten, info: info,
            newlyStored: newlyStored, resolutionMismatch: intake.mismatch(info), origin: .downloaded)
        recorder.success(gif, exercise: exercise, head: download.head)
        if processed.withLock({
            $0 += 1; return $0
        }) == 5 {
            CrashPoint.reach(.duringDownloads)
        }
        return .stored(gif)
    }
}

import Foundation
import GifPackFormat
import GifPackTransport
import GifPackSystem
import GifPackIndexReader

/// Decodes a pack's GIFs while the pack downloads, on two threads of its own (one on a single
/// core): the download (receiving, writing, hashing the file) takes less than a core, and the
/// GIFs take the rest of both.
///
/// Each GIF is one zstd frame at the offset the index gives, so a frame can be read as soon as
/// the download has written past its end (``HTTPBodyProgress``). The follower reads the catalog's
/// frame first (``CatalogCheck``, for the GIFs' records), then the GIFs' frames, taken in file order, with
/// every check the staging makes (``IndexedEntry``: tar header, capped size, SHA-256 against the
/// index; the GIF walked against its catalog record) and writes each GIF that passes to a file of
/// its own under `directory`, named by nothing the pack says. The staging then moves that file into
/// the new generation instead of decoding the entry again (``GenerationBuilder``).
///
/// Nothing it does decides anything: an entry that fails a check, or is not reached, is simply not
/// in ``results()``, and the staging reads it from the verified pack file as without a follower,
/// reporting what is wrong in the usual order. What it hands over is safe whatever the download
/// does next (resumes, restarts, fails the pack's checksum): each file holds bytes whose SHA-256 is
/// the index's hash for that GIF, walked against the catalog record it is handed over with, and the
/// catalog matched the index's content digest. It stops taking GIFs when the download ends (the
/// staging does the rest on every core), at a restart (the written count going back), and at a
/// cancellation.
///
/// ```swift
/// let follower = PackFollower(pack: pack, final: downloadPath, directory: unpacked, cancellation: cancellation)
/// follower.start()
/// request.bodyProgress = HTTPBodyProgress(written: follower.progress(from: bytesAlreadyThere))
/// …download…
/// follower.finish()
/// let followed = follower.results()   // followed.ready: sha256 → file and record
/// ```
final class PackFollower: @unchecked Sendable {  // @unchecked: the mutable fields are guarded by `condition`.
    /// A GIF decoded, checked and written while its pack downloaded.
    struct Ready: Sendable, Equatable {
        let path: String
        /// The catalog record it was walked against.
        let metadata: GIFMetadata?
    }

    /// What the follower hands over: the GIFs it made, by SHA-256, and the catalog's GIF records by
    /// SHA-256 when it read the catalog (``CatalogCheck``: its bytes hash to the index's content
    /// digest and it agrees with the index), so the install does not read and check it again.
    struct Followed: Sendable, Equatable {
        var ready: [String: Ready] = [:]
        var catalog: [String: GIFMetadata]?
    }

    private let pack: PackDescription
    private let part: String
    private let final: String
    private let directory: String
    private let cancellation: InstallCancellation?
    private let condition = NSCondition()
    /// Bytes of the file known to be written; -1 before the first report.
    private var available: Int64 = -1
    /// The smallest file size a thread waits for (the end of its next frame); a report wakes the
    /// threads only once the file holds that much, not at every chunk (URLSession writes every
    /// 16 KiB to 256 KiB).
    private var awaited: Int64 = .max
    /// Threads following the file, and how many of them wait for bytes.
    private var workers = 1
    private var waiting = 0
    /// Counts ``wake()``s: a waiter woken by one is counted out by it.
    private var wakeRound = 0
    /// Times a report woke the waiting thread (``wakeUpCount``).
    private var wakeUps = 0
    private var ended = false
    private var threadEnded = false
    private var running: ParallelWork.Background<Followed>?
    /// Told each GIF handed over, with how much of the file was written at that moment and the
    /// file it was written to (verified: its bytes hash to `sha256`; the staging moves it later):
    /// tests, and ``GIFLoader`` serving a GIF asked for while its pack downloads.
    let onReady: (@Sendable (_ sha256: String, _ written: Int64, _ path: String) -> Void)?

    /// `final`: the download's path once verified (`part` without `.part`).
    init(
        pack: PackDescription, final: String, directory: String, cancellation: InstallCancellation?,
        onReady: (@Sendable (String, Int64, String) -> Void)? = nil
    ) {
        self.pack = pack
        self.part = final + ".part"
        self.final = final
        self.directory = directory
        self.cancellation = cancellation
        self.onReady = onReady
    }

    /// Starts the thread (once), before the first request.
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard running == nil else { return }
        available = 0
        running = ParallelWork.start(name: "gifpack.follow") { [self] in follow() }
    }

    /// The request's ``HTTPBodyProgress/wrote(_:)``: `present` plus the bytes it has written.
    func progress(from present: Int64) -> @Sendable (Int64) -> Void {
        { [self] written in advance(to: present + written) }
    }

    /// The download ended (done, failed or cancelled): nothing more will be written.
    func finish() {
        condition.lock()
        ended = true
        wake()
        condition.unlock()
    }

    /// Ends the follower (after ``finish()``) and hands over what it made and the catalog it checked.
    func results() -> Followed {
        finish()
        condition.lock()
        let thread = running
        condition.unlock()
        return thread?.wait() ?? Followed()
    }

    private func advance(to offset: Int64) {
        condition.lock()
        if offset < available {
            ended = true  // the file was started again: stop following it
            wake()
        } else {
            available = offset
            if offset >= awaited { wake() }
        }
        condition.unlock()
    }

    /// Wakes the threads if one waits for what is now there; under `condition`'s lock.
    private func wake() {
        guard awaited != .max else { return }
        awaited = .max
        wakeUps += 1
        // Every waiter is woken: none counts as waiting from now on, even before it runs.
        waiting = 0
        wakeRound += 1
        condition.broadcast()
    }

    /// Blocks until `end` bytes are written; false once the download has ended: what is left then
    /// goes to the staging, which runs on every core.
    private func wait(until end: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while available < end, !ended {
            awaited = min(awaited, end)
            waiting += 1
            let round = wakeRound
            condition.wait()
            if wakeRound == round { waiting -= 1 }  // woken without a wake(), which counts them all out
        }
        return !ended
    }

    /// Tests: times a report woke the threads (at most one per frame, plus the end); whether every
    /// thread waits for bytes; whether the following has ended.
    var wakeUpCount: Int { locked { wakeUps } }
    var isWaiting: Bool { locked { waiting > 0 && waiting == workers } }
    var isDone: Bool { locked { threadEnded } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private func follow() -> Followed {
        defer { locked { threadEnded = true } }
        // The download may be done and renamed by the time the catalog is there.
        guard wait(until: pack.catalog.frameOffset + pack.catalog.frameLength),
            let reader = (try? PackFrameReader(path: part)) ?? (try? PackFrameReader(path: final)),
            let catalog = try? CatalogCheck.read(pack: pack, reader: reader)
        else { return Followed() }
        var records: [String: GIFMetadata] = [:]
        for exercise in catalog.exercises { if let gif = exercise.gif { records[gif.sha256] = gif } }
        guard (try? FileOps.makeDirectories(directory)) != nil else { return Followed(catalog: records) }
        let gifs = pack.gifs.sorted { $0.location.frameOffset < $1.location.frameOffset }
        let queue = FollowQueue(count: gifs.count)
        let width = min(2, ParallelWork.defaultWidth)
        locked { workers = width }
        ParallelWork.run(width: width, name: "gifpack.follow") { [self, records] in
            defer { locked { workers -= 1 } }
            while let position = queue.next() {
                let gif = gifs[position]
                guard cancellation?.isCancelled != true,
                    wait(until: gif.location.frameOffset + gif.location.frameLength)
                else { return queue.stop() }
                guard queue.claim(gif.sha256) else { continue }
                if let ready = decode(gif, metadata: records[gif.sha256], reader: reader, position: position) {
                    queue.hand(ready, for: gif.sha256)
                    onReady?(gif.sha256, currentlyAvailable, ready.path)
                }
            }
        }
        return Followed(ready: queue.ready, catalog: records)
    }

    /// One GIF read from its frame with the staging's checks and written to a file of its own
    /// (named by its place in the file); nil when anything fails (the staging decides).
    private func decode(_ gif: GIFEntry, metadata: GIFMetadata?, reader: PackFrameReader, position: Int) -> Ready? {
        let name = SafePath.printable(pack.name)
        guard
            let bytes = try? IndexedEntry.readAll(
                gif.location, sha256: gif.sha256, image: gif.imageFormat, side: pack.renditionSide, pack: name,
                reader: reader),
            GIFMetadataCheck.problems(
                .bytes(bytes), metadata: metadata, side: pack.renditionSide, format: gif.imageFormat, pack: name,
                entry: gif.location.path
            ).isEmpty
        else { return nil }
        let path = "\(directory)/\(position).gif"
        guard (try? FileOps.writeNew(path, bytes)) != nil else { return nil }
        return Ready(path: path, metadata: metadata)
    }

    private var currentlyAvailable: Int64 { locked { available } }
}

/// The follower threads' shared state: the next GIF to take (in file order), the hashes taken,
/// what was handed over.
private final class FollowQueue: Sendable {
    private struct State {
        var taken = 0
        var claimed: Set<String> = []
        var made: [String: PackFollower.Ready] = [:]
    }

    private let state = Locked(State())
    private let count: Int

    init(count: Int) { self.count = count }

    /// The next GIF's place, nil once all are taken or the following stopped.
    func next() -> Int? {
        state.withLock { state -> Int? in
            guard state.taken < count else { return nil }
            state.taken += 1
            return state.taken - 1
        }
    }

    /// No GIF is taken after this (the download ended or the install was cancelled).
    func stop() { state.withLock { $0.taken = count } }

    /// True for the first thread to take this hash (a pack may list one GIF twice).
    func claim(_ sha256: String) -> Bool { state.withLock { $0.claimed.insert(sha256).inserted } }

    func hand(_ ready: PackFollower.Ready, for sha256: String) { state.withLock { $0.made[sha256] = ready } }

    var ready: [String: PackFollower.Ready] { state.withLock { $0.made } }
}

import Foundation
import GifPackFormat
import GifPackTransport

/// Decodes a pack's GIFs while the pack downloads, on a thread of its own: the download is one
/// core's work (receiving, writing, hashing the file), the GIFs the other's.
///
/// Each GIF is one zstd frame at the offset the index gives, so a frame can be read as soon as
/// the download has written past its end (``HTTPBodyProgress``). The follower reads the catalog's
/// frame first (``CatalogCheck``, for the GIFs' records), then each GIF's frame in file order, with
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
/// let ready = follower.results()   // sha256 → file and record
/// ```
final class PackFollower: @unchecked Sendable {  // @unchecked: the mutable fields are guarded by `condition`.
    /// A GIF decoded, checked and written while its pack downloaded.
    struct Ready: Sendable, Equatable {
        let path: String
        /// The catalog record it was walked against.
        let metadata: GIFMetadata?
    }

    private let pack: PackDescription
    private let part: String
    private let final: String
    private let directory: String
    private let cancellation: InstallCancellation?
    private let condition = NSCondition()
    /// Bytes of the file known to be written; -1 before the first report.
    private var available: Int64 = -1
    /// The file size the thread waits for (the end of its next frame); a report wakes it only once
    /// the file holds that much, not at every chunk (URLSession reports every 16 KiB on Linux).
    private var awaited: Int64 = .max
    /// Times a report woke the waiting thread (``wakeUpCount``).
    private var wakeUps = 0
    private var ended = false
    private var threadEnded = false
    private var running: ParallelWork.Background<[String: Ready]>?
    /// Tests: told each GIF handed over with how much of the file was written at that moment.
    let onReady: (@Sendable (_ sha256: String, _ written: Int64) -> Void)?

    /// `final`: the download's path once verified (`part` without `.part`).
    init(pack: PackDescription, final: String, directory: String, cancellation: InstallCancellation?,
         onReady: (@Sendable (String, Int64) -> Void)? = nil) {
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

    /// Ends the follower (after ``finish()``) and hands over what it made, by SHA-256.
    func results() -> [String: Ready] {
        finish()
        condition.lock()
        let thread = running
        condition.unlock()
        return thread?.wait() ?? [:]
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

    /// Wakes the thread if it waits; under `condition`'s lock.
    private func wake() {
        guard awaited != .max else { return }
        awaited = .max
        wakeUps += 1
        condition.broadcast()
    }

    /// Blocks until `end` bytes are written; false once the download has ended: what is left then
    /// goes to the staging, which runs on every core.
    private func wait(until end: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while available < end, !ended {
            awaited = end
            condition.wait()
        }
        awaited = .max
        return !ended
    }

    /// Tests: times a report woke the thread (at most one per frame, plus the end); whether it
    /// waits for bytes; whether it has ended.
    var wakeUpCount: Int { locked { wakeUps } }
    var isWaiting: Bool { locked { awaited != .max } }
    var isDone: Bool { locked { threadEnded } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private func follow() -> [String: Ready] {
        defer { locked { threadEnded = true } }
        var ready: [String: Ready] = [:]
        // The download may be done and renamed by the time the catalog is there.
        guard wait(until: pack.catalog.frameOffset + pack.catalog.frameLength),
              let reader = (try? PackFrameReader(path: part)) ?? (try? PackFrameReader(path: final)),
              let catalog = try? CatalogCheck.read(pack: pack, reader: reader),
              (try? FileOps.makeDirectories(directory)) != nil else { return ready }
        var records: [String: GIFMetadata] = [:]
        for exercise in catalog.exercises { if let gif = exercise.gif { records[gif.sha256] = gif } }
        let name = SafePath.printable(pack.name)
        for gif in pack.gifs.sorted(by: { $0.location.frameOffset < $1.location.frameOffset }) {
            let end = gif.location.frameOffset + gif.location.frameLength
            guard cancellation?.isCancelled != true, wait(until: end) else { break }
            guard ready[gif.sha256] == nil, let bytes = try? IndexedEntry.readAll(
                gif.location, sha256: gif.sha256, isGIF: true, pack: name, reader: reader) else { continue }
            let metadata = records[gif.sha256]
            guard PackChecks.gifProblems(.bytes(bytes), metadata: metadata, pack: name, entry: gif.location.path).isEmpty
            else { continue }
            let path = "\(directory)/\(ready.count).gif"
            guard (try? FileOps.writeNew(path, bytes)) != nil else { continue }
            ready[gif.sha256] = Ready(path: path, metadata: metadata)
            onReady?(gif.sha256, currentlyAvailable)
        }
        return ready
    }

    private var currentlyAvailable: Int64 { locked { available } }
}

import Foundation
import Synchronization

/// The files in the cache's `tmp/` that downloads are written to. A download that is not kept (a
/// duplicate of a stored GIF, a 304, an answer refused) leaves its file to the next download
/// rather than deleting it: the next download opens it with `O_TRUNC`, so nothing of it is read.
///
/// Deleting them cost more than the disk: ext4 without a journal does not reuse an inode freed in
/// the last 30 seconds and walks past every such inode each time it allocates one, so a fresh build
/// of the 1,324-GIF fixture catalog that deleted each duplicate spent about a fifth of its CPU
/// samples in that walk (perf: `recently_deleted` under `openat`), 8 % once they were handed back.
/// At most ``maxSpares`` files wait; any more are deleted, and the spares are deleted when the
/// fetch ends (a killed run's are swept by the next run's ``CacheLayout/prepare()``, as any
/// download's).
///
/// ```swift
/// let path = downloads.take()          // a spare, or a new name
/// downloads.giveBack(path)             // not kept: the next download writes there
/// ```
final class DownloadFiles: Sendable {
    private let layout: CacheLayout
    private let spares = Mutex<[String]>([])
    /// The requests in flight and the processing backlog can hand back no more at once.
    static let maxSpares = 32

    init(layout: CacheLayout) { self.layout = layout }

    /// A file for the next download: one handed back, or a new name.
    func take() -> String {
        spares.withLock { $0.popLast() } ?? layout.newTemporaryDownloadPath()
    }

    /// The download at `path` is not kept: the next ``take()`` may hand it out again.
    func giveBack(_ path: String) {
        let kept = spares.withLock { spares in
            guard spares.count < Self.maxSpares, !spares.contains(path) else { return false }
            spares.append(path)
            return true
        }
        if !kept { FileSystem.remove(path) }
    }

    /// Deletes the spares (the fetch is over).
    func removeSpares() {
        for path in spares.withLock({ spares in
            defer { spares = [] }
            return spares
        }) {
            FileSystem.remove(path)
        }
    }

    /// How many files wait to be handed out again.
    var spareCount: Int { spares.withLock { $0.count } }
}

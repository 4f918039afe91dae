import Crypto
import Foundation
import Synchronization

/// The content-addressed store of validated GIFs: each distinct GIF is kept once, at
/// `blobs/sha256/ab/<sha256>.gif`, however many exercises (or packs) use it. A GIF enters only after
/// it passed validation, through `adopt`, which fsyncs it and renames it into place.
///
/// ```swift
/// let store = BlobStore(layout: CacheLayout(root: ".gifpack-cache"))
/// let isNew = try store.adopt(temporaryFile: download.path, sha256: download.sha256)
/// ```
package struct BlobStore: Sendable {
    package let layout: CacheLayout

    package init(layout: CacheLayout) { self.layout = layout }

    package func contains(sha256: String) -> Bool { FileSystem.exists(layout.blobPath(sha256: sha256)) }

    package func path(sha256: String) -> String { layout.blobPath(sha256: sha256) }

    /// Moves a validated download into the store. Returns false when the same content was already
    /// stored: the download is left where it is, for the caller (``DownloadFiles`` writes the next
    /// download there).
    /// Safe to call from several threads: the check-and-rename is serialised, the fsyncs are not.
    @discardableResult
    package func adopt(temporaryFile: String, sha256: String) throws(FileSystemError) -> Bool {
        let destination = layout.blobPath(sha256: sha256)
        if FileSystem.exists(destination) {
            if Self.hashes(destination, to: sha256) {
                return false
            }
            // The stored copy was damaged: the fresh, validated download replaces it.
            FileSystem.remove(destination)
        }
        let directory = PathText.parent(destination)
        try FileSystem.createDirectory(directory)
        try FileSystem.fsync(path: temporaryFile)
        let adopted = try Self.adoption.withLock { _ throws(FileSystemError) -> Bool in
            if FileSystem.exists(destination) {
                return false
            }
            guard SystemCalls.rename(temporaryFile, to: destination) == 0 else {
                throw .io(operation: "rename", path: destination, errno: Errno.current.code)
            }
            return true
        }
        // The directory is not fsynced per blob: if a power loss undoes the rename, the state still
        // names the blob but the store no longer has it, and the next run fetches it again.
        return adopted
    }

    private static let adoption = Mutex(())

    /// True when the file at `path` hashes to `sha256`.
    static func hashes(_ path: String, to sha256: String) -> Bool {
        // A file that cannot be read is as good as damaged: the caller replaces it.
        guard let bytes = (try? FileSystem.readAll(path)) ?? nil else { return false }
        return Hex.lowercase(SHA256.hash(data: bytes)) == sha256
    }
}

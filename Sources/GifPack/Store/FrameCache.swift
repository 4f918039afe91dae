import Foundation
import Synchronization

/// Each stored GIF's tar entry (`gifs/<sha256>.gif`), compressed once as a standalone zstd frame.
///
/// A GIF's entry depends only on its bytes, the pinned zstd level and the tar mtime, so it is
/// compressed as soon as the GIF is validated (on the processor's queue, while other downloads are
/// in flight) and kept in the cache; assembling a pack is then a copy of frames in hash order.
///
/// ```swift
/// let frames = FrameCache(layout: layout, level: 12, mtime: 0)
/// try frames.ensureFrame(sha256: hash, blobPath: store.path(sha256: hash), size: bytes)
/// ```
struct FrameCache: Sendable {
    let layout: CacheLayout
    let level: Int32
    let mtime: Int64
    /// Frames this process compressed itself (hashing the blob as it did) or decoded and hashed:
    /// the assembler copies them without decoding them again.
    private let verified = FreshFrames()

    init(layout: CacheLayout, level: Int32, mtime: Int64) {
        self.layout = layout
        self.level = level
        self.mtime = mtime
    }

    /// Whether this process made or checked the frame of `sha256` (see ``verify(sha256:size:)``).
    func isVerified(sha256: String) -> Bool { verified.contains(sha256) }

    func path(sha256: String) -> String { layout.framePath(sha256: sha256, level: level, mtime: mtime) }

    func ensureFrame(sha256: String, blobPath: String, size: Int64) throws {
        let destination = path(sha256: sha256)
        if FileSystem.exists(destination) { return }
        try FileSystem.createDirectory(PathText.parent(destination))
        let encoder = TarEntryFrameEncoder(level: level, mtime: mtime)
        try Self.writeFrameFile(at: destination) { sink in
            // The blob is hashed as it is framed: bytes damaged in the cache never make a frame.
            _ = try encoder.encodeFileReportingSize(
                name: GIFEntry.path(forSHA256: sha256), sourcePath: blobPath,
                to: sink, expectedSHA256: sha256)
        }
        verified.insert(sha256)
    }

    /// Makes sure the frame of the GIF `sha256` (of `size` bytes) holds bytes that hash to it:
    /// one this process made is; a missing one is made from the blob, hashing it; one left by
    /// another process is decoded and hashed, and made again from the blob when it does not verify
    /// (cut short by a crash, frames are not fsynced; or damaged). False when the blob itself no
    /// longer hashes to its name: no frame can be made of it.
    func verify(sha256: String, size: Int64) throws -> Bool {
        guard !isVerified(sha256: sha256) else { return true }
        let blob = layout.blobPath(sha256: sha256)
        do {
            try ensureFrame(sha256: sha256, blobPath: blob, size: size)
            guard !isVerified(sha256: sha256) else { return true }
            do throws(PackWriteError) {
                _ = try PackAssembler.verifyFrame(
                    path(sha256: sha256), uncompressedLength: TarHeader.entryLength(dataSize: size),
                    expectedSHA256: sha256)
                verified.insert(sha256)
            } catch {
                guard case .invalidFrame = error else { throw error }
                FileSystem.remove(path(sha256: sha256))
                try ensureFrame(sha256: sha256, blobPath: blob, size: size)
            }
            return true
        } catch PackWriteError.contentMismatch {
            return false
        }
    }

    /// Writes one cached frame file: `encode` fills a temporary file beside `destination`, which is
    /// then renamed into place (removed if anything throws). No fsync: a frame is a cache. Frames
    /// from another process are verified before they are copied into a pack, and one cut short by
    /// a crash is simply compressed again.
    static func writeFrameFile<T>(at destination: String, _ encode: (FileDescriptorSink) throws -> T) throws -> T {
        let temporary = FileSystem.temporaryPath(beside: destination)
        do {
            let sink = try FileDescriptorSink(creating: temporary)
            let result = try encode(sink)
            try sink.close()
            guard SystemCalls.rename(temporary, to: destination) == 0 else {
                throw FileSystemError.io(operation: "rename", path: destination, errno: Errno.current.code)
            }
            return result
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }
}

/// The set of hashes whose frames this process wrote.
private final class FreshFrames: Sendable {
    private let hashes = Mutex<Set<String>>([])
    func insert(_ hash: String) { hashes.withLock { _ = $0.insert(hash) } }
    func contains(_ hash: String) -> Bool { hashes.withLock { $0.contains(hash) } }
}

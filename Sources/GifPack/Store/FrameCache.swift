import Foundation
import Synchronization
import Glibc

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
    /// Frames this process compressed itself: the assembler need not decode them again.
    private let madeHere = FreshFrames()

    init(layout: CacheLayout, level: Int32, mtime: Int64) {
        self.layout = layout
        self.level = level
        self.mtime = mtime
    }

    func wasMadeHere(sha256: String) -> Bool { madeHere.contains(sha256) }

    func path(sha256: String) -> String { layout.framePath(sha256: sha256, level: level, mtime: mtime) }

    func ensureFrame(sha256: String, blobPath: String, size: Int64) throws {
        let destination = path(sha256: sha256)
        if FileSystem.exists(destination) { return }
        try FileSystem.createDirectory(PathText.parent(destination))
        let encoder = TarEntryFrameEncoder(level: level, mtime: mtime)
        try Self.writeFrameFile(at: destination) { sink in
            // The blob is hashed as it is framed: bytes damaged in the cache never make a frame.
            _ = try encoder.encodeFileReportingSize(name: GIFEntry.path(forSHA256: sha256), sourcePath: blobPath,
                                                    to: sink, expectedSHA256: sha256)
        }
        madeHere.insert(sha256)
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
            guard rename(temporary, destination) == 0 else {
                throw FileSystemError.io(operation: "rename", path: destination, errno: errno)
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

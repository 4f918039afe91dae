import GifPackSystem
import Synchronization

/// What the builder's derived-data caches (``PlaceholderCache``, ``WebPCache``) share: their files
/// are written without fsync, since a lost one is derived again, and a counter with striped locks
/// keeps one GIF from being derived twice at once across a cache's copies.
enum CacheFile {
    /// Temporary file and rename, without fsync (a cache: a file lost to a crash is made again).
    /// Not FileManager.createFile: it fsyncs every file, which cost 4% of a fresh build's CPU.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = FileSystem.temporaryPath(beside: path)
        do {
            let file = try NewFile(path: temporary)
            try file.append(bytes)
            try file.finish(sync: false)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
        guard SystemCalls.rename(temporary, to: path) == 0 else {
            let code = Errno.current.code
            FileSystem.remove(temporary)
            throw FileSystemError.io(operation: "rename", path: path, errno: code)
        }
    }
}

/// Counts the derivations (placeholders, WebP encodings) across the copies of a cache, and holds
/// the striped locks that keep one GIF from being derived twice at once.
final class CacheWorkCounter: Sendable {
    private let count = Mutex(0)
    /// A stripe's lock (a `Mutex` is not copyable: each is kept in a class of its own).
    final class Stripe: Sendable { let lock = Mutex(()) }
    private let stripes = (0..<16).map { _ in Stripe() }
    func stripe(for hash: String) -> Stripe { stripes[Int(hash.utf8.first ?? 0) % stripes.count] }
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

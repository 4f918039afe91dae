import Foundation

/// The loader's memory tier: verified GIFs by SHA-256, least recently used evicted first, bounded by
/// total bytes and by count (like `NSCache`'s `totalCostLimit` and `countLimit`, but exact and
/// deterministic). A GIF larger than the byte limit is not kept.
///
/// ```swift
/// let memory = MemoryTier(costLimit: 100 << 20, countLimit: 50)
/// memory.insert(gif)
/// memory.gif("3f1c…")?.data
/// ```
final class MemoryTier: @unchecked Sendable {  // @unchecked: every stored property is read and written under `lock`.
    struct Entry {
        var data: Data
        var fileURL: URL?
    }

    let costLimit: Int
    let countLimit: Int
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    /// Least recently used first.
    private var order: [String] = []
    private var cost = 0

    init(costLimit: Int, countLimit: Int) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
    }

    /// The entry of `sha256`, now the most recently used.
    func gif(_ sha256: String) -> Entry? {
        lock.withLock {
            guard let entry = entries[sha256] else { return nil }
            touch(sha256)
            return entry
        }
    }

    /// Keeps `data` (already verified to hash to `sha256`), evicting the least recently used
    /// entries until both limits hold.
    func insert(_ sha256: String, data: Data, fileURL: URL?) {
        lock.withLock {
            if let old = entries.removeValue(forKey: sha256) {
                cost -= old.data.count
                order.removeAll { $0 == sha256 }
            }
            guard data.count <= costLimit, countLimit > 0 else { return }
            entries[sha256] = Entry(data: data, fileURL: fileURL)
            order.append(sha256)
            cost += data.count
            while cost > costLimit || entries.count > countLimit, let oldest = order.first {
                order.removeFirst()
                cost -= entries.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }

    /// Empties the tier (a memory warning).
    func removeAll() {
        lock.withLock {
            entries.removeAll()
            order.removeAll()
            cost = 0
        }
    }

    /// The hashes held, least recently used first, and their total bytes.
    var contents: (hashes: [String], bytes: Int) { lock.withLock { (order, cost) } }

    private func touch(_ sha256: String) {
        order.removeAll { $0 == sha256 }
        order.append(sha256)
    }
}

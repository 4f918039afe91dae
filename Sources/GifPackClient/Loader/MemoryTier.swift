import Foundation
import GifPackSystem

/// The loader's memory tier: verified GIFs by SHA-256, least recently used evicted first, bounded by
/// total bytes and by count (like `NSCache`'s `totalCostLimit` and `countLimit`, but exact and
/// deterministic). A GIF larger than the byte limit is not kept.
///
/// ```swift
/// let memory = MemoryTier(costLimit: 100 << 20, countLimit: 50)
/// memory.insert(gif)
/// memory.gif("3f1c…")?.data
/// ```
final class MemoryTier: Sendable {
    struct Entry {
        var data: Data
        var fileURL: URL?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Least recently used first.
        var order: [String] = []
        var cost = 0

        mutating func touch(_ sha256: String) {
            order.removeAll { $0 == sha256 }
            order.append(sha256)
        }
    }

    let costLimit: Int
    let countLimit: Int
    private let state = Locked(State())

    init(costLimit: Int, countLimit: Int) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
    }

    /// The entry of `sha256`, now the most recently used.
    func gif(_ sha256: String) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[sha256] else { return nil }
            state.touch(sha256)
            return entry
        }
    }

    /// Keeps `data` (already verified to hash to `sha256`), evicting the least recently used
    /// entries until both limits hold.
    func insert(_ sha256: String, data: Data, fileURL: URL?) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: sha256) {
                state.cost -= old.data.count
                state.order.removeAll { $0 == sha256 }
            }
            guard data.count <= costLimit, countLimit > 0 else { return }
            state.entries[sha256] = Entry(data: data, fileURL: fileURL)
            state.order.append(sha256)
            state.cost += data.count
            while state.cost > costLimit || state.entries.count > countLimit, let oldest = state.order.first {
                state.order.removeFirst()
                state.cost -= state.entries.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }

    /// Empties the tier (a memory warning).
    func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.order.removeAll()
            state.cost = 0
        }
    }

    /// The hashes held, least recently used first, and their total bytes.
    var contents: (hashes: [String], bytes: Int) { state.withLock { ($0.order, $0.cost) } }
}

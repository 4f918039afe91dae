import Foundation

/// Every exercise's fetch outcome, held compactly: one record per distinct GIF and, per exercise
/// that has one, its id and four bytes in arrays sorted by id, so a catalog of 100,000 exercises
/// sharing a thousand GIFs costs 2 MB here instead of a ``StoredGIF`` (and its strings) per exercise.
///
/// Reads and writes look like a dictionary of ``GIFFetchResult`` by exercise id:
///
/// ```swift
/// var results = FetchResults()
/// results["0001"] = .stored(gif)
/// if case .stored(let gif)? = results["0001"] { print(gif.sha256) }
/// ```
package struct FetchResults: Sendable, Equatable {
    /// What a stored GIF's exercises share: its bytes' hash, size and decoded header.
    private struct GIFRecord: Sendable, Equatable {
        var sha256: String
        var bytes: Int64
        var info: GIFInfo
    }

    /// One exercise's stored GIF in 32 bits: its record's number (28 bits), its origin (2 bits),
    /// whether it was newly stored and whether its size was not the one asked for.
    private struct Slot: Sendable, Equatable {
        var bits: UInt32

        static let absent = Slot(bits: .max)  // a result taken back (see `subscript(id:)`)
        private static let origins: [GIFOrigin] = [.downloaded, .notModified, .fresh, .lastKnownGood]

        init(bits: UInt32) { self.bits = bits }

        init(record: UInt32, origin: GIFOrigin, newlyStored: Bool, resolutionMismatch: Bool) {
            bits = record << 4 | UInt32(Self.origins.firstIndex(of: origin)!) << 2 | (newlyStored ? 2 : 0) | (resolutionMismatch ? 1 : 0)
        }

        var record: Int { Int(bits >> 4) }
        var origin: GIFOrigin { Self.origins[Int(bits >> 2 & 3)] }
        var newlyStored: Bool { bits & 2 != 0 }
        var resolutionMismatch: Bool { bits & 1 != 0 }
    }

    private var records: [GIFRecord] = []
    private var recordBySHA: [String: UInt32] = [:]
    /// Exercises with a stored GIF, sorted by id (in UTF-8 byte order): the ids' bytes one after
    /// the other, where each ends, and each one's slot (about 13 bytes an exercise, where a
    /// dictionary took 64 at 100,000). Results come in id order, as the fetch plans them, and are
    /// appended; the few that come out of order wait in `late` and are merged in now and then.
    private var idBytes: [UInt8] = []
    private var ends: [UInt32] = []
    private var slots: [Slot] = []
    private var late: [String: Slot] = [:]
    private var storedCount = 0
    private var rejected: [String: FetchRejection] = [:]
    /// How many results may wait out of order before they are merged into the sorted arrays.
    private static let lateLimit = 4096

    package init() {}

    /// Results from a dictionary.
    package init(_ results: [String: GIFFetchResult]) {
        for (id, result) in results.sorted(by: { $0.key < $1.key }) { self[id] = result }
    }

    /// Makes room for `count` exercises at once, so the arrays are not copied as they grow.
    package mutating func reserveCapacity(_ count: Int) {
        ends.reserveCapacity(count)
        slots.reserveCapacity(count)
    }

    /// Number of exercises with a result.
    package var count: Int { storedCount + rejected.count }

    /// The i-th stored id's bytes.
    private func idBytes(at index: Int) -> ArraySlice<UInt8> {
        idBytes[(index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])]
    }

    private func id(at index: Int) -> String { String(decoding: idBytes(at: index), as: UTF8.self) }

    /// -1, 0 or 1 as the i-th stored id comes before, is, or comes after `key` in byte order.
    private func compare(_ index: Int, _ key: UnsafeBufferPointer<UInt8>) -> Int {
        let stored = idBytes(at: index)
        let common = min(stored.count, key.count)
        let order = common == 0 ? 0 : stored.withUnsafeBufferPointer { MemoryCalls.compare($0.baseAddress!, key.baseAddress!, count: common) }
        if order != 0 { return order < 0 ? -1 : 1 }
        return stored.count == key.count ? 0 : (stored.count < key.count ? -1 : 1)
    }

    private static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Where `id` is among the sorted ids, or nil.
    private func position(of id: String) -> Int? {
        var key = id
        return key.withUTF8 { key in
            guard !ends.isEmpty else { return nil }
            if compare(ends.count - 1, key) == 0 { return ends.count - 1 }
            var (low, high) = (0, ends.count)
            while low < high {
                let middle = (low + high) / 2
                if compare(middle, key) < 0 { low = middle + 1 } else { high = middle }
            }
            return low < ends.count && compare(low, key) == 0 ? low : nil
        }
    }

    /// Whether `id` comes after every sorted id.
    private func isPastTheEnd(_ id: String) -> Bool {
        guard !ends.isEmpty else { return true }
        var key = id
        return key.withUTF8 { compare(ends.count - 1, $0) < 0 }
    }

    private func slot(of id: String) -> Slot? {
        if let position = position(of: id), slots[position] != .absent { return slots[position] }
        return late[id]
    }

    package subscript(id: String) -> GIFFetchResult? {
        get {
            if let slot = slot(of: id) {
                let record = records[slot.record]
                return .stored(
                    StoredGIF(
                        exerciseID: id, sha256: record.sha256, bytes: record.bytes, info: record.info,
                        newlyStored: slot.newlyStored, resolutionMismatch: slot.resolutionMismatch,
                        origin: slot.origin))
            }
            return rejected[id].map { .rejected($0) }
        }
        set {
            let was = slot(of: id) != nil
            switch newValue {
            case .stored(let gif)?:
                rejected[id] = nil
                let index: UInt32
                if let known = recordBySHA[gif.sha256], records[Int(known)].bytes == gif.bytes, records[Int(known)].info == gif.info {
                    index = known
                } else {
                    // The same hash under another decoded header cannot come from equal bytes; it is
                    // kept as its own record rather than merged (the first stays the one looked up).
                    index = UInt32(records.count)
                    records.append(GIFRecord(sha256: gif.sha256, bytes: gif.bytes, info: gif.info))
                    if recordBySHA[gif.sha256] == nil { recordBySHA[gif.sha256] = index }
                }
                store(
                    Slot(
                        record: index, origin: gif.origin, newlyStored: gif.newlyStored,
                        resolutionMismatch: gif.resolutionMismatch), for: id)
                if !was { storedCount += 1 }
            case .rejected(let rejection)?:
                if was { remove(id) }
                rejected[id] = rejection
            case nil:
                if was { remove(id) }
                rejected[id] = nil
            }
        }
    }

    private mutating func store(_ slot: Slot, for id: String) {
        if let position = position(of: id) {
            slots[position] = slot
        } else if late[id] != nil || !isPastTheEnd(id) {
            late[id] = slot
            if late.count > Self.lateLimit { mergeLate() }
        } else {
            idBytes.append(contentsOf: id.utf8)
            ends.append(UInt32(idBytes.count))
            slots.append(slot)
        }
    }

    private mutating func remove(_ id: String) {
        if let position = position(of: id), slots[position] != .absent {
            slots[position] = .absent
        } else {
            late[id] = nil
        }
        storedCount -= 1
    }

    /// Merges the results that came out of order into the sorted arrays.
    private mutating func mergeLate() {
        let waiting = late.sorted { Self.precedes($0.key, $1.key) }
        late = [:]
        var (mergedBytes, mergedEnds, mergedSlots) = ([UInt8](), [UInt32](), [Slot]())
        mergedBytes.reserveCapacity(idBytes.count + waiting.reduce(0) { $0 + $1.key.utf8.count })
        mergedEnds.reserveCapacity(max(ends.capacity, ends.count + waiting.count))
        mergedSlots.reserveCapacity(max(slots.capacity, slots.count + waiting.count))
        var (i, j) = (0, 0)
        while i < ends.count || j < waiting.count {
            let takeStored: Bool
            if j == waiting.count {
                takeStored = true
            } else if i == ends.count {
                takeStored = false
            } else {
                var key = waiting[j].key
                takeStored = key.withUTF8 { compare(i, $0) < 0 }
            }
            if takeStored {
                if slots[i] != .absent {
                    mergedBytes += idBytes(at: i)
                    mergedEnds.append(UInt32(mergedBytes.count))
                    mergedSlots.append(slots[i])
                }
                i += 1
            } else {
                mergedBytes += waiting[j].key.utf8
                mergedEnds.append(UInt32(mergedBytes.count))
                mergedSlots.append(waiting[j].value)
                j += 1
            }
        }
        (idBytes, ends, slots) = (mergedBytes, mergedEnds, mergedSlots)
    }

    /// Calls `body` with every exercise id and its result, in no particular order.
    package func forEach(_ body: (String, GIFFetchResult) throws -> Void) rethrows {
        for position in slots.indices where slots[position] != .absent {
            let id = id(at: position)
            try body(id, self[id]!)
        }
        for id in late.keys { try body(id, self[id]!) }
        for (id, rejection) in rejected { try body(id, .rejected(rejection)) }
    }

    /// Equal when every exercise has the same result, however the results are held.
    package static func == (a: FetchResults, b: FetchResults) -> Bool {
        guard a.count == b.count else { return false }
        var same = true
        a.forEach { id, result in if same, b[id] != result { same = false } }
        return same
    }
}

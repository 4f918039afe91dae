/// Every exercise's fetch outcome, held compactly: one record per distinct GIF and eight bytes per
/// exercise that has one, so a catalog of 100,000 exercises sharing a thousand GIFs costs a few
/// megabytes here instead of a ``StoredGIF`` (and its strings) per exercise.
///
/// Reads and writes look like a dictionary of ``GIFFetchResult`` by exercise id:
///
/// ```swift
/// var results = FetchResults()
/// results["0001"] = .stored(gif)
/// if case .stored(let gif)? = results["0001"] { print(gif.sha256) }
/// ```
public struct FetchResults: Sendable, Equatable {
    /// What a stored GIF's exercises share: its bytes' hash, size and decoded header.
    private struct GIFRecord: Sendable, Equatable {
        var sha256: String
        var bytes: Int64
        var info: GIFInfo
    }

    /// One exercise's stored GIF: where its record is, and what is particular to the exercise.
    private struct Slot: Sendable, Equatable {
        var record: UInt32
        var origin: GIFOrigin
        var newlyStored: Bool
        var resolutionMismatch: Bool
    }

    private var records: [GIFRecord] = []
    private var recordBySHA: [String: UInt32] = [:]
    private var stored: [String: Slot] = [:]
    private var rejected: [String: FetchRejection] = [:]

    public init() {}

    /// Results from a dictionary.
    public init(_ results: [String: GIFFetchResult]) {
        for (id, result) in results { self[id] = result }
    }

    /// Makes room for `count` exercises at once, so the tables are not copied as they grow.
    public mutating func reserveCapacity(_ count: Int) { stored.reserveCapacity(count) }

    /// Number of exercises with a result.
    public var count: Int { stored.count + rejected.count }

    public var isEmpty: Bool { count == 0 }

    public subscript(id: String) -> GIFFetchResult? {
        get {
            if let slot = stored[id] {
                let record = records[Int(slot.record)]
                return .stored(StoredGIF(exerciseID: id, sha256: record.sha256, bytes: record.bytes, info: record.info,
                                         newlyStored: slot.newlyStored, resolutionMismatch: slot.resolutionMismatch,
                                         origin: slot.origin))
            }
            return rejected[id].map { .rejected($0) }
        }
        set {
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
                stored[id] = Slot(record: index, origin: gif.origin, newlyStored: gif.newlyStored,
                                  resolutionMismatch: gif.resolutionMismatch)
            case .rejected(let rejection)?:
                stored[id] = nil
                rejected[id] = rejection
            case nil:
                stored[id] = nil
                rejected[id] = nil
            }
        }
    }

    /// Calls `body` with every exercise id and its result, in no particular order.
    public func forEach(_ body: (String, GIFFetchResult) throws -> Void) rethrows {
        for id in stored.keys { try body(id, self[id]!) }
        for (id, rejection) in rejected { try body(id, .rejected(rejection)) }
    }
}

import Foundation

/// Thread-safe accumulation of ``FixtureStats``. A response is recorded before its bytes are
/// written, so a client that has read a whole response always finds it counted; only `inFlight`
/// and any bytes that could not be written are settled afterwards.
///
/// ```swift
/// recorder.begin()
/// recorder.record(status: 200, kind: .image(id: "0001"), plannedBytes: 1234)
/// recorder.finish(unsentBytes: 0)
/// ```
final class StatsRecorder: @unchecked Sendable {  // @unchecked: every stored property is read and written under `lock`.
    /// What kind of route a request hit.
    enum Kind: Equatable {
        case list
        /// `id` is the exercise the request named, if it named one.
        case image(id: String?)
        case other
    }

    private let lock = NSLock()
    private var stats = FixtureStats()
    private var log: [FixtureRequestRecord] = []

    /// Every image and list request answered since the last reset, in order.
    var requestLog: [FixtureRequestRecord] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    var snapshot: FixtureStats {
        lock.lock()
        defer { lock.unlock() }
        return stats
    }

    func connectionAccepted() {
        lock.lock()
        stats.connectionsAccepted += 1
        lock.unlock()
    }

    func begin() {
        lock.lock()
        stats.inFlight += 1
        stats.maxInFlight = max(stats.maxInFlight, stats.inFlight)
        lock.unlock()
    }

    /// `status` 0 = the connection was reset without a response.
    func record(status: Int, kind: Kind, plannedBytes: Int) {
        lock.lock()
        defer { lock.unlock() }
        stats.totalRequests += 1
        stats.statusCounts[status, default: 0] += 1
        stats.bytesSent += plannedBytes
        if status == 304 { stats.notModified += 1 }
        switch kind {
        case .list:
            stats.listRequests += 1
            log.append(FixtureRequestRecord(exerciseID: nil, status: status, answeredAt: Date()))
        case .image(let id):
            stats.imageRequests += 1
            if let id { stats.requestsByExercise[id, default: 0] += 1 }
            log.append(FixtureRequestRecord(exerciseID: id, status: status, answeredAt: Date()))
        case .other: break
        }
    }

    func finish(unsentBytes: Int) {
        lock.lock()
        stats.inFlight -= 1
        stats.bytesSent = max(0, stats.bytesSent - unsentBytes)
        lock.unlock()
    }

    /// Zeroes every counter except the requests in flight now, which also become the new peak.
    func reset() {
        lock.lock()
        let inFlight = stats.inFlight
        stats = FixtureStats()
        log = []
        stats.inFlight = inFlight
        stats.maxInFlight = inFlight
        lock.unlock()
    }
}

/// One answered request: the exercise an image request named (nil for list pages), the status
/// (0: reset without a response) and when the answer went out.
public struct FixtureRequestRecord: Sendable, Equatable {
    public var exerciseID: String?
    public var status: Int
    public var answeredAt: Date
}

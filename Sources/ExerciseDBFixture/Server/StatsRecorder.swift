import Foundation
import Synchronization

/// Thread-safe accumulation of ``FixtureStats``. A response is recorded before its bytes are
/// written, so a client that has read a whole response always finds it counted; only `inFlight`
/// and any bytes that could not be written are settled afterwards.
///
/// ```swift
/// recorder.begin()
/// recorder.record(status: 200, kind: .image(id: "0001"), plannedBytes: 1234)
/// recorder.finish(unsentBytes: 0)
/// ```
final class StatsRecorder: Sendable {
    /// What kind of route a request hit.
    enum Kind: Equatable {
        case list
        /// `id` is the exercise the request named, if it named one.
        case image(id: String?)
        case other
    }

    private struct State {
        var stats = FixtureStats()
        var log: [FixtureRequestRecord] = []
    }

    private let state = Mutex(State())

    /// Every image and list request answered since the last reset, in order.
    var requestLog: [FixtureRequestRecord] { state.withLock { $0.log } }

    var snapshot: FixtureStats { state.withLock { $0.stats } }

    func connectionAccepted() {
        state.withLock { $0.stats.connectionsAccepted += 1 }
    }

    func begin() {
        state.withLock { state in
            state.stats.inFlight += 1
            state.stats.maxInFlight = max(state.stats.maxInFlight, state.stats.inFlight)
        }
    }

    /// `status` 0 = the connection was reset without a response.
    func record(status: Int, kind: Kind, plannedBytes: Int) {
        state.withLock { state in
            state.stats.totalRequests += 1
            state.stats.statusCounts[status, default: 0] += 1
            state.stats.bytesSent += plannedBytes
            if status == 304 { state.stats.notModified += 1 }
            switch kind {
            case .list:
                state.stats.listRequests += 1
                state.log.append(FixtureRequestRecord(exerciseID: nil, status: status, answeredAt: Date()))
            case .image(let id):
                state.stats.imageRequests += 1
                if let id { state.stats.requestsByExercise[id, default: 0] += 1 }
                state.log.append(FixtureRequestRecord(exerciseID: id, status: status, answeredAt: Date()))
            case .other: break
            }
        }
    }

    func finish(unsentBytes: Int) {
        state.withLock { state in
            state.stats.inFlight -= 1
            state.stats.bytesSent = max(0, state.stats.bytesSent - unsentBytes)
        }
    }

    /// Zeroes every counter except the requests in flight now, which also become the new peak.
    func reset() {
        state.withLock { state in
            let inFlight = state.stats.inFlight
            state = State()
            state.stats.inFlight = inFlight
            state.stats.maxInFlight = inFlight
        }
    }
}

/// One answered request: the exercise an image request named (nil for list pages), the status
/// (0: reset without a response) and when the answer went out.
package struct FixtureRequestRecord: Sendable, Equatable {
    package var exerciseID: String?
    package var status: Int
    package var answeredAt: Date
}

/// Counters of what a ``FixtureServer`` has served since start or the last
/// ``FixtureServer/resetStats()``. Control routes (`/__stats`, `/__reset`) are not counted.
///
/// `bytesSent` counts every byte written to sockets, heads included. `statusCounts` keys are
/// HTTP statuses; key 0 counts connections reset without a response. It encodes as JSON with
/// string keys (`{"200": 12}`), which is what `GET /__stats` returns.
///
/// ```swift
/// let stats = server.stats
/// #expect(stats.imageRequests == 3 && stats.statusCounts[200] == 3)
/// ```
package struct FixtureStats: Sendable, Equatable, Codable {
    package var totalRequests = 0
    /// TCP connections accepted: with keep-alive, far fewer than requests.
    package var connectionsAccepted = 0
    /// `/image` and `/media/<id>.gif` requests.
    package var imageRequests = 0
    /// `/exercises` and `/api/v1/exercises` requests.
    package var listRequests = 0
    /// 304 answers to conditional image requests.
    package var notModified = 0
    package var bytesSent = 0
    /// Requests read whose response is not fully written yet.
    package var inFlight = 0
    /// The peak of ``inFlight``.
    package var maxInFlight = 0
    /// Image requests per exercise id, as the request named it.
    package var requestsByExercise: [String: Int] = [:]
    package var statusCounts: [Int: Int] = [:]

    package init() {}
}

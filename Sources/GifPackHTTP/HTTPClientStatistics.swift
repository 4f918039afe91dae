/// Counters of an ``HTTPClient`` since it was made, read with ``HTTPClient/statistics``.
///
/// `connectionsOpened` sums curl's `CURLINFO_NUM_CONNECTS` over finished transfers: with keep-alive
/// working it stays far below `requestsStarted`.
///
/// ```swift
/// let stats = client.statistics
/// print("\(stats.requestsStarted) requests over \(stats.connectionsOpened) connections, peak \(stats.maxInFlight)")
/// ```
public struct HTTPClientStatistics: Sendable, Equatable {
    /// Transfers handed to curl (queued requests count once they start; each followed redirect
    /// is a transfer of its own).
    public var requestsStarted = 0
    /// Transfers that ended with a response (any status).
    public var requestsCompleted = 0
    /// Transfers that ended with an ``HTTPError`` other than ``HTTPError/cancelled``.
    public var requestsFailed = 0
    /// Requests cancelled by their task or by ``HTTPClient/shutdown()`` once submitted to the loop
    /// (queued or running); a task cancelled before it submitted is not counted.
    public var requestsCancelled = 0
    /// Transfers in curl right now (connecting or transferring); at most the client's
    /// `maxConnections`.
    public var currentlyInFlight = 0
    /// Requests waiting for a free slot before they reach curl.
    public var currentlyQueued = 0
    /// Highest ``currentlyInFlight`` seen.
    public var maxInFlight = 0
    /// New connections curl opened (the rest were reused).
    public var connectionsOpened = 0
    /// Body bytes received, after content decoding.
    public var bytesReceived: Int64 = 0

    public init() {}
}

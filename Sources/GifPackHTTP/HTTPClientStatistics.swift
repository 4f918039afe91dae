/// Counters of an ``HTTPClient`` since it was made, read with ``HTTPClient/statistics``.
///
/// `connectionsOpened` sums curl's `CURLINFO_NUM_CONNECTS` over finished transfers: with keep-alive
/// working it stays far below `requestsStarted`.
///
/// ```swift
/// let stats = client.statistics
/// print("\(stats.requestsStarted) requests over \(stats.connectionsOpened) connections, peak \(stats.maxInFlight)")
/// ```
package struct HTTPClientStatistics: Sendable, Equatable {
    /// Transfers handed to curl (queued requests count once they start; each followed redirect
    /// is a transfer of its own).
    package var requestsStarted = 0
    /// Transfers that ended with a response (any status).
    package var requestsCompleted = 0
    /// Transfers that ended with an ``HTTPError`` other than ``HTTPError/cancelled``.
    package var requestsFailed = 0
    /// Requests cancelled by their task or by ``HTTPClient/shutdown()`` once submitted to the loop
    /// (queued or running); a task cancelled before it submitted is not counted.
    package var requestsCancelled = 0
    /// Requests their ``HTTPAdmission`` declined when their turn came (never sent).
    package var requestsNotAdmitted = 0
    /// Transfers in curl right now (connecting or transferring); at most the client's
    /// `maxConnections`.
    package var currentlyInFlight = 0
    /// Requests waiting for a free slot before they reach curl.
    package var currentlyQueued = 0
    /// Highest ``currentlyInFlight`` seen.
    package var maxInFlight = 0
    /// New connections curl opened (the rest were reused).
    package var connectionsOpened = 0
    /// Body bytes received, after content decoding.
    package var bytesReceived: Int64 = 0
    /// Transfers in flight integrated over time, in seconds, up to ``inFlightChangedAt``: three
    /// transfers for two seconds count six. Over a stretch of time, its growth against the window
    /// times the stretch says how full the window was (see ``inFlightSeconds(at:)``).
    package var inFlightSecondsUntilChange: Double = 0
    /// When ``currentlyInFlight`` last changed.
    package var inFlightChangedAt: ContinuousClock.Instant?

    package init() {}

    /// ``inFlightSecondsUntilChange`` carried on to `now` at the current ``currentlyInFlight``.
    ///
    /// ```swift
    /// let (t0, s0) = (ContinuousClock.now, client.statistics)
    /// // … requests …
    /// let (t1, s1) = (ContinuousClock.now, client.statistics)
    /// let use = (s1.inFlightSeconds(at: t1) - s0.inFlightSeconds(at: t0)) / (3 * Double((t1 - t0).components.seconds))
    /// ```
    package func inFlightSeconds(at now: ContinuousClock.Instant) -> Double {
        guard let changed = inFlightChangedAt, now > changed else { return inFlightSecondsUntilChange }
        let elapsed = now - changed
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return inFlightSecondsUntilChange + Double(currentlyInFlight) * seconds
    }

    /// Sets ``currentlyInFlight``, first adding the time at the old count to the integral.
    mutating func setInFlight(_ count: Int, at now: ContinuousClock.Instant = .now) {
        inFlightSecondsUntilChange = inFlightSeconds(at: now)
        inFlightChangedAt = now
        currentlyInFlight = count
    }
}

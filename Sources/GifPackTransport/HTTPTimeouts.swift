/// The time limits of one request. `HTTPClient` (GifPackHTTP) hands each to curl, as below;
/// ``URLSessionTransport`` enforces ``total`` and the low-speed rate itself and uses the low-speed
/// window (else the total) as the session's idle timeout, which covers connecting too.
///
/// - ``connect``: name resolution plus TCP and TLS handshakes (`CURLOPT_CONNECTTIMEOUT_MS`).
/// - ``total``: the whole transfer, body included (`CURLOPT_TIMEOUT_MS`); zero means no limit.
/// - ``lowSpeedBytesPerSecond`` / ``lowSpeedWindow``: abort when the transfer stays below that rate
///   for the whole window (`CURLOPT_LOW_SPEED_LIMIT` / `CURLOPT_LOW_SPEED_TIME`, whole seconds,
///   at least one); a rate of zero disables the check.
///
/// All three end the request with ``HTTPError/timedOut(_:)``.
///
/// ```swift
/// let timeouts = HTTPTimeouts(connect: .seconds(5), total: .seconds(60),
///                             lowSpeedBytesPerSecond: 512, lowSpeedWindow: .seconds(20))
/// let request = HTTPRequest(url: url, timeouts: timeouts)
/// ```
public struct HTTPTimeouts: Sendable, Equatable {
    public var connect: TimeSpan = .seconds(10)
    public var total: TimeSpan = .seconds(120)
    public var lowSpeedBytesPerSecond: Int = 1024
    public var lowSpeedWindow: TimeSpan = .seconds(30)

    public init(connect: TimeSpan = .seconds(10), total: TimeSpan = .seconds(120),
                lowSpeedBytesPerSecond: Int = 1024, lowSpeedWindow: TimeSpan = .seconds(30)) {
        self.connect = connect
        self.total = total
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.lowSpeedWindow = lowSpeedWindow
    }
}

import Foundation

/// The time limits of requests, the same in both transports. `HTTPClient` (GifPackHTTP) hands
/// them to curl; ``URLSessionTransport`` enforces them itself.
///
/// - ``connect``: name resolution plus TCP and TLS handshakes (`CURLOPT_CONNECTTIMEOUT_MS`;
///   `URLSession` has no equivalent: the low-speed window covers connecting there).
/// - ``total``: one request, body included, from the moment it is sent (`CURLOPT_TIMEOUT_MS`);
///   zero means no limit.
/// - ``lowSpeedBytesPerSecond`` / ``lowSpeedWindow``: abort when fewer bytes than that rate come
///   in over a whole window, the first window counted from the moment the request is sent (a
///   server that accepts and never answers ends after one window, in both transports). Whole
///   seconds, at least one; a rate of zero disables the check.
/// - ``deadline``: the longest one call of the client library may take — an install, one GIF on
///   demand, an index load — every request and retry in it included (nil: no such limit). The
///   call turns it into an instant when it starts (`startingCall()`); a request running then
///   ends, and one started after it fails at once without being sent. A transport used directly
///   counts it from the request.
///
/// All of them end a request with ``HTTPError/timedOut(_:)``, whose message names the limit that
/// was hit and what to check.
///
/// ```swift
/// var timeouts = HTTPTimeouts(connect: .seconds(5), total: .seconds(60),
///                             lowSpeedBytesPerSecond: 512, lowSpeedWindow: .seconds(20))
/// timeouts.deadline = .seconds(300)          // a cron job's install gives up after five minutes
/// let request = HTTPRequest(url: url, timeouts: timeouts)
/// ```
public struct HTTPTimeouts: Sendable, Equatable {
    /// Name resolution plus the TCP and TLS handshakes (10 s by default).
    public var connect: TimeSpan = .seconds(10)
    /// One request, body included, from the moment it is sent (120 s by default; zero: no limit).
    public var total: TimeSpan = .seconds(120)
    /// The slowest rate a request may keep up over a whole ``lowSpeedWindow`` (1024 bytes/s by default; zero: no check).
    public var lowSpeedBytesPerSecond: Int = 1024
    /// The window the low-speed rate is measured over (30 s by default).
    public var lowSpeedWindow: TimeSpan = .seconds(30)
    /// The longest one call may take, all its requests and retries included; nil: no limit.
    public var deadline: TimeSpan?
    /// When the running call's ``deadline`` passes (set by `startingCall()`), as a
    /// `TimeSpan/now()` reading of the monotonic clock.
    package var callEnds: UInt64?

    /// These limits (the defaults: 10 s to connect, 120 s a request, less than 1 KB/s over 30 s, no deadline).
    public init(
        connect: TimeSpan = .seconds(10.0), total: TimeSpan = .seconds(120.0),
        lowSpeedBytesPerSecond: Int = 1024, lowSpeedWindow: TimeSpan = .seconds(30.0), deadline: TimeSpan? = nil
    ) {
        self.connect = connect
        self.total = total
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.lowSpeedWindow = lowSpeedWindow
        self.deadline = deadline
    }

    /// These limits for a call starting now: its ``deadline`` becomes an instant every request
    /// of the call shares. A call inside another keeps the outer call's instant.
    package func startingCall() -> HTTPTimeouts {
        var started = self
        if started.callEnds == nil, let deadline { started.callEnds = Self.instant(TimeSpan.now(), plus: deadline) }
        return started
    }

    /// The instant a request sent now must end by because of ``deadline`` (nil: none).
    /// Instants are `TimeSpan/now()` readings (monotonic nanoseconds).
    package func deadlineInstant(from now: UInt64) -> UInt64? {
        callEnds ?? deadline.map { Self.instant(now, plus: $0) }
    }

    /// `instant` moved on by `span` (a negative span counts as none), held at the clock's end.
    package static func instant(_ instant: UInt64, plus span: TimeSpan) -> UInt64 {
        let sum = instant.addingReportingOverflow(UInt64(max(0, span.nanoseconds)))
        return sum.overflow ? .max : sum.partialValue
    }

    /// The message of a request to `url` ended by ``deadline``: the limit, and what to check.
    package func deadlineMessage(for url: String) -> String {
        let limit = deadline.map { "of \(Self.text($0)) " } ?? ""
        return "the call's deadline \(limit)passed (HTTPTimeouts.deadline, gifpack --deadline) while waiting for \(Self.host(of: url)): "
            + "check that it answers at a usable speed and that the network is up, or allow more time"
    }

    /// The message of a request to `url` ended by the low-speed limit: the limit, and what to check.
    package func lowSpeedMessage(for url: String) -> String {
        "too slow: less than \(lowSpeedBytesPerSecond) bytes/s came from \(Self.host(of: url)) over \(Self.text(lowSpeedWindow)), "
            + "counted from the request on (HTTPTimeouts.lowSpeedWindow): check that it answers and that the network is up"
    }

    /// The message of a request to `url` ended by ``total``.
    package func totalMessage(for url: String) -> String {
        "the transfer from \(Self.host(of: url)) took longer than \(Self.text(total)) (total limit, HTTPTimeouts.total): "
            + "check that it answers at a usable speed, or allow more time"
    }

    /// The host a message names: never the URL's user name or password, nor its path or query.
    package static func host(of url: String) -> String {
        URL(string: url)?.host ?? "the server"
    }

    /// "30 s", "1.5 s".
    static func text(_ span: TimeSpan) -> String {
        guard span.nanoseconds % 1_000_000_000 != 0 else { return "\(span.nanoseconds / 1_000_000_000) s" }
        return "\((span.seconds * 1000).rounded() / 1000) s"
    }
}

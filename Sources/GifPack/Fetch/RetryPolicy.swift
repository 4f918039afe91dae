import Foundation

/// When and how long to wait before trying a request again.
///
/// Exponential backoff with full jitter: before attempt n+1 the wait is a random duration between
/// zero and `min(maxDelay, baseDelay * 2^(n-1))`. A `Retry-After` header (seconds or an HTTP date)
/// on a 429 or 503 replaces the computed wait, bounded by `maxRetryAfter`.
///
/// ```swift
/// let policy = RetryPolicy()            // 4 attempts, 500 ms base, 30 s cap
/// policy.delay(beforeAttempt: 2)        // 0 ..< 500 ms
/// RetryPolicy.parseRetryAfter("2", now: Date())   // 2 s
/// ```
package struct RetryPolicy: Sendable, Equatable {
    /// Total attempts per request, the first included.
    package var maxAttempts: Int = 4
    package var baseDelay: Duration = .milliseconds(500)
    package var maxDelay: Duration = .seconds(30)
    /// The longest `Retry-After` obeyed; longer values are cut to this.
    package var maxRetryAfter: Duration = .seconds(120)

    package init() {}

    /// Statuses worth another attempt (other failures: ``RejectionReason/isRetryable``).
    package static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The full-jitter backoff before `attempt` (2 for the first retry).
    package func delay(beforeAttempt attempt: Int, random: Double = Double.random(in: 0..<1)) -> Duration {
        let exponent = max(0, attempt - 2)
        let ceiling = min(maxDelay.milliseconds, baseDelay.milliseconds * Double(1 << min(exponent, 30)))
        return .milliseconds(Int64(ceiling * random))
    }

    /// Parses `Retry-After` in either form (delta seconds or HTTP date), bounded by `maxRetryAfter`.
    package func retryAfter(_ header: String?, now: Date = Date()) -> Duration? {
        guard let header, let wait = Self.parseRetryAfter(header, now: now) else { return nil }
        return min(wait, maxRetryAfter)
    }

    package static func parseRetryAfter(_ header: String, now: Date) -> Duration? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return seconds >= 0 ? .seconds(seconds) : nil }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return .milliseconds(Int64(max(0, date.timeIntervalSince(now)) * 1000))
            }
        }
        return nil
    }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}

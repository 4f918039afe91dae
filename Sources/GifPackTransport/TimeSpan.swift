import Foundation

/// A length of time in whole nanoseconds: the time limits of a request (``HTTPTimeouts``), how
/// long one took (`HTTPDownload/elapsed`), how long a cached index stays fresh.
///
/// The client's own type rather than the standard library's `Duration`, which needs iOS 16 /
/// macOS 13: the client runs from iOS 15 / macOS 12 (README, "Platforms"). It is spelled like
/// `Duration` (`.seconds(30)`, `.milliseconds(400)`, `.zero`, comparisons, `+`); GifPackHTTP
/// (Linux) converts from `Duration` for the builder's settings.
///
/// ```swift
/// let timeouts = HTTPTimeouts(total: .seconds(60), lowSpeedWindow: .milliseconds(20_000))
/// if download.elapsed > .seconds(5) { print("slow: \(download.elapsed.seconds) s") }
/// ```
public struct TimeSpan: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The length in nanoseconds (negative for a span backwards).
    package var nanoseconds: Int64

    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    package static let zero = TimeSpan(nanoseconds: 0)

    /// `seconds` whole seconds.
    package static func seconds(_ seconds: Int) -> TimeSpan { TimeSpan(nanoseconds: scaled(Int64(seconds), 1_000_000_000)) }
    /// `seconds` seconds, fraction included (`.seconds(30)`, `.seconds(1.5)`), held at the ends of `Int64`'s nanoseconds.
    public static func seconds(_ seconds: Double) -> TimeSpan {
        let nanoseconds = (seconds * 1e9).rounded()
        guard nanoseconds.isFinite else { return TimeSpan(nanoseconds: seconds < 0 ? .min : .max) }
        return TimeSpan(nanoseconds: nanoseconds >= 9.2e18 ? .max : nanoseconds <= -9.2e18 ? .min : Int64(nanoseconds))
    }
    /// `milliseconds` thousandths of a second.
    public static func milliseconds(_ milliseconds: Int) -> TimeSpan { TimeSpan(nanoseconds: scaled(Int64(milliseconds), 1_000_000)) }
    package static func microseconds(_ microseconds: Int) -> TimeSpan { TimeSpan(nanoseconds: scaled(Int64(microseconds), 1_000)) }

    /// The length in seconds, with its fraction.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public var description: String { "\(seconds) seconds" }

    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    package static func + (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
        let sum = lhs.nanoseconds.addingReportingOverflow(rhs.nanoseconds)
        return TimeSpan(nanoseconds: sum.overflow ? (rhs.nanoseconds > 0 ? .max : .min) : sum.partialValue)
    }
    package static func += (lhs: inout TimeSpan, rhs: TimeSpan) { lhs = lhs + rhs }

    /// A point on the monotonic clock (uptime, not wall time), to measure a span from.
    package static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The time since `start`, a value of ``now()``.
    package static func since(_ start: UInt64) -> TimeSpan {
        let now = DispatchTime.now().uptimeNanoseconds
        return TimeSpan(nanoseconds: now >= start ? Int64(clamping: now - start) : 0)
    }

    /// `value * factor`, held at the ends of `Int64` instead of trapping.
    private static func scaled(_ value: Int64, _ factor: Int64) -> Int64 {
        let product = value.multipliedReportingOverflow(by: factor)
        return product.overflow ? (value < 0 ? .min : .max) : product.partialValue
    }
}

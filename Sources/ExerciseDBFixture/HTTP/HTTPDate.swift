import Glibc

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) formatting and parsing for `Date`,
/// `Last-Modified`, `If-Modified-Since` and `Retry-After`, on plain epoch seconds: thread-safe
/// and locale-free, unlike `DateFormatter`.
///
/// ```swift
/// HTTPDate.format(0)                                   // "Thu, 01 Jan 1970 00:00:00 GMT"
/// HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT")      // 0
/// ```
enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The current time in whole epoch seconds.
    static func now() -> Int { Int(time(nil)) }

    static func format(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Epoch seconds of an IMF-fixdate, or nil when the text is not one.
    static func parse(_ text: String) -> Int? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT",
            let day = Int32(fields[1]), let month = months.firstIndex(of: String(fields[2])),
            let year = Int32(fields[3])
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        return Int(timegm(&parts))
    }
}

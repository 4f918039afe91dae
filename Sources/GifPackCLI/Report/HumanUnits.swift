import Foundation
import GifPack

/// Short human forms of byte counts, rates and durations, shared by the progress line, the log
/// lines and the CI summary so they all read the same. Decimal (SI) units, as `ls --si` and
/// download tools print them.
///
/// ```swift
/// HumanUnits.bytes(2_150_000)          // "2.2 MB"
/// HumanUnits.rate(350_000)             // "350 kB/s"
/// HumanUnits.duration(65)              // "1m05s"
/// ```
enum HumanUnits {
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 999.5, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        return (value < 9.95 ? String(format: "%.1f", value) : String(format: "%.0f", value)) + " " + units[unit]
    }

    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond >= 0 else { return "-" }
        return bytes(Int64(bytesPerSecond.rounded())) + "/s"
    }

    /// `4.2s` under a minute, `1m05s` under an hour, then `2h03m`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 10 { return String(format: "%.1fs", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}

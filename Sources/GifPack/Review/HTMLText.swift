/// The one escaping of untrusted text (exercise names, ids, body parts, pack names, locations)
/// into HTML: every character that could end a text node or an attribute value (`& < > " '`)
/// becomes its character reference, so a name like `<script>` or `"onerror=` shows as written.
/// Control characters other than tab and newline are dropped. Used for text and for quoted
/// attribute values alike; nothing from the API becomes a URL (images are named by hash).
///
/// ```swift
/// HTMLText.escaped("<b>\"x\"</b>")   // "&lt;b&gt;&quot;x&quot;&lt;/b&gt;"
/// ```
enum HTMLText {
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A byte count with thousands separators ("12,345 B").
    static func bytes(_ count: Int64) -> String {
        let digits = String(count.magnitude)
        var grouped = ""
        for (position, character) in digits.enumerated() {
            if position > 0 && (digits.count - position) % 3 == 0 { grouped += "," }
            grouped.append(character)
        }
        return (count < 0 ? "−" : "") + grouped + " B"
    }

    /// A signed change in bytes ("+1,024 B", "−512 B", "±0 B").
    static func delta(_ change: Int64) -> String {
        change == 0 ? "±0 B" : (change > 0 ? "+" : "") + bytes(change)
    }
}

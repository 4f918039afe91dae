import GifPackSystem

/// The one escaping of untrusted text (exercise names, ids, body parts, pack names, locations)
/// into HTML: every character that could end a text node or an attribute value (`& < > " '`)
/// becomes its character reference, so a name like `<script>` or `"onerror=` shows as written.
/// Every character a terminal must not get raw (``TerminalText/isUnsafe(_:)``: control characters
/// other than tab and newline, and the Unicode bidi overrides, embeddings, isolates and marks that
/// would display the rest of a line reversed) is shown as the terminal shows it, `\u{202e}`: one
/// helper for the page and the terminal. Used for text and for quoted attribute values alike;
/// nothing from the API becomes a URL (images are named by hash).
///
/// ```swift
/// HTMLText.escaped("<b>\"x\"</b>")   // "&lt;b&gt;&quot;x&quot;&lt;/b&gt;"
/// HTMLText.escaped("curl\u{202E}fig.exe")   // "curl\\u{202e}fig.exe"
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
            case _ where TerminalText.isUnsafe(scalar): result += TerminalText.escaped(String(scalar))
            default: result.unicodeScalars.append(scalar)
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

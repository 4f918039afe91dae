/// The one escaping function for untrusted text (ids, names, paths, API messages) shown on a
/// terminal or written to a log.
///
/// Text from an API, an index or a pack may hold characters a terminal acts on: C0 controls
/// (U+0000–U+001F, ESC among them), DEL, C1 controls (U+0080–U+009F: U+009B is a one-character CSI
/// that starts an escape sequence on many terminals), the Unicode bidirectional overrides, embeddings
/// and isolates that reorder what is shown (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
/// and the line and paragraph separators U+2028/U+2029. Each one is shown as an escape instead —
/// `\n`, `\r`, `\t`, or `\u{9b}` — so a line never carries a raw control sequence. Other characters
/// (letters of any script, emoji) pass unchanged unless `asciiOnly` is set.
///
/// ```swift
/// TerminalText.escaped("0001\u{9B}2J")           // "0001\\u{9b}2J"
/// TerminalText.escaped("Übung", asciiOnly: true)  // "\\u{dc}bung"
/// ```
package enum TerminalText {
    /// True for a character that must not reach a terminal raw.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }

    /// `text` with every unsafe character escaped (and every non-ASCII one when `asciiOnly`),
    /// cut to `maxScalars` characters (with `…`) when given.
    package static func escaped(_ text: String, asciiOnly: Bool = false, maxScalars: Int? = nil) -> String {
        let scalars = text.unicodeScalars
        let needsWork = scalars.contains { isUnsafe($0) || (asciiOnly && $0.value > 0x7E) }
        if !needsWork, maxScalars.map({ scalars.count <= $0 }) ?? true { return text }
        var out = ""
        var count = 0
        for scalar in scalars {
            if let maxScalars, count == maxScalars {
                out += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isUnsafe(scalar) || (asciiOnly && scalar.value > 0x7E):
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

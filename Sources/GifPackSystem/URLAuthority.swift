/// Where a URL's authority (`user:password@host:port`) lies in text, read the way that keeps a
/// password secret however it is spelled: the one reading behind `URLCredentials.redacted`
/// (what is printed and recorded) and `CompressedIndex.beside` (where `.zst` goes).
///
/// A password may hold a raw `#`, `?` or `/` that a strict URL parser would take for the start of
/// the fragment, query or path (`https://me:pa#ss@host/index.json`). So the last `@` before the
/// first `/` ends the user information, whatever `?` or `#` comes before it; and an authority
/// without one whose port is not a number (`me:pa` of `https://me:pa/ss@host/…`) is user
/// information up to the next `@`. A URL without a password reads as any parser reads it. Text
/// that is no URL is left alone: the span ends at white space, a control character or the quotes
/// and brackets text puts round a URL.
///
/// ```swift
/// let bytes = Array("https://me:pa#ss@cdn.example.com/index.json".utf8)
/// URLAuthority.span(in: bytes, from: 8)   // host at 17 ("cdn…"), end at 32 (the "/")
/// ```
package enum URLAuthority {
    /// The authority that starts at `start` (just past `://`): where its host begins (after the
    /// user information, if any) and where it ends (the path, query or fragment, or the text's end).
    package static func span(in bytes: [UInt8], from start: Int) -> (host: Int, end: Int) {
        var tokenEnd = start
        while tokenEnd < bytes.count, !endsText(bytes[tokenEnd]) { tokenEnd += 1 }
        let pathStart = bytes[start..<tokenEnd].firstIndex(of: UInt8(ascii: "/")) ?? tokenEnd
        var at = bytes[start..<pathStart].lastIndex(of: UInt8(ascii: "@"))
        if at == nil {
            // `user:pa/ss@host`: an authority whose port is no number is user information.
            let plainEnd = bytes[start..<tokenEnd].firstIndex(where: endsPlainAuthority) ?? tokenEnd
            if hasNonNumericPort(bytes[start..<plainEnd]) {
                at = bytes[plainEnd..<tokenEnd].firstIndex(of: UInt8(ascii: "@"))
            }
        }
        let host = at.map { $0 + 1 } ?? start
        let end = bytes[host..<tokenEnd].firstIndex(where: endsPlainAuthority) ?? tokenEnd
        return (host, end)
    }

    /// The index just past the next `://` at or after `start`, nil when there is none.
    package static func schemeSeparatorEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") {
                return index + 3
            }
            index += 1
        }
        return nil
    }

    /// `host:port` whose port is not digits (`[::1]` and `host:8080` are not).
    private static func hasNonNumericPort(_ authority: ArraySlice<UInt8>) -> Bool {
        guard authority.first != UInt8(ascii: "["), let colon = authority.lastIndex(of: UInt8(ascii: ":")) else { return false }
        return !authority[(colon + 1)...].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The start of the path, query or fragment.
    private static func endsPlainAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// A byte no URL in text holds unencoded: white space, control characters and the quotes and
    /// brackets text puts round a URL.
    private static func endsText(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"),
            UInt8(ascii: "("), UInt8(ascii: ")"), 0x7F:
            true
        default:
            byte <= 0x20
        }
    }
}

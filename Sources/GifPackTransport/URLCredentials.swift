/// The one rule for credentials in URLs: a user name and password (`https://user:pw@host/…`) may be
/// used to make a request, and are dropped from every URL the client or the command line records
/// (an install manifest, a cache slot) or prints (error messages, reports).
///
/// ``redacted(_:)`` takes any text: each `scheme://` in it loses the `userinfo@` of its authority
/// (everything up to the authority's last `@`); text without `@` is returned as it is.
///
/// ```swift
/// URLCredentials.redacted("cannot read http://me:s3cret@cdn.example.com/index.json: HTTP status 404")
/// // "cannot read http://cdn.example.com/index.json: HTTP status 404"
/// ```
public enum URLCredentials {
    public static func redacted(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")), text.utf8.contains(UInt8(ascii: ":")) else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var position = 0
        while position < bytes.count {
            guard let authority = schemeSeparatorEnd(bytes, from: position) else {
                result += bytes[position...]
                break
            }
            result += bytes[position..<authority]
            var end = authority
            while end < bytes.count, !endsAuthority(bytes[end]) { end += 1 }
            let at = bytes[authority..<end].lastIndex(of: UInt8(ascii: "@"))
            result += bytes[(at.map { $0 + 1 } ?? authority)..<end]
            position = end
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The index just past the next `://` at or after `start`, nil when there is none.
    private static func schemeSeparatorEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 2 < bytes.count {
            if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") {
                return index + 3
            }
            index += 1
        }
        return nil
    }

    /// True for a byte an authority cannot hold unencoded: the start of the path, query or
    /// fragment, white space, control characters and the quotes and brackets text puts round a URL.
    private static func endsAuthority(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "'"),
             UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"), UInt8(ascii: "("), UInt8(ascii: ")"), 0x7F:
            true
        default:
            byte <= 0x20
        }
    }
}

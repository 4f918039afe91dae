import GifPackSystem

/// The one rule for credentials in URLs: a user name and password (`https://user:pw@host/…`) may be
/// used to make a request, and are dropped from every URL the client or the command line records
/// (an install manifest, a cache slot) or prints (error messages, reports).
///
/// ``redacted(_:)`` takes any text: each `scheme://` in it loses the `userinfo@` of its authority,
/// read as `URLAuthority` (GifPackSystem) reads it (a password with a raw `#`, `?` or `/` included: everything up
/// to the last `@` before the first `/`); text without `@` is returned as it is.
///
/// ```swift
/// URLCredentials.redacted("cannot read http://me:s3cret@cdn.example.com/index.json: HTTP status 404")
/// // "cannot read http://cdn.example.com/index.json: HTTP status 404"
/// ```
package enum URLCredentials {
    package static func redacted(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")), text.utf8.contains(UInt8(ascii: ":")) else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var position = 0
        while position < bytes.count {
            guard let authority = URLAuthority.schemeSeparatorEnd(bytes, from: position) else {
                result += bytes[position...]
                break
            }
            result += bytes[position..<authority]
            let span = URLAuthority.span(in: bytes, from: authority)
            result += bytes[span.host..<span.end]
            position = span.end
        }
        return String(decoding: result, as: UTF8.self)
    }
}

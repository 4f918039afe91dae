import Foundation

/// `If-None-Match` / `If-Modified-Since` evaluation for GIF responses (RFC 9110 §13): when
/// `If-None-Match` is present it alone decides (weak comparison, `*` matches anything);
/// otherwise `If-Modified-Since` does.
///
/// ```swift
/// ConditionalRequest.isNotModified(request, etag: gif.etag, lastModified: gif.lastModified)
/// ```
enum ConditionalRequest {
    static func isNotModified(_ request: HTTPRequest, etag: String, lastModified: Int) -> Bool {
        if let candidates = request.header("if-none-match") {
            let ownTag = opaque(etag)
            return candidates.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingCharacters(in: .whitespaces)
                return tag == "*" || opaque(tag) == ownTag
            }
        }
        if let since = request.header("if-modified-since").flatMap(HTTPDate.parse) {
            return lastModified <= since
        }
        return false
    }

    /// The tag without a weakness prefix: `W/"abc"` and `"abc"` compare equal.
    private static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}

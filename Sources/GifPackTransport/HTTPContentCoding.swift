/// What both transports ask for and accept in `Accept-Encoding` / `Content-Encoding`.
///
/// - A request with ``HTTPRequest/acceptCompressedBody`` (JSON) accepts what the transport decodes
///   (curl: gzip, deflate, br, zstd; `URLSession`: gzip, deflate, and br on Apple platforms) and
///   hands back the decoded body.
/// - Every other request is for a file's own bytes (`index.json.zst`, packs, signatures, byte
///   ranges): it is sent with `Accept-Encoding: identity` (unless the caller set the field), and a
///   successful answer (2xx) with any other `Content-Encoding` fails with
///   ``HTTPError/transport(code:message:)`` and ``HTTPError/unrequestedEncodingCode`` before any
///   body byte is taken, whichever transport ran it. Such a file is compressed already and its
///   SHA-256 is of its own bytes: a server or CDN compressing it on the fly despite `identity` is
///   misconfigured, and the message says so.
///
/// ```swift
/// if let refusal = HTTPContentCoding.refusal(of: head, for: request) { fail(refusal) }
/// ```
package enum HTTPContentCoding {
    /// The `Accept-Encoding` of a request for a file's own bytes.
    package static let identity = "identity"

    /// The `Accept-Encoding` value the transport must send itself for `request`: `identity` when it
    /// asks for a file's own bytes and the caller set no `Accept-Encoding`; nil otherwise.
    package static func acceptEncoding(for request: HTTPRequest) -> String? {
        guard !request.acceptCompressedBody, !request.headers.contains(name: "Accept-Encoding") else { return nil }
        return identity
    }

    /// The failure for an answer `head` to `request` that carries a content coding the request did
    /// not accept; nil when the answer may be taken.
    package static func refusal(of head: HTTPResponseHead, for request: HTTPRequest) -> HTTPError? {
        guard acceptEncoding(for: request) != nil, (200..<300).contains(head.status), head.status != 204,
            request.method != .head, let coding = head.headers["content-encoding"]
        else { return nil }
        let codings = coding.split(separator: ",").map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
        guard codings.contains(where: { $0 != identity }) else { return nil }
        return .transport(
            code: HTTPError.unrequestedEncodingCode,
            message: "the server answered with Content-Encoding: \(codings.joined(separator: ", ")) although the request "
                + "asked for the file's own bytes (Accept-Encoding: identity); the file is compressed already and checked "
                + "by its SHA-256: turn off on-the-fly compression for it at the server or CDN")
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

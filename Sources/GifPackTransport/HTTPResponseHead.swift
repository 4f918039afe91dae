/// Status line and header fields of the final response of a request.
///
/// Interim heads (`100 Continue`, and the 3xx heads of followed redirects) are dropped: the
/// headers are those of the response whose body was delivered.
///
/// ```swift
/// let download = try await client.download(request, to: path, maxBytes: limit)
/// if download.head.status == 200, download.head.contentType == "image/gif" { … }
/// download.head.httpVersion            // "1.1", "2"
/// download.head.headers["ETag"]        // case-insensitive
/// ```
public struct HTTPResponseHead: Sendable, Equatable {
    /// The status code, e.g. 200.
    public var status: Int
    /// The protocol version of the response: "1.0", "1.1", "2" or "3"; empty when the transport
    /// cannot tell (``URLSessionTransport``).
    package var httpVersion: String
    /// The response header fields, in order.
    public var headers: HTTPHeaders

    /// A final response's head (`httpVersion` empty when the transport cannot tell).
    public init(status: Int, httpVersion: String, headers: HTTPHeaders) {
        self.status = status
        self.httpVersion = httpVersion
        self.headers = headers
    }

    /// The `Content-Type` field, verbatim (parameters included), or nil.
    package var contentType: String? { headers["content-type"] }
}

/// A response the fixture will write, and how it will be written: completely, cut short,
/// dripped, or not at all (connection reset). The delivery is what lets faults misbehave at the
/// byte level.
///
/// ```swift
/// var response = HTTPResponse(status: 200, contentType: "image/gif", body: gif)
/// response.delivery = .truncated(bodyBytes: gif.count / 2)
/// ```
struct HTTPResponse: Sendable {
    /// How the bytes reach the socket.
    enum Delivery: Sendable, Equatable {
        /// Head and whole body, then the connection stays open if both sides want it.
        case complete
        /// Head (announcing the full length) and this many body bytes, then the connection closes.
        case truncated(bodyBytes: Int)
        /// Head, then the body in small chunks at about this rate.
        case dripped(bytesPerSecond: Int)
        /// Nothing: the connection is reset (SO_LINGER 0, then close).
        case reset
    }

    var status: Int
    /// In order; `Content-Length`, `Date`, `Server` and `Connection` are added when written.
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    var delivery: Delivery = .complete
    /// A HEAD request: announce the length, send no body.
    var omitsBody = false

    init(status: Int, contentType: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.body = body
        if let contentType { headers.append((name: "Content-Type", value: contentType)) }
    }

    mutating func addHeader(_ name: String, _ value: String) {
        headers.append((name: name, value: value))
    }

    /// Replaces every header of that name (case-insensitive) with one of the given value.
    mutating func setHeader(_ name: String, _ value: String) {
        headers.removeAll { $0.name.lowercased() == name.lowercased() }
        headers.append((name: name, value: value))
    }

    /// Whether the status forbids a body (RFC 9110: 1xx, 204, 304).
    var statusForbidsBody: Bool { status == 204 || status == 304 || (100..<200).contains(status) }

    /// Status line and headers, ending with the blank line.
    func head(keepAlive: Bool, date: Int) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(for: status))\r\n"
        text += "Date: \(HTTPDate.format(date))\r\nServer: exercisedb-fixture\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        if !statusForbidsBody { text += "Content-Length: \(body.count)\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The body bytes this delivery writes (none for HEAD, 304 and resets).
    var bodyToWrite: ArraySlice<UInt8> {
        if omitsBody || statusForbidsBody { return [] }
        switch delivery {
        case .complete, .dripped: return body[...]
        case .truncated(let count): return body.prefix(max(0, min(count, body.count)))
        case .reset: return []
        }
    }

    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 422: "Unprocessable Entity"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

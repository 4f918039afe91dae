/// Why a request produced no usable response, whichever ``HTTPTransport`` ran it.
///
/// An HTTP error status is not an `HTTPError`: a 404 or a 500 is a response, returned with its
/// body for the caller to judge. These cases are the transfers that did not complete. Messages
/// come from curl's error buffer and may name the URL or host, never a secret request header value
/// (the API key's value is replaced by `<redacted>` before the error is made).
///
/// ```swift
/// do { _ = try await client.download(request, to: path, maxBytes: 1 << 20) }
/// catch .bodyTooLarge(let limit) { print("more than \(limit) bytes") }
/// catch { print(error.reason, error) } // "timeout", "timed out: too slow: less than 1024 bytes/s came from …"
/// ```
public enum HTTPError: Error, Sendable, Equatable {
    /// The URL is not an absolute http(s) URL curl can parse.
    case invalidURL(String)
    /// The host could not be resolved or connected to.
    case connectFailed(String)
    /// The connect, total or low-speed limit was hit (`CURLE_OPERATION_TIMEDOUT`).
    case timedOut(String)
    /// The connection closed before the announced body length (`CURLE_PARTIAL_FILE`).
    case truncated(expected: Int64?, received: Int64)
    /// The connection broke while sending or receiving, or closed without any response.
    case connectionReset(String)
    /// The body exceeded the caller's byte cap; the transfer was aborted.
    case bodyTooLarge(limit: Int64)
    /// The download file could not be opened, written or closed.
    case fileError(path: String, errno: Int32)
    /// Something other than a regular file (`kind`: "a FIFO", "a symbolic link", …) is where the
    /// body was to be written or read from: refused, nothing was sent or written.
    case notRegularFile(path: String, kind: String)
    /// The awaiting task was cancelled, or the client was shut down.
    case cancelled
    /// The request's `HTTPAdmission` declined it when its turn came: nothing was sent.
    case notAdmitted
    /// The response's header block is larger than curl accepts (a misbehaving or hostile server).
    case headersTooLarge(String)
    /// Any other transport failure: the code and the transport's message. `HTTPClient` gives a
    /// `CURLcode` (positive), ``URLSessionTransport`` a `URLError` code (negative), or
    /// ``rangeNotHonouredCode`` from either.
    case transport(code: Int, message: String)

    /// The ``transport(code:message:)`` code of a resumed request (``HTTPRequest/resumeFrom``) that the
    /// server answered `200` with the whole body: it does not serve ranges, nothing was written.
    /// It is curl's `CURLE_RANGE_ERROR`; ``URLSessionTransport`` uses the same code.
    public static let rangeNotHonouredCode = 33

    /// The ``transport(code:message:)`` code of an answer carrying a `Content-Encoding` the request
    /// did not accept (a request for a file's own bytes, answered compressed; see
    /// ``HTTPRequest/acceptCompressedBody``). It is curl's `CURLE_BAD_CONTENT_ENCODING`; both
    /// transports use it.
    public static let unrequestedEncodingCode = 61

    /// A stable short code for reports and logs.
    package var reason: String {
        switch self {
        case .invalidURL: "invalid-url"
        case .connectFailed: "connect-failed"
        case .timedOut: "timeout"
        case .truncated: "truncated"
        case .connectionReset: "connection-reset"
        case .bodyTooLarge: "too-large"
        case .fileError: "file-error"
        case .notRegularFile: "not-regular-file"
        case .cancelled: "cancelled"
        case .notAdmitted: "not-admitted"
        case .headersTooLarge: "headers-too-large"
        case .transport: "transport"
        }
    }
}

extension HTTPError: CustomStringConvertible {
    /// One line, without any URL's credentials (`URLCredentials`).
    public var description: String { URLCredentials.redacted(rawDescription) }

    private var rawDescription: String {
        switch self {
        case .invalidURL(let url): "invalid URL: \(url)"
        case .connectFailed(let message): "could not connect: \(message)"
        case .timedOut(let message): "timed out: \(message)"
        case .truncated(let expected?, let received): "truncated body: received \(received) of \(expected) bytes"
        case .truncated(nil, let received): "truncated body: the connection closed after \(received) bytes"
        case .connectionReset(let message): "connection reset: \(message)"
        case .bodyTooLarge(let limit): "the body exceeds the limit of \(limit) bytes"
        case .fileError(let path, let code): "cannot write \(path): \(TransportSystem.errorText(code))"
        case .notRegularFile(let path, let kind):
            "\(path) is not a regular file (\(kind)): refused, gifpack opens only regular files and never through a symbolic link"
        case .cancelled: "the request was cancelled"
        case .notAdmitted: "the request was not sent: its admission check declined it"
        case .headersTooLarge(let message): "response headers too large: \(message)"
        case .transport(let code, let message) where code < 0: "transfer failed (URL loading error \(code)): \(message)"
        case .transport(let code, let message): "transfer failed (curl error \(code)): \(message)"
        }
    }
}

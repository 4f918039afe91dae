/// What the client library needs of HTTP: a GET (or HEAD, PUT, DELETE) with its body in memory, or
/// streamed to a file, with a byte cap.
///
/// Two transports implement it: ``URLSessionTransport`` (Foundation's URL loading system, the
/// default of every client API: no C library of the project's) and `HTTPClient` in `GifPackHTTP`
/// (libcurl's multi interface: a private CA from `CURL_CA_BUNDLE`/`SSL_CERT_FILE`, curl's own
/// proxy variables, low-speed limits), which the command-line tool passes. Both give the same
/// meanings:
///
/// - An HTTP error status is a response, returned with its body; ``HTTPError`` is a transfer that
///   did not complete (``HTTPError/bodyTooLarge(limit:)`` past `maxBytes`, ``HTTPError/truncated(expected:received:)``,
///   ``HTTPError/connectionReset(_:)``, ``HTTPError/timedOut(_:)``, ``HTTPError/cancelled`` when the task is cancelled…).
/// - ``HTTPRequest/byteRange``: only a `206` delivers a body; any other final status comes back
///   with its head and an empty body. ``HTTPRequest/resumeFrom`` answered `200` with the whole body fails
///   with ``HTTPError/transport(code:message:)`` and ``HTTPError/rangeNotHonouredCode``, writing nothing.
/// - Request headers (`If-None-Match`, `If-Match`, …) are sent as given, and never cross an origin
///   on a followed redirect; a `304` is handed back as it is (no cache answers in between).
///
/// ```swift
/// let transport: any HTTPTransport = URLSessionTransport()
/// var request = HTTPRequest(url: "https://cdn.example.com/gifpack/packs/all-v3-1a2b3c4d.tar.zst")
/// request.byteRange = 1536...9999
/// let part = try await transport.download(request, to: sparsePath, atOffset: 1536, maxBytes: 8464)
/// ```
public protocol HTTPTransport: Sendable {
    /// Fetches a response with its body in memory; a body longer than `maxBytes` fails with
    /// ``HTTPError/bodyTooLarge(limit:)``.
    func data(_ request: HTTPRequest, maxBytes: Int64) async throws(HTTPError) -> HTTPDataResponse

    /// Streams the body to `path` (created or truncated; appended to with ``HTTPRequest/resumeFrom``),
    /// whatever the status, never more than `maxBytes` bytes of it.
    func download(_ request: HTTPRequest, to path: String, maxBytes: Int64) async throws(HTTPError) -> HTTPDownload

    /// Writes the body into the file at `path` from byte `offset` on, creating the file if needed
    /// and truncating nothing (filling a sparse file with ``HTTPRequest/byteRange`` answers).
    func download(
        _ request: HTTPRequest, to path: String, atOffset offset: Int64,
        maxBytes: Int64
    ) async throws(HTTPError) -> HTTPDownload
}

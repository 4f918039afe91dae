/// One request (a GET; the command line's builder also sends HEAD, PUT and DELETE): where to, with which headers, under which limits.
///
/// Request header values (such as `X-RapidAPI-Key`) are handed to curl and nowhere else: they are
/// never logged, never part of an ``HTTPError``, and printing a request shows header names only.
///
/// ```swift
/// var request = HTTPRequest(url: "https://exercisedb.p.rapidapi.com/exercises?limit=100&offset=0",
///                           headers: ["X-RapidAPI-Key": key], acceptCompressedBody: true)
/// request.followRedirects = true
/// let page = try await client.data(request, maxBytes: 8 << 20)
/// ```
public struct HTTPRequest: Sendable {
    /// Absolute `http://` or `https://` URL.
    public var url: String
    /// Request headers, sent as given.
    public var headers: HTTPHeaders
    /// Connect, total and low-speed limits.
    public var timeouts: HTTPTimeouts
    /// Follow up to five redirects (301, 302, 303, 307, 308; to http or https only) when true;
    /// otherwise a 3xx is the response. The headers go along only while the origin (scheme, host,
    /// port) stays the same: a redirect elsewhere is requested without any of them, so an API key
    /// never reaches a third party.
    public var followRedirects: Bool = false
    /// Send `Accept-Encoding` with every encoding the transport decodes (curl: gzip, deflate, br,
    /// zstd) and hand back the decoded body. Meant for JSON; leave it off for binary downloads.
    /// Off, both transports send `Accept-Encoding: identity` (unless ``headers`` set the field) and
    /// refuse a 2xx answer with another `Content-Encoding` (``HTTPError/unrequestedEncodingCode``).
    public var acceptCompressedBody: Bool
    /// Ask for the body from this byte offset on (`Range: bytes=N-`); `HTTPClient/download(_:to:maxBytes:)`
    /// then appends to the file instead of truncating it.
    public var resumeFrom: Int64? = nil
    /// Ask for exactly these bytes (`Range: bytes=<first>-<last>`, a single range; never several).
    /// Only a `206` delivers a body: any other final status (a `200` from a server that ignores
    /// ranges, a `416`, a `412` for a failed `If-Match`) is handed back with its head and an empty
    /// body, the transfer stopped before the body, so a server that ignores the range costs no
    /// body bytes. Check the `206`'s `Content-Range` with `HTTPContentRange`. Takes precedence
    /// over ``resumeFrom``.
    public var byteRange: ClosedRange<Int64>? = nil
    /// GET unless set; HEAD asks for the head only (an empty body).
    package var method: HTTPMethod = .get
    /// The body of a PUT, streamed as curl asks for it (`Content-Length` from its size).
    package var body: HTTPRequestBody? = nil
    /// Sign the request with AWS SigV4 (libcurl computes the signature).
    package var awsSignature: AWSSignature? = nil
    /// Asked once, on the client's loop thread, just before the request would reach curl; a
    /// request it declines is not sent and fails with ``HTTPError/notAdmitted``.
    package var admission: HTTPAdmission? = nil
    /// Told how the body arrives: bytes written to the file so far (downloads) and the bytes of each
    /// chunk (any request); see `HTTPBodyProgress`.
    package var bodyProgress: HTTPBodyProgress? = nil

    /// A GET of `url` with these headers and limits; `acceptCompressedBody`: whether the body may
    /// come compressed (`Accept-Encoding`) and be decoded.
    public init(
        url: String, headers: HTTPHeaders = [], timeouts: HTTPTimeouts = .init(),
        acceptCompressedBody: Bool = false
    ) {
        self.url = url
        self.headers = headers
        self.timeouts = timeouts
        self.acceptCompressedBody = acceptCompressedBody
    }
}

/// However a request is printed (`String(describing:)`, `String(reflecting:)`, `dump`), it shows header
/// names and never a header value, whatever the header's name.
extension HTTPRequest: CustomStringConvertible, CustomReflectable {
    /// `GET <url>` plus header names.
    public var description: String {
        let names = headers.map(\.name)
        return "\(method.rawValue) \(url)" + (names.isEmpty ? "" : " (headers: \(names.joined(separator: ", ")))")
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": url,
                "headerNames": headers.map(\.name),
                "timeouts": timeouts,
                "followRedirects": followRedirects,
                "acceptCompressedBody": acceptCompressedBody,
                "resumeFrom": resumeFrom as Any,
                "byteRange": byteRange as Any,
                "method": method.rawValue,
                "signed": awsSignature != nil,
                "admissionChecked": admission != nil,
                "bodyProgress": bodyProgress != nil
            ], displayStyle: .struct)
    }
}

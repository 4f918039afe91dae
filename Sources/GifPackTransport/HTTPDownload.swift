/// What `HTTPClient/download(_:to:maxBytes:)` wrote to its file.
///
/// The digest and the prefix cover only the bytes this request wrote (after `resumeFrom`, the
/// appended part), computed while streaming; the prefix lets a caller tell an HTML error page
/// from a GIF without reading the file back.
///
/// ```swift
/// let download = try await client.download(request, to: path, maxBytes: 5 << 20)
/// download.bytesWritten                 // 94_120
/// download.sha256                       // "9f86d0…" (lowercase hex)
/// download.prefix.starts(with: Array("GIF8".utf8))
/// ```
public struct HTTPDownload: Sendable {
    /// The final response's status line and headers.
    package var head: HTTPResponseHead
    /// Body bytes written by this request.
    package var bytesWritten: Int64
    /// Lowercase hex SHA-256 of the bytes written by this request.
    package var sha256: String
    /// The first (up to) 512 body bytes of this request.
    package var prefix: [UInt8]
    /// How long curl took, from name resolution to the last byte.
    package var elapsed: TimeSpan

    /// What a transport hands back for a download: the final response's `head`, the body bytes it
    /// wrote (`bytesWritten`), their lowercase hex SHA-256, the first (up to) 512 of them (`prefix`)
    /// and how long the request took.
    public init(head: HTTPResponseHead, bytesWritten: Int64, sha256: String, prefix: [UInt8], elapsed: TimeSpan) {
        self.head = head
        self.bytesWritten = bytesWritten
        self.sha256 = sha256
        self.prefix = prefix
        self.elapsed = elapsed
    }

    /// Size of ``prefix`` when the body is at least that long.
    package static let prefixLength = 512
}

/// Told how far a download's body has reached its file, chunk by chunk, so that a reader can follow
/// the file while it fills (the installer decodes a pack's frames while the pack arrives).
///
/// Set as ``HTTPRequest/bodyProgress`` of a ``HTTPTransport/download(_:to:maxBytes:)``: after each
/// chunk is written to the file (and before the next is), both transports call it with the body
/// bytes this request has written so far, on the transport's own thread (curl's loop, the
/// session's delegate queue). The call must return quickly: the transfer waits for it. Bytes it
/// reports are in the file (written with `write(2)`, readable by `pread` on another descriptor),
/// not yet checked against anything.
///
/// ```swift
/// var request = HTTPRequest(url: packURL)
/// request.bodyProgress = HTTPBodyProgress { written in follower.advance(to: written) }
/// ```
public final class HTTPBodyProgress: Sendable {
    private let report: @Sendable (Int64) -> Void

    public init(_ report: @escaping @Sendable (Int64) -> Void) {
        self.report = report
    }

    /// `bytes`: body bytes this request has written to its file so far.
    public func wrote(_ bytes: Int64) {
        report(bytes)
    }
}

/// Told how a request's body arrives, chunk by chunk: the installer follows a pack's file while it
/// fills (it decodes the pack's frames while the pack arrives) and an app's refresh counts bytes.
///
/// Set as `HTTPRequest/bodyProgress`. Both transports call it on their own thread (curl's loop,
/// the session's delegate queue), and the transfer waits for each call: keep it short.
/// - `written`: downloads to a file only (``HTTPTransport/download(_:to:maxBytes:)``): after each
///   write to the file, and before the next, the body bytes this request has written so far.
///   Bytes it reports are in the file (written with `write(2)`, readable by `pread` on another
///   descriptor), not yet checked against anything. `HTTPClient` writes each chunk curl hands it;
///   ``URLSessionTransport`` holds its chunks and writes them together, up to 256 KiB at a time, or
///   as they come when its last write is 20 ms old, and writes what it holds before the request
///   ends, however it ends.
/// - `chunks`: any request: the body bytes each chunk adds, as it is taken (kept in memory, or
///   for the file: written then or with the next ones). A redirect's discarded body is not counted.
///
/// ```swift
/// var request = HTTPRequest(url: packURL)
/// request.bodyProgress = HTTPBodyProgress(written: { follower.advance(to: $0) },
///                                         chunks: { counter.add($0) })
/// ```
package final class HTTPBodyProgress: Sendable {
    private let written: (@Sendable (Int64) -> Void)?
    private let chunks: (@Sendable (Int64) -> Void)?

    package init(written: (@Sendable (Int64) -> Void)? = nil, chunks: (@Sendable (Int64) -> Void)? = nil) {
        self.written = written
        self.chunks = chunks
    }

    /// `bytes`: body bytes this request has written to its file so far.
    package func wrote(_ bytes: Int64) {
        written?(bytes)
    }

    /// `bytes`: the body bytes one chunk adds.
    package func received(_ bytes: Int64) {
        chunks?(bytes)
    }
}

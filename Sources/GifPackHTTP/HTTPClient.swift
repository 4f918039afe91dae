import Foundation
/// Async HTTP GETs over libcurl's multi interface, run by one dedicated thread.
///
/// ## Threading
/// Each client starts one thread that owns a `CURLM` multi handle and runs this loop:
/// take newly submitted requests from a lock-protected queue and add their easy handles,
/// `curl_multi_perform`, hand every finished transfer (`curl_multi_info_read`) back to its
/// awaiting task by resuming its continuation, then `curl_multi_poll` for up to a second.
/// Submitting or cancelling a request calls `curl_multi_wakeup`, so the loop reacts at once.
/// Tasks only enqueue and await: no Swift concurrency thread ever blocks on curl, and curl is
/// only ever called from the loop thread (`curl_multi_wakeup` excepted, which is thread-safe).
///
/// At most `maxConnections` transfers run at once; further requests wait in the loop's own
/// first-in-first-out line (their timeouts start when they reach curl). Easy handles are pooled
/// and reset between requests, and connections stay open in the multi handle's cache (keep-alive,
/// up to `maxConnections`), so a burst of requests to one host reuses a handful of connections;
/// over TLS, curl prefers HTTP/2 and multiplexes. Body bytes are handled in curl's write callback
/// on the loop thread: collected in memory up to a cap, or streamed to a file while being hashed.
///
/// Redirects are followed by the client, not by curl, so that request headers (the API key) are
/// only ever sent to the origin they were meant for (see ``HTTPRequest/followRedirects``).
///
/// Cancelling the awaiting task removes the transfer from curl and throws ``HTTPError/cancelled``;
/// ``shutdown()`` (also run by `deinit`) stops the thread and fails whatever is still pending
/// the same way.
///
/// ```swift
/// let client = try HTTPClient(maxConnections: 8)
/// defer { client.shutdown() }
/// let page = try await client.data(HTTPRequest(url: listURL, headers: ["X-RapidAPI-Key": key],
///                                              acceptCompressedBody: true), maxBytes: 8 << 20)
/// try await withThrowingTaskGroup(of: HTTPDownload.self) { group in
///     for (id, path) in targets {
///         group.addTask { try await client.download(HTTPRequest(url: imageURL(id)), to: path, maxBytes: 5 << 20) }
///     }
///     for try await download in group { print(download.sha256, download.bytesWritten) }
/// }
/// print(client.statistics.connectionsOpened) // a handful, not one per request
/// ```
package final class HTTPClient: Sendable {
    private let loop: CurlMultiLoop

    /// Starts the loop thread. `maxConnections` bounds both the transfers running at once and the
    /// connections kept open (values below 1 count as 1). Throws when curl cannot be initialised.
    ///
    /// `caFile` is a PEM file of the certificate authorities https servers must chain to (a private
    /// CA, a TLS-inspecting proxy); nil takes ``caFile(environment:)``, and without either, the
    /// system's bundle. Proxies: curl reads `http_proxy`, `https_proxy` and `no_proxy` (lowercase;
    /// `HTTPS_PROXY` too, but never an uppercase `HTTP_PROXY`) itself.
    package init(maxConnections: Int = 8, caFile: String? = nil) throws(HTTPError) {
        loop = try CurlMultiLoop(
            maxConnections: max(1, maxConnections),
            caFile: caFile ?? HTTPClient.caFile(environment: ProcessInfo.processInfo.environment))
        loop.start()
    }

    /// The CA bundle the environment names, as curl's command-line tool reads it: `CURL_CA_BUNDLE`,
    /// else `SSL_CERT_FILE`; nil when neither is set (or both are empty).
    package static func caFile(environment: [String: String]) -> String? {
        for name in ["CURL_CA_BUNDLE", "SSL_CERT_FILE"] {
            if let value = environment[name], !value.isEmpty { return value }
        }
        return nil
    }

    deinit {
        loop.shutdown()
    }

    /// Fetches a response with its body in memory. A body longer than `maxBytes` (after content
    /// decoding) aborts the transfer with ``HTTPError/bodyTooLarge(limit:)``.
    package func data(_ request: HTTPRequest, maxBytes: Int64) async throws(HTTPError) -> HTTPDataResponse {
        let sink = MemoryBodySink(maxBytes: maxBytes)
        let outcome = try await perform(request, sink: sink)
        return HTTPDataResponse(head: outcome.head, body: sink.bytes)
    }

    /// Streams the body to `path` as it arrives, whatever the status (the caller decides what a
    /// non-200 body is worth). The file is created or truncated, or appended to when
    /// `request.resumeFrom` is set; it is closed on every path. The SHA-256, the prefix and the
    /// byte count cover this request's bytes. More than `maxBytes` bytes abort the transfer with
    /// ``HTTPError/bodyTooLarge(limit:)``, leaving at most `maxBytes` bytes in the file. On any
    /// error the file is left as it is (a resumable partial body, or garbage): do not trust it.
    package func download(_ request: HTTPRequest, to path: String, maxBytes: Int64) async throws(HTTPError) -> HTTPDownload {
        let sink = FileBodySink(
            path: path, maxBytes: maxBytes, append: (request.resumeFrom ?? 0) > 0,
            progress: request.bodyProgress)
        let outcome = try await perform(request, sink: sink)
        return HTTPDownload(
            head: outcome.head, bytesWritten: sink.bytesWritten, sha256: sink.sha256Hex,
            prefix: sink.prefix, elapsed: outcome.elapsed)
    }

    /// Like ``download(_:to:maxBytes:)`` but writes the body into the file at `path` from byte
    /// `offset` on, creating the file if needed and truncating nothing: the way to fill a sparse
    /// file with ``HTTPRequest/byteRange`` answers. ``HTTPDownload/bytesWritten`` says how far the
    /// body got, also when the transfer failed part way (then the error is thrown and what was
    /// written stays in place, to be asked for again).
    package func download(
        _ request: HTTPRequest, to path: String, atOffset offset: Int64,
        maxBytes: Int64
    ) async throws(HTTPError) -> HTTPDownload {
        let sink = FileBodySink(
            path: path, maxBytes: maxBytes, append: false, offset: max(0, offset),
            progress: request.bodyProgress)
        let outcome = try await perform(request, sink: sink)
        return HTTPDownload(
            head: outcome.head, bytesWritten: sink.bytesWritten, sha256: sink.sha256Hex,
            prefix: sink.prefix, elapsed: outcome.elapsed)
    }

    /// Stops the loop thread without waiting for it: pending and running requests fail with
    /// ``HTTPError/cancelled`` as soon as the thread wakes (at once), requests made afterwards fail
    /// the same way immediately. Safe to call more than once.
    package func shutdown() {
        loop.shutdown()
    }

    /// Counters since the client was made.
    package var statistics: HTTPClientStatistics { loop.statistics }

    /// Runs the request, then each redirect hop it asks to follow (see ``RedirectPolicy``).
    private func perform(_ request: HTTPRequest, sink: any BodySink) async throws(HTTPError) -> TransferOutcome {
        var current = request
        var elapsed = TimeSpan.zero
        var redirects = 0
        while true {
            guard CurlURL.isValid(current.url) else { throw .invalidURL(current.url) }
            var outcome = try await performOnce(current, sink: sink)
            elapsed += outcome.elapsed
            guard let next = outcome.redirectURL else {
                outcome.elapsed = elapsed
                return outcome
            }
            redirects += 1
            guard redirects <= RedirectPolicy.maxRedirects else { throw RedirectPolicy.tooManyRedirects(last: next) }
            current = RedirectPolicy.request(following: current, to: next)
        }
    }

    private func performOnce(_ request: HTTPRequest, sink: any BodySink) async throws(HTTPError) -> TransferOutcome {
        let transfer = Transfer(request: request, sink: sink)
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if transfer.install(continuation) { loop.submit(transfer) }
            }
        } onCancel: {
            request.admission?.cancelled?()
            loop.cancel(transfer)
        }
        switch result {
        case .success(let outcome): return outcome
        case .failure(let error): throw error
        }
    }
}

/// The libcurl transport: what the command-line tool hands the client library (a private CA from
/// `CURL_CA_BUNDLE`/`SSL_CERT_FILE`, curl's reading of `http_proxy`/`https_proxy`/`no_proxy`, low-speed limits).
extension HTTPClient: HTTPTransport {}

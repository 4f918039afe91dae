import Crypto
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's `URLSession`: the client library's default transport, on
/// every platform Foundation runs on (FoundationNetworking on Linux).
///
/// One session per transport, with a delegate that streams each body as it arrives, on the
/// session's own serial delegate queue (never on Swift's cooperative pool): into memory up to the
/// cap for ``data(_:maxBytes:)``, into a file (hashed, its first bytes kept) for the downloads.
/// The session has no URL cache, no cookies and no stored credentials, so every answer (a `304`
/// to `If-None-Match` included) is the server's.
///
/// The request's limits, as `HTTPClient` applies them: ``HTTPTimeouts/total`` and the low-speed
/// rate (fewer body bytes than ``HTTPTimeouts/lowSpeedBytesPerSecond`` over a whole
/// ``HTTPTimeouts/lowSpeedWindow``), both from the moment the request is sent (at most
/// `maxConnections` are in the session at once; the others wait in line, their limits not
/// running), and the call's ``HTTPTimeouts/deadline`` throughout, are enforced per request (the
/// task is cancelled and fails with ``HTTPError/timedOut(_:)``); the session's idle
/// timeout (`timeoutInterval`) is only a backstop: twice the low-speed window when a rate is set,
/// else the total. ``HTTPTimeouts/connect`` has no `URLSession` equivalent: the low-speed window,
/// counted from the request on, covers connecting. Redirects are followed by the delegate only when ``HTTPRequest/followRedirects`` is set,
/// at most five, to http(s) only, the request's headers dropped when the origin changes. Not
/// supported: `HTTPRequest/awsSignature` (refused with a clear error: publishing uses `HTTPClient`)
/// and ``HTTPRequest/acceptCompressedBody`` beyond what the platform decodes (gzip, deflate);
/// without it `Accept-Encoding: identity` is sent and a compressed answer refused, as by curl
/// (`HTTPContentCoding`). The response's `HTTPResponseHead/httpVersion`
/// is empty (`URLResponse` does not give it), and its headers are sorted by name (`URLResponse`
/// merges repeated fields).
///
/// ```swift
/// let transport = URLSessionTransport()                 // or URLSessionTransport(configuration: myConfig)
/// let installer = PackInstaller(cacheDirectory: cache)
/// _ = try await installer.install(from: PackIndexSource(indexURL), client: transport)
/// ```
public final class URLSessionTransport: HTTPTransport, @unchecked Sendable {  // @unchecked: only constants, and the session and its relay are thread-safe.
    // Only constants: the session and its delegate are thread-safe.
    private let session: URLSession
    private let relay: SessionRelay

    /// `configuration` is copied and adjusted (no cache, no cookies, at most `maxConnections`
    /// connections per host, values below 1 counting as 1); proxies and TLS trust are the platform's.
    public init(configuration: URLSessionConfiguration = .ephemeral, maxConnections: Int = 8) {
        let settings = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        settings.urlCache = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.httpCookieStorage = nil
        settings.httpShouldSetCookies = false
        settings.urlCredentialStorage = nil
        settings.httpMaximumConnectionsPerHost = max(1, maxConnections)
        // Each request's total limit is enforced by the relay; the session's own stays out of its way.
        settings.timeoutIntervalForResource = 7 * 24 * 3600
        let queue = OperationQueue()
        queue.name = "gifpack.urlsession-transport"
        queue.maxConcurrentOperationCount = 1
        relay = SessionRelay(queue: queue, maxRunning: settings.httpMaximumConnectionsPerHost)
        session = URLSession(configuration: settings, delegate: relay, delegateQueue: queue)
    }

    deinit {
        // The session holds its delegate until invalidated; requests still running finish first.
        session.finishTasksAndInvalidate()
    }

    public func data(_ request: HTTPRequest, maxBytes: Int64) async throws(HTTPError) -> HTTPDataResponse {
        let outcome = try await perform(request, target: .memory, maxBytes: maxBytes)
        return HTTPDataResponse(head: outcome.head, body: outcome.memory)
    }

    public func download(_ request: HTTPRequest, to path: String, maxBytes: Int64) async throws(HTTPError) -> HTTPDownload {
        let mode: BodyFile.Mode = (request.resumeFrom ?? 0) > 0 && request.byteRange == nil ? .append : .truncate
        let outcome = try await perform(request, target: .file(path, mode), maxBytes: maxBytes)
        return HTTPDownload(
            head: outcome.head, bytesWritten: outcome.bytes, sha256: outcome.sha256,
            prefix: outcome.prefix, elapsed: outcome.elapsed)
    }

    public func download(
        _ request: HTTPRequest, to path: String, atOffset offset: Int64,
        maxBytes: Int64
    ) async throws(HTTPError) -> HTTPDownload {
        let outcome = try await perform(request, target: .file(path, .at(max(0, offset))), maxBytes: maxBytes)
        return HTTPDownload(
            head: outcome.head, bytesWritten: outcome.bytes, sha256: outcome.sha256,
            prefix: outcome.prefix, elapsed: outcome.elapsed)
    }

    private func perform(
        _ request: HTTPRequest, target: SessionTransfer.Target,
        maxBytes: Int64
    ) async throws(HTTPError) -> SessionTransfer.Outcome {
        guard SessionRequests.isHTTPURL(request.url) else { throw .invalidURL(request.url) }
        if request.awsSignature != nil {
            throw .transport(
                code: SessionRequests.invalidArgumentCode,
                message: "URLSessionTransport does not sign requests (AWS SigV4); use GifPackHTTP's HTTPClient")
        }
        try SessionRequests.checkHeaders(request.headers)
        if let admission = request.admission, !admission.admits(inFlight: relay.inFlight) { throw .notAdmitted }
        let transfer = SessionTransfer(request: request, target: target, maxBytes: maxBytes)
        let relay = self.relay, session = self.session
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                relay.start(transfer, in: session)
            }
        } onCancel: {
            relay.cancel(transfer)
        }
        return try result.get()
    }
}

/// How an ``HTTPRequest`` becomes a `URLRequest`, and the checks before it does.
enum SessionRequests {
    static let userAgent = "gifpack-http/1 URLSession"
    static let maxRedirects = 5
    /// `URLError.unknown`: a request this transport cannot send as asked.
    static let invalidArgumentCode = -1

    /// An absolute http or https URL with a host.
    static func isHTTPURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return false }
        return true
    }

    /// Scheme, host and port: headers go along a redirect only while this stays the same.
    static func origin(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// Refuses header names that are not tokens and values holding line breaks, naming the field only.
    static func checkHeaders(_ headers: HTTPHeaders) throws(HTTPError) {
        for (name, value) in headers {
            let nameIsToken = !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
            let valueIsClean = !value.utf8.contains { $0 == 0x0A || $0 == 0x0D || $0 == 0 }
            guard nameIsToken, valueIsClean else {
                let shownName = nameIsToken ? name : String(name.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 }.prefix(40))
                throw .transport(
                    code: invalidArgumentCode,
                    message: "request header \"\(shownName)\" holds a control character or an invalid name")
            }
        }
    }

    static func urlRequest(_ request: HTTPRequest) -> URLRequest? {
        guard let url = URL(string: request.url) else { return nil }
        var made = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: idleTimeout(request.timeouts))
        made.httpMethod = request.method.rawValue
        for (name, value) in request.headers { made.addValue(value, forHTTPHeaderField: name) }
        if let range = request.byteRange {
            made.setValue("bytes=\(range.lowerBound)-\(range.upperBound)", forHTTPHeaderField: "Range")
        } else if let offset = request.resumeFrom, offset > 0 {
            made.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        }
        if let encoding = HTTPContentCoding.acceptEncoding(for: request) {
            made.setValue(encoding, forHTTPHeaderField: "Accept-Encoding")
        }
        if !request.headers.contains(name: "User-Agent") { made.setValue(userAgent, forHTTPHeaderField: "User-Agent") }
        if case .bytes(let bytes) = request.body { made.httpBody = Data(bytes) }
        return made
    }

    /// The session's idle limit for a request: a backstop, twice the low-speed window when a rate
    /// is set (the relay's own watch ends a silent request after one window), else the total.
    static func idleTimeout(_ timeouts: HTTPTimeouts) -> TimeInterval {
        if timeouts.lowSpeedBytesPerSecond > 0 { return 2 * max(1, seconds(timeouts.lowSpeedWindow)) }
        let total = seconds(timeouts.total)
        return total > 0 ? total : 7 * 24 * 3600
    }

    static func seconds(_ span: TimeSpan) -> Double { span.seconds }

    /// The response head as ``HTTPResponseHead`` (fields sorted by name: `URLResponse` keeps no order).
    static func head(_ response: HTTPURLResponse) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        let fields = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, value as? String ?? "\(value)")
        }
        for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) { headers.append(name: name, value: value) }
        return HTTPResponseHead(status: response.statusCode, httpVersion: "", headers: headers)
    }

    /// A finished task's error as ``HTTPError``.
    static func error(_ error: any Error, transfer: SessionTransfer) -> HTTPError {
        let nsError = error as NSError
        let message = nsError.localizedDescription
        guard nsError.domain == NSURLErrorDomain else { return .transport(code: invalidArgumentCode, message: message) }
        switch URLError.Code(rawValue: nsError.code) {
        case .cancelled:
            return .cancelled
        case .badURL, .unsupportedURL:
            return .invalidURL(transfer.current.url)
        case .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .notConnectedToInternet:
            return .connectFailed(message)
        case .timedOut:
            // The session's idle timeout, a backstop behind the relay's low-speed watch and total limit.
            return .timedOut(
                "\(message) (the URL loading system's idle timeout): check that \(HTTPTimeouts.host(of: transfer.current.url)) "
                    + "answers and that the network is up")
        case .dataLengthExceedsMaximum:
            return .bodyTooLarge(limit: transfer.maxBytes)
        default:
            // The body ended before its announced length: Apple's loader says networkConnectionLost,
            // FoundationNetworking (libcurl inside) an unknown error, "transfer closed with N bytes remaining".
            if let head = transfer.head, transfer.expectedLength >= 0, transfer.received < transfer.expectedLength,
                head.headers["content-encoding"] == nil
            {
                return .truncated(expected: transfer.expectedLength, received: transfer.received)
            }
            switch URLError.Code(rawValue: nsError.code) {
            case .networkConnectionLost, .badServerResponse, .zeroByteResource, .cannotParseResponse:
                return transfer.head == nil ? .connectionReset(message) : .truncated(expected: nil, received: transfer.received)
            default:
                return .transport(code: nsError.code, message: message)
            }
        }
    }
}

/// One request on its way: what it asked, where its body goes, what came back. Touched on the
/// session's delegate queue only (``continuation`` is set before the transfer reaches it).
final class SessionTransfer: @unchecked Sendable {  // @unchecked: touched on the session's delegate queue only (`continuation` is set before it gets there).
    enum Target: Sendable, Equatable {
        case memory
        case file(String, BodyFile.Mode)
    }

    struct Outcome: Sendable {
        var head: HTTPResponseHead
        var memory: [UInt8]
        var bytes: Int64
        var sha256: String
        var prefix: [UInt8]
        var elapsed: TimeSpan
    }

    let request: HTTPRequest
    let target: Target
    let maxBytes: Int64
    var continuation: CheckedContinuation<Result<Outcome, HTTPError>, Never>?
    /// The hop being fetched (a followed redirect changes the URL, maybe the headers).
    var current: HTTPRequest
    var redirects = 0
    var task: URLSessionTask?
    var file: BodyFile?
    var head: HTTPResponseHead?
    var expectedLength: Int64 = -1
    var memory: [UInt8] = []
    /// Body bytes taken (the cap, the low-speed watch and a truncation count these).
    var received: Int64 = 0
    /// A download's bytes taken and not yet written (``writeSize``).
    var held: [UInt8] = []
    /// When the file was last written (`TimeSpan/now()`).
    var lastWrite: UInt64 = 0
    /// Body bytes in the file (``HTTPBodyProgress/wrote(_:)``).
    var written: Int64 = 0
    /// A write failed: nothing more goes to the file.
    var fileFailed = false
    var hasher = SHA256()
    var prefix: [UInt8] = []
    /// Set by the first thing that stops the transfer on purpose: it is what the caller hears.
    var failure: HTTPError?
    /// A range request answered with another status: stopped at its head, which is the answer.
    var stoppedAtHead = false
    var cancelRequested = false
    var speedWatched = false
    /// Sent to the session (out of the relay's line): its limits run.
    var sent = false
    var finished = false
    var started = TimeSpan.now()

    init(request: HTTPRequest, target: Target, maxBytes: Int64) {
        self.request = request
        self.current = request
        self.target = target
        self.maxBytes = maxBytes
    }

    var path: String {
        if case .file(let path, _) = target { return path }
        return ""
    }

    /// A download's chunks are held and written together once they add up to this size, or as they
    /// come when the last write is ``writeInterval`` old (a slow body is written as it arrives), and
    /// at the end, whatever ended it. FoundationNetworking on Linux hands the delegate 16 KiB
    /// chunks: written one by one, each was a `write(2)`, a hash update and a wake-up of whoever
    /// follows the file (``HTTPBodyProgress/wrote(_:)``).
    static let writeSize = 256 << 10
    static let writeInterval: UInt64 = 20_000_000

    /// Takes one chunk: the cap first, then memory or the file (``writeSize``), the prefix, and
    /// the chunk's progress.
    func take(_ data: Data) -> HTTPError? {
        guard received + Int64(data.count) <= maxBytes else { return .bodyTooLarge(limit: maxBytes) }
        var failed: HTTPError?
        data.withUnsafeBytes { (chunk: UnsafeRawBufferPointer) in
            if file != nil {
                let due = TimeSpan.now() &- lastWrite >= Self.writeInterval
                if held.isEmpty, due || chunk.count >= Self.writeSize {
                    failed = write(chunk)
                } else {
                    held.append(contentsOf: chunk)
                    if due || held.count >= Self.writeSize { failed = writeHeld() }
                }
            } else {
                memory.append(contentsOf: chunk)
            }
            if prefix.count < HTTPDownload.prefixLength {
                prefix.append(contentsOf: chunk.prefix(HTTPDownload.prefixLength - prefix.count))
            }
        }
        if let failed { return failed }
        received += Int64(data.count)
        request.bodyProgress?.received(Int64(data.count))
        return nil
    }

    /// Writes what is held (at the end of the body, or before a failure is reported: a resume
    /// starts after it); nothing after a failed write.
    func writeHeld() -> HTTPError? {
        guard !held.isEmpty else { return nil }
        let failed = held.withUnsafeBytes { write($0) }
        held.removeAll(keepingCapacity: true)
        return failed
    }

    /// Drops the buffers once the transfer ended (the outcome holds what it hands on): what is
    /// still referring to the transfer keeps no body bytes.
    func releaseBuffers() {
        memory = []
        held = []
    }

    /// Writes `bytes` to the file, hashes them and reports the file's new length.
    private func write(_ bytes: UnsafeRawBufferPointer) -> HTTPError? {
        guard let file, !fileFailed else { return nil }
        do throws(BodyFileError) { try file.write(bytes) } catch {
            fileFailed = true
            return .fileError(path: path, errno: error.code)
        }
        hasher.update(bufferPointer: bytes)
        written += Int64(bytes.count)
        lastWrite = TimeSpan.now()
        request.bodyProgress?.wrote(written)
        return nil
    }
}

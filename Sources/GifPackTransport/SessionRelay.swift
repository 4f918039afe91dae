import Crypto
import Foundation
import GifPackSystem
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's delegate: starts, feeds and ends every ``SessionTransfer``, all on its serial queue.
///
/// At most `maxRunning` transfers are in the session at once (one per connection); later ones
/// wait in the relay's own first-in-first-out line, as in `HTTPClient`'s loop, so a request's
/// limits (total, low-speed window) start when it is sent, never while it waits for a connection.
/// Its ``HTTPTimeouts/deadline`` counts throughout.
final class SessionRelay: NSObject, URLSessionDataDelegate, @unchecked Sendable {  // @unchecked: `running` and `waiting` are touched on the delegate queue only; `transfers` is `Locked`.
    private let queue: OperationQueue
    private let maxRunning: Int
    private let transfers = Locked<[Int: SessionTransfer]>([:])
    // The delegate queue only.
    private var running = 0
    private var waiting: [(transfer: SessionTransfer, session: URLSession)] = []

    init(queue: OperationQueue, maxRunning: Int) {
        self.queue = queue
        self.maxRunning = max(1, maxRunning)
    }

    /// Transfers started and not finished.
    var inFlight: Int { transfers.withLock { $0.count } }

    private func transfer(for task: URLSessionTask) -> SessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    /// Opens the body's file and sends the request, or puts it in line; on the delegate queue.
    func start(_ transfer: SessionTransfer, in session: URLSession) {
        queue.addOperation { [self] in
            if transfer.cancelRequested { return finish(transfer, .failure(.cancelled)) }
            if case .file(let path, let mode) = transfer.target {
                do throws(BodyFileError) { transfer.file = try BodyFile(path: path, mode: mode) } catch {
                    return finish(transfer, .failure(error.httpError(path: path)))
                }
            }
            guard running < maxRunning else { return waiting.append((transfer, session)) }
            send(transfer, in: session)
        }
    }

    /// Sends the request now: its limits start. One whose call's deadline has passed fails unsent.
    private func send(_ transfer: SessionTransfer, in session: URLSession) {
        let timeouts = transfer.request.timeouts
        let now = TimeSpan.now()
        let deadline = timeouts.deadlineInstant(from: now)
        if let deadline, deadline <= now { return finish(transfer, .failure(.timedOut(timeouts.deadlineMessage(for: transfer.request.url)))) }
        transfer.sent = true
        running += 1
        launch(transfer, in: session)
        // The total limit or the call's deadline, whichever comes first.
        let total = SessionRequests.seconds(timeouts.total)
        let left = deadline.map { Double($0 - now) / 1e9 }
        let byDeadline = left.map { total <= 0 || $0 < total } ?? false
        let limit = byDeadline ? left ?? total : total
        if limit > 0 {
            let message = byDeadline ? timeouts.deadlineMessage(for: transfer.request.url) : timeouts.totalMessage(for: transfer.request.url)
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { [weak transfer, queue] in
                guard let transfer else { return }
                queue.addOperation { [weak transfer] in
                    guard let transfer, !transfer.finished else { return }
                    transfer.failure = transfer.failure ?? .timedOut(message)
                    transfer.task?.cancel()
                }
            }
        }
        // The rate is watched from the request on (after the upload for a request with a body).
        if transfer.request.body == nil { watchSpeed(transfer) }
    }

    /// curl's low-speed limit: fails the transfer with ``HTTPError/timedOut(_:)`` once a whole
    /// window (``HTTPTimeouts/lowSpeedWindow``) passed with fewer body bytes than the rate asks,
    /// the first window counted from the request on: a server that never answers ends after one.
    private func watchSpeed(_ transfer: SessionTransfer) {
        let timeouts = transfer.request.timeouts
        guard timeouts.lowSpeedBytesPerSecond > 0, !transfer.speedWatched else { return }
        transfer.speedWatched = true
        let window = max(1, SessionRequests.seconds(timeouts.lowSpeedWindow))
        let needed = Int64(min(Double(Int64.max / 2), Double(timeouts.lowSpeedBytesPerSecond) * window))
        Self.checkSpeed(of: transfer, after: 0, window: window, needed: needed, queue: queue)
    }

    /// One low-speed window of ``watchSpeed(_:)``, then the next. The timer holds the transfer
    /// weakly, and nothing else of it: a transfer that ended is freed at once, its buffers with it,
    /// not when its window runs out (a nested function calling itself again would hold it strongly
    /// until then: 500 range requests kept 500 transfers' buffers for 30 s).
    private static func checkSpeed(
        of transfer: SessionTransfer, after received: Int64, window: Double, needed: Int64,
        queue: OperationQueue
    ) {
        DispatchQueue.global().asyncAfter(deadline: .now() + window) { [weak transfer] in
            guard let transfer else { return }
            queue.addOperation { [weak transfer] in
                guard let transfer, !transfer.finished else { return }
                guard transfer.received - received >= needed else {
                    transfer.failure = transfer.failure ?? .timedOut(transfer.request.timeouts.lowSpeedMessage(for: transfer.request.url))
                    transfer.task?.cancel()
                    return
                }
                checkSpeed(of: transfer, after: transfer.received, window: window, needed: needed, queue: queue)
            }
        }
    }

    /// Makes and resumes the task for the transfer's current hop.
    private func launch(_ transfer: SessionTransfer, in session: URLSession) {
        guard let request = SessionRequests.urlRequest(transfer.current) else {
            return finish(transfer, .failure(.invalidURL(transfer.current.url)))
        }
        let task: URLSessionTask
        if case .file(let path)? = transfer.current.body, transfer.current.method == .put {
            task = session.uploadTask(with: request, fromFile: URL(fileURLWithPath: path))
        } else {
            task = session.dataTask(with: request)
        }
        transfer.task = task
        transfer.started = TimeSpan.now()
        transfers.withLock { $0[task.taskIdentifier] = transfer }
        task.resume()
    }

    /// Cancels from any thread: the task fails with ``HTTPError/cancelled``.
    func cancel(_ transfer: SessionTransfer) {
        queue.addOperation { [self] in
            guard !transfer.finished else { return }
            transfer.cancelRequested = true
            if let task = transfer.task { return task.cancel() }
            if let waits = waiting.firstIndex(where: { $0.transfer === transfer }) {
                waiting.remove(at: waits)
                finish(transfer, .failure(.cancelled))
            }
        }
    }

    /// Sends the requests in line while connections are free.
    private func sendWaiting() {
        while running < maxRunning, !waiting.isEmpty {
            let (transfer, session) = waiting.removeFirst()
            if transfer.cancelRequested {
                finish(transfer, .failure(.cancelled))
            } else {
                send(transfer, in: session)
            }
        }
    }

    private func finish(_ transfer: SessionTransfer, _ result: Result<SessionTransfer.Outcome, HTTPError>) {
        guard !transfer.finished else { return }
        transfer.finished = true
        if transfer.sent {
            running -= 1
            sendWaiting()
        }
        if let task = transfer.task { _ = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) } }
        var result = result
        if let closeError = transfer.file?.close(), case .success = result {
            result = .failure(.fileError(path: transfer.path, errno: closeError.code))
        }
        transfer.file = nil
        transfer.releaseBuffers()
        if let answered = transfer.request.admission?.answered {
            switch result {
            case .success(let outcome): answered(.response(outcome.head, bodyPrefix: outcome.prefix, bodyBytes: outcome.bytes))
            case .failure(.cancelled): break
            case .failure(let error): answered(.failed(error))
            }
        }
        transfer.continuation?.resume(returning: result)
        transfer.continuation = nil
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let transfer = transfer(for: dataTask), transfer.failure == nil else { return completionHandler(.cancel) }
        guard let http = response as? HTTPURLResponse else {
            transfer.failure = .connectionReset("the answer is not an HTTP response")
            return completionHandler(.cancel)
        }
        let head = SessionRequests.head(http)
        transfer.head = head
        transfer.expectedLength = response.expectedContentLength
        let request = transfer.current
        if request.byteRange != nil, head.status != 206 {
            // Only a 206 delivers the bytes asked for: stop before the body (a server ignoring ranges costs nothing).
            transfer.stoppedAtHead = true
            return completionHandler(.cancel)
        }
        if let refusal = HTTPContentCoding.refusal(of: head, for: request) {
            transfer.failure = refusal
            return completionHandler(.cancel)
        }
        if request.byteRange == nil, let offset = request.resumeFrom, offset > 0, request.method == .get,
            (200..<300).contains(head.status), head.headers["content-range"] == nil
        {
            transfer.failure = .transport(
                code: HTTPError.rangeNotHonouredCode,
                message: "the server does not serve byte ranges (it answered \(head.status) to bytes=\(offset)-); cannot resume")
            return completionHandler(.cancel)
        }
        if request.byteRange == nil, response.expectedContentLength > transfer.maxBytes {
            transfer.failure = .bodyTooLarge(limit: transfer.maxBytes)
            return completionHandler(.cancel)
        }
        // A request with a body: the rate is watched from the head on (the upload came first).
        watchSpeed(transfer)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let transfer = transfer(for: dataTask), transfer.failure == nil, !transfer.stoppedAtHead else { return }
        if let failure = transfer.take(data) {
            transfer.failure = failure
            dataTask.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let transfer = transfer(for: task), transfer.failure == nil, transfer.current.followRedirects,
            response.value(forHTTPHeaderField: "Location") != nil
        else { return completionHandler(nil) }
        guard let target = request.url?.absoluteString, SessionRequests.isHTTPURL(target) else {
            transfer.failure = .invalidURL(request.url?.absoluteString ?? "")
            completionHandler(nil)
            return task.cancel()
        }
        transfer.redirects += 1
        guard transfer.redirects <= SessionRequests.maxRedirects else {
            transfer.failure = .transport(
                code: URLError.Code.httpTooManyRedirects.rawValue,
                message: "more than \(SessionRequests.maxRedirects) redirects, the last to \(target)")
            completionHandler(nil)
            return task.cancel()
        }
        var next = transfer.current
        next.url = target
        next.admission = nil
        if SessionRequests.origin(transfer.current.url) == nil
            || SessionRequests.origin(transfer.current.url) != SessionRequests.origin(target)
        {
            next.headers = HTTPHeaders()
        }
        transfer.current = next
        completionHandler(SessionRequests.urlRequest(next))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfer(for: task) else { return }
        // What arrived goes to the file before anything is decided: a failed download keeps it to resume from.
        if let failed = transfer.writeHeld(), transfer.failure == nil { transfer.failure = failed }
        if let failure = transfer.failure { return finish(transfer, .failure(failure)) }
        if transfer.cancelRequested { return finish(transfer, .failure(.cancelled)) }
        if let error, !transfer.stoppedAtHead {
            return finish(transfer, .failure(SessionRequests.error(error, transfer: transfer)))
        }
        guard let head = transfer.head else {
            return finish(transfer, .failure(.connectionReset("the server closed the connection without a response")))
        }
        let elapsed = TimeSpan.since(transfer.started)
        let sha256 = transfer.file == nil && transfer.target == .memory ? "" : hex(transfer.hasher.finalize())
        finish(
            transfer,
            .success(
                .init(
                    head: head, memory: transfer.memory, bytes: transfer.received, sha256: sha256,
                    prefix: transfer.prefix, elapsed: elapsed)))
    }

    private func hex(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

import CCurl
import Synchronization

/// What a finished transfer hands back besides its sink's contents.
struct TransferOutcome: Sendable {
    var head: HTTPResponseHead
    var elapsed: TimeSpan
    /// Where to go next when the response was a redirect to follow (its body was discarded).
    var redirectURL: String?
}

/// The per-request context: the request, its body sink, and the state curl's callbacks fill.
///
/// Curl's callbacks receive an unretained pointer to it (the loop's table of active transfers
/// keeps it alive while curl may call back). Fields below "loop thread only" are touched by the
/// loop thread alone; the completion state is shared with the awaiting task and guarded by a lock,
/// which is what makes "resumed exactly once" hold whatever races cancellation, completion and
/// shutdown run: the first ``finish(_:)`` takes the continuation, the others find none.
final class Transfer: @unchecked Sendable {  // @unchecked: the completion state is in the `completion` Mutex; the other fields are the loop thread's only.
    typealias Continuation = CheckedContinuation<Result<TransferOutcome, HTTPError>, Never>

    private struct Completion {
        var continuation: Continuation?
        var cancelRequested = false
        var finished = false
    }

    let request: HTTPRequest
    let sink: any BodySink
    /// The PUT body, when the request has one.
    let upload: UploadSource?
    private let completion = Mutex(Completion())

    // Loop thread only.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var head = ResponseHeadCollector()
    var bodyBytes: Int64 = 0
    /// The response is a redirect the client follows: its body is read and dropped.
    var discardsBody = false
    private var discardedBytes: Int64 = 0
    /// A range request got a final answer other than 206: the transfer was stopped at its head on
    /// purpose and counts as a response without a body.
    var stoppedAtHead = false
    /// The call's deadline (a ``TimeSpan/now()`` reading), when it (not the total limit) bounds this transfer.
    var deadline: UInt64?
    /// A failure decided in a callback (cap hit, disk error); it explains curl's CURLE_WRITE_ERROR.
    var callbackFailure: HTTPError?

    init(request: HTTPRequest, sink: any BodySink) {
        self.request = request
        self.sink = sink
        upload = request.body.map(UploadSource.init)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    // MARK: Completion (any thread)

    /// Stores the continuation; returns false (having resumed it with `.cancelled`) when the task
    /// was cancelled before the request could be submitted.
    func install(_ continuation: Continuation) -> Bool {
        let cancelled = completion.withLock { state -> Bool in
            if state.cancelRequested { state.finished = true; return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: .failure(.cancelled)) }
        return !cancelled
    }

    /// Marks the transfer as cancelled by its task.
    func requestCancel() {
        completion.withLock { $0.cancelRequested = true }
    }

    var isCancelRequested: Bool { completion.withLock { $0.cancelRequested } }

    /// Resumes the awaiting task, once; later calls do nothing.
    func finish(_ result: Result<TransferOutcome, HTTPError>) {
        let continuation = completion.withLock { state -> Continuation? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }

    // MARK: Callbacks (loop thread)

    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        head.bodyStarted = true
        if discardsBody {
            discardedBytes += Int64(chunk.count)
            guard discardedBytes <= sink.maxBytes else {
                callbackFailure = .bodyTooLarge(limit: sink.maxBytes)
                return 0
            }
            return chunk.count
        }
        if let failure = sink.write(chunk) {
            callbackFailure = failure
            return 0
        }
        bodyBytes += Int64(chunk.count)
        request.bodyProgress?.received(Int64(chunk.count))
        return chunk.count
    }

    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        head.consume(line)
        if head.headEnded && !head.bodyStarted {
            discardsBody = RedirectPolicy.follows(status: head.status, headers: head.headers, request: request)
            if request.byteRange != nil, !discardsBody, head.status >= 200, head.status != 206 {
                // Returning less than the line's length makes curl stop with CURLE_WRITE_ERROR.
                stoppedAtHead = true
                return 0
            }
            if !discardsBody,
                let refusal = HTTPContentCoding.refusal(
                    of: HTTPResponseHead(
                        status: head.status, httpVersion: head.httpVersion,
                        headers: head.headers), for: request)
            {
                callbackFailure = refusal
                return 0
            }
        }
        return line.count
    }

    /// Frees what curl needed during the transfer; call after the handle left the multi handle.
    func releaseCurlResources() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        easy = nil
        upload?.close()
    }

    /// curl's message for the failure, with any secret request header value blanked out.
    func errorMessage(for code: CURLcode) -> String {
        var message = String(cString: errorBuffer)
        while message.last?.isNewline == true { message.removeLast() }
        if message.isEmpty { message = String(cString: curl_easy_strerror(code)) }
        // Only secret-looking headers (the API key) are blanked: the host header's value is the host
        // curl's message names, and hiding it would hide which server failed.
        for (name, value) in request.headers where value.count >= 4 && HTTPHeaders.isSensitive(name: name) {
            message = message.replacing(value, with: "<redacted>")
        }
        if let signature = request.awsSignature {
            for value in [signature.secretAccessKey, signature.accessKeyID] where value.count >= 4 {
                message = message.replacing(value, with: "<redacted>")
            }
        }
        return message
    }
}

import CCurl

/// Maps a finished transfer's `CURLcode` onto ``HTTPError``.
enum CurlErrorMapping {
    /// `callbackFailure` (set when our write callback refused a chunk) wins over curl's code, which
    /// then only says `CURLE_WRITE_ERROR`.
    static func error(for code: CURLcode, transfer: Transfer, expectedLength: Int64?) -> HTTPError {
        if let failure = transfer.callbackFailure { return failure }
        let message = transfer.errorMessage(for: code)
        switch code {
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .invalidURL(transfer.request.url)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .connectFailed(message)
        case CURLE_OPERATION_TIMEDOUT:
            // The same words as URLSessionTransport's: which limit, and what to check.
            let timeouts = transfer.request.timeouts
            if message.contains("too slow") { return .timedOut(timeouts.lowSpeedMessage(for: transfer.request.url)) }
            if let deadline = transfer.deadline, HTTPTimeouts.instant(TimeSpan.now(), plus: .milliseconds(100)) >= deadline {
                return .timedOut(timeouts.deadlineMessage(for: transfer.request.url))
            }
            if message.hasPrefix("Operation timed out") { return .timedOut(timeouts.totalMessage(for: transfer.request.url)) }
            return .timedOut(message)
        case CURLE_PARTIAL_FILE:
            return .truncated(expected: expectedLength, received: transfer.bodyBytes)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2_STREAM:
            return .connectionReset(message)
        case CURLE_FILESIZE_EXCEEDED:
            return .bodyTooLarge(limit: transfer.sink.maxBytes)
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        case CURLE_OUT_OF_MEMORY where !transfer.head.headEnded || message.lowercased().contains("header"),
            CURLcode(rawValue: 100):
            // curl refuses a response header block over its limit (100 KB a line, 300 KB in all)
            // with CURLE_OUT_OF_MEMORY ("Out of memory") before 8.6 and CURLE_TOO_LARGE (100)
            // since. Failing before the head ended, that is what it means, not a lack of memory.
            return .headersTooLarge("the server sent more header bytes than curl accepts (100 KB a line, 300 KB in all)")
        default:
            return .transport(code: Int(code.rawValue), message: message)
        }
    }
}

/// A last check a request passes the moment it would reach curl, made on the client's loop thread.
///
/// A caller that keeps a few requests queued behind the ones in flight (so a slot freed by a
/// finished transfer is refilled on the loop thread at once, without a round trip through the
/// awaiting tasks) still decides, request by request, whether each may go now: the closure gets
/// the number of transfers in flight and says yes (the request is sent) or no (it fails with
/// ``HTTPError/notAdmitted`` without anything being sent, for the caller to queue again or drop).
///
/// Since the next queued request is admitted the moment a transfer ends, before its awaiting task
/// runs, what an answer says about the requests behind it (a quota left, a 429, a rejected key, one
/// more failure in a row) has to be known by then: `answered` is called on the loop thread with
/// each transfer's ``HTTPAnswer`` (the response's head and first body bytes, or the failure) as
/// the transfer ends, before any other request is admitted. A transfer cancelled by its task, or
/// one that never reached the network (its file could not be opened), is not answered. Both
/// closures run on the loop thread with curl's state in hand: keep them short and never block in
/// them. Only the first hop of a request is checked; redirects it follows are part of the same
/// request (each hop's answer is told).
///
/// ```swift
/// var request = HTTPRequest(url: imageURL)
/// request.admission = HTTPAdmission({ inFlight in inFlight < window.current && budget.take() },
///                                   answered: { answer in
///                                       if case .response(let head, _, _) = answer { quota.note(head.headers["x-ratelimit-requests-remaining"]) }
///                                   })
/// do { _ = try await client.download(request, to: path, maxBytes: 5 << 20) }
/// catch .notAdmitted { queueAgain(imageURL) }
/// ```
package struct HTTPAdmission: Sendable {
    let decide: @Sendable (_ inFlight: Int) -> Bool
    package let answered: (@Sendable (_ answer: HTTPAnswer) -> Void)?
    package let cancelled: (@Sendable () -> Void)?

    /// `decide` gets the transfers in flight (not counting this one) and returns whether to send;
    /// `answered` hears how each transfer ended; `cancelled` hears that the request's task was
    /// cancelled, before the client drops the transfer (so a slot it frees is not handed to a
    /// request whose own cancel is still on its way).
    package init(
        _ decide: @escaping @Sendable (_ inFlight: Int) -> Bool,
        answered: (@Sendable (_ answer: HTTPAnswer) -> Void)? = nil,
        cancelled: (@Sendable () -> Void)? = nil
    ) {
        self.decide = decide
        self.answered = answered
        self.cancelled = cancelled
    }

    /// Whether the request may start with `inFlight` transfers running.
    package func admits(inFlight: Int) -> Bool { decide(inFlight) }

    /// The same `answered` and `cancelled`, admitting always: a redirect hop's.
    package var answersOnly: HTTPAdmission { HTTPAdmission({ _ in true }, answered: answered, cancelled: cancelled) }
}

/// How a transfer ended, as `HTTPAdmission`'s `answered` hears it on the client's loop thread.
///
/// ```swift
/// switch answer {
/// case .response(let head, let prefix, let bytes): print(head.status, prefix.prefix(6), bytes)
/// case .failed(let error): print(error)   // reset, timeout, too large, a file error
/// }
/// ```
package enum HTTPAnswer: Sendable {
    /// A response: its head, its body's first bytes (up to `HTTPDownload/prefixLength`) and the
    /// number of body bytes taken.
    case response(HTTPResponseHead, bodyPrefix: [UInt8], bodyBytes: Int64)
    /// The transfer failed without a whole response.
    case failed(HTTPError)
}

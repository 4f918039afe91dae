/// A last check a request passes the moment it would reach curl, made on the client's loop thread.
///
/// A caller that keeps a few requests queued behind the ones in flight (so a slot freed by a
/// finished transfer is refilled on the loop thread at once, without a round trip through the
/// awaiting tasks) still decides, request by request, whether each may go now: the closure gets
/// the number of transfers in flight and says yes (the request is sent) or no (it fails with
/// ``HTTPError/notAdmitted`` without anything being sent, for the caller to queue again or drop).
///
/// Since the next queued request is admitted the moment a transfer ends, before its awaiting task
/// runs, what an answer says about the requests behind it (a quota left, a 429, a rejected key)
/// has to be known by then: `answered` is called on the loop thread with each response's head and
/// first body bytes (up to ``HTTPDownload/prefixLength``) as the transfer ends, before any other
/// request is admitted. Both closures run on the loop thread with curl's state in hand: keep them
/// short and never block in them. Only the first hop of a request is checked; redirects it follows
/// are part of the same request (each hop's answer is told).
///
/// ```swift
/// var request = HTTPRequest(url: imageURL)
/// request.admission = HTTPAdmission({ inFlight in inFlight < window.current && budget.take() },
///                                   answered: { head, _ in quota.note(head.headers["x-ratelimit-requests-remaining"]) })
/// do { _ = try await client.download(request, to: path, maxBytes: 5 << 20) }
/// catch .notAdmitted { queueAgain(imageURL) }
/// ```
public struct HTTPAdmission: Sendable {
    let decide: @Sendable (_ inFlight: Int) -> Bool
    let answered: (@Sendable (_ head: HTTPResponseHead, _ bodyPrefix: [UInt8]) -> Void)?

    /// `decide` gets the transfers in flight (not counting this one) and returns whether to send;
    /// `answered` hears each response as its transfer ends.
    public init(_ decide: @escaping @Sendable (_ inFlight: Int) -> Bool,
                answered: (@Sendable (_ head: HTTPResponseHead, _ bodyPrefix: [UInt8]) -> Void)? = nil) {
        self.decide = decide
        self.answered = answered
    }

    /// Whether the request may start with `inFlight` transfers running.
    public func admits(inFlight: Int) -> Bool { decide(inFlight) }

    /// The same `answered`, admitting always: a redirect hop's.
    var answersOnly: HTTPAdmission { HTTPAdmission({ _ in true }, answered: answered) }
}

/// A misbehaviour the fixture server can put on an exercise's image responses, to exercise a
/// client's error handling against what gateways, CDNs and the real API actually do.
///
/// Faults are attached per exercise with ``FixtureServer/schedule(_:forExercise:)`` (consumed one
/// per image request, in order) or ``FixtureServer/setDefaultFault(_:forExercise:)`` (every
/// request until cleared).
///
/// ```swift
/// server.schedule([.status(503), .tooManyRequests(retryAfter: .seconds(1))], forExercise: "0001")
/// // 1st request for 0001 → 503, 2nd → 429 with Retry-After: 1, 3rd → the GIF.
/// ```
package enum Fault: Sendable, Equatable {
    /// 200 with a `text/html` maintenance page instead of the GIF.
    case htmlWith200
    /// The real GIF bytes labelled `Content-Type: application/octet-stream`.
    case wrongContentType
    /// `Content-Length` of the full GIF, half the bytes, then the connection closes.
    case truncatedBody
    /// 200 `image/gif` whose body is PNG-looking random bytes.
    case notAGIF
    /// The given status with a small gateway-style JSON body.
    case status(Int)
    /// 429 with the per-second rate-limit body, with or without `Retry-After`.
    case tooManyRequests(retryAfter: RetryAfter?)
    /// 429 with the MONTHLY quota body.
    case monthlyQuotaExceeded
    /// The normal response, its body dripped at this rate.
    case slowBody(bytesPerSecond: Int)
    /// The request is read, then the connection is reset (SO_LINGER 0) without an answer.
    case connectionReset
    /// A 200 GIF whose first image descriptor places the frame outside the logical screen.
    case corruptFrame
    /// The normal response with an extra `X-Padding` header of this many bytes.
    case hugeHeader(bytes: Int)
}

/// The two forms of an HTTP `Retry-After` header.
///
/// ```swift
/// Fault.tooManyRequests(retryAfter: .seconds(2))                 // Retry-After: 2
/// Fault.tooManyRequests(retryAfter: .httpDate(secondsFromNow: 3)) // Retry-After: <IMF date>
/// ```
package enum RetryAfter: Sendable, Equatable {
    /// Delay in seconds.
    case seconds(Int)
    /// An HTTP date this many seconds after the response is made.
    case httpDate(secondsFromNow: Int)
}

/// A misbehaviour of the RapidAPI list route (`GET /exercises`), set for the whole server with
/// ``FixtureConfiguration/listFault``, to exercise a builder's defences against a hostile or
/// broken catalog.
///
/// ```swift
/// var configuration = FixtureConfiguration()
/// configuration.listFault = .repeatFirstPage   // every offset answers page 0
/// ```
package enum ListFault: Sendable, Equatable {
    /// Every list request gets this status with `{"message": "bad key <the key that came>"}`.
    case echoKeyInErrorBody(status: Int)
    /// Every record carries an extra field `note` holding `"echo: <the key that came>"`.
    case echoKeyInRecord
    /// The list never ends: every offset answers a full page of fresh ids, each record padded
    /// with a `padding` string of this many bytes.
    case endless(paddingBytes: Int)
    /// Every offset answers the first page again.
    case repeatFirstPage
}

import GifPackHTTP

/// Why a GIF was refused: the machine-readable code reports, logs and metrics carry (``code``,
/// e.g. `html-body`, `http-404`, `known-missing`), as cases the code switches over instead of
/// strings matched against lists. Encoded in JSON as its code.
///
/// ```swift
/// let reason = RejectionReason(HTTPError.timedOut("slow"))   // .timeout, code "timeout"
/// reason.isRetryable                                          // true
/// RejectionReason(code: "http-503")                           // .httpStatus(503)
/// ```
package enum RejectionReason: Sendable, Hashable, Codable, CustomStringConvertible {
    // A 200 response whose body is not a GIF (gateways serve maintenance pages with 200).
    case htmlBody
    case wrongContentType
    case notAGIF
    /// The body ended early (the transfer, or the GIF inside it).
    case truncated
    /// Over `max_gif_bytes`, or over a ``GIFLimits`` bound.
    case tooLarge
    // The GIF itself (``GIFRejection``).
    case badFrame
    case corrupt
    // The transfer (``HTTPError``).
    case invalidURL
    case connectFailed
    case timeout
    case connectionReset
    case fileError
    case cancelled
    /// The response's headers were larger than the client accepts.
    case headersTooLarge
    case transport
    /// Any HTTP status that is not a usable answer (`http-404`, `http-503`, …).
    case httpStatus(Int)
    /// The gateway's "monthly quota used up" 429.
    case quotaExhausted
    // The build's own decisions.
    /// A 404 remembered from an earlier run, not asked again until `missing_ttl` passes.
    case knownMissing
    /// The build stopped (key rejected, quota spent) before this GIF was asked for.
    case notAttempted
    /// The GIF could not be stored in the cache (or its stored copy is gone).
    case storeFailed
    /// A rendition other than the first came at a smaller size than asked (the API plan's
    /// ceiling): never packed under that resolution.
    case planCeiling

    private static let fixed: [(RejectionReason, String)] = [
        (.htmlBody, "html-body"), (.wrongContentType, "wrong-content-type"), (.notAGIF, "not-a-gif"),
        (.truncated, "truncated"), (.tooLarge, "too-large"), (.badFrame, "bad-frame"), (.corrupt, "corrupt"),
        (.invalidURL, "invalid-url"), (.connectFailed, "connect-failed"), (.timeout, "timeout"),
        (.connectionReset, "connection-reset"), (.fileError, "file-error"), (.cancelled, "cancelled"), (.headersTooLarge, "headers-too-large"),
        (.transport, "transport"), (.quotaExhausted, "quota-exhausted"), (.knownMissing, "known-missing"),
        (.notAttempted, "not-attempted"), (.storeFailed, "store-failed"), (.planCeiling, "plan-ceiling")
    ]

    /// The stable code.
    package var code: String {
        if case .httpStatus(let status) = self { return "http-\(status)" }
        return Self.fixed.first { $0.0 == self }!.1
    }

    package var description: String { code }

    /// The reason a code names, or nil for an unknown code.
    package init?(code: String) {
        if code.hasPrefix("http-"), let status = Int(code.dropFirst(5)), (100...999).contains(status) {
            self = .httpStatus(status)
        } else if let known = Self.fixed.first(where: { $0.1 == code }) {
            self = known.0
        } else {
            return nil
        }
    }

    /// Worth another attempt: transport failures that a retry can cure, 200 responses that were
    /// not a GIF, and the statuses of ``RetryPolicy/retryableStatuses``.
    package var isRetryable: Bool {
        switch self {
        case .connectFailed, .timeout, .truncated, .connectionReset, .transport: true
        case .htmlBody, .notAGIF, .wrongContentType: true
        case .httpStatus(let status): RetryPolicy.retryableStatuses.contains(status)
        default: false
        }
    }

    /// The reason for a transfer that did not complete.
    package init(_ error: HTTPError) {
        switch error {
        case .invalidURL: self = .invalidURL
        case .connectFailed: self = .connectFailed
        case .timedOut: self = .timeout
        case .truncated: self = .truncated
        case .connectionReset: self = .connectionReset
        case .bodyTooLarge: self = .tooLarge
        case .fileError, .notRegularFile: self = .fileError
        case .cancelled, .notAdmitted: self = .cancelled
        case .headersTooLarge: self = .headersTooLarge
        case .transport: self = .transport
        }
    }

    /// The reason for a GIF the inspector refused.
    package init(_ rejection: GIFRejection) {
        switch rejection {
        case .notAGIF: self = .notAGIF
        case .truncated: self = .truncated
        case .badFrame: self = .badFrame
        case .tooLarge: self = .tooLarge
        case .corrupt: self = .corrupt
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let code = try container.decode(String.self)
        guard let reason = RejectionReason(code: code) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown rejection reason \(code)")
        }
        self = reason
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }
}

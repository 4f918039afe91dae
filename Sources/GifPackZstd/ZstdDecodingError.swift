/// Why a zstd frame could not be decoded, and where.
///
/// Every failure of ``ZstdDecoder`` is one of these: the input is never trusted, so a truncated,
/// corrupt or hostile frame ends in this error (never in a crash or a trap), and a frame that
/// asks for more than the caller allowed (output or window) is refused before the memory is taken.
public struct ZstdDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The family of the failure, for callers that react differently to each.
    public enum Kind: String, Sendable, Equatable {
        /// The input ends in the middle of a frame, a block or a table.
        case truncated
        /// The bytes are not a valid zstd frame (bad magic number, reserved bit set,
        /// impossible table or sequence, an offset reaching before the frame's start, ...).
        case corrupt
        /// Valid zstd that this decoder does not handle (frames that need a dictionary).
        case unsupported
        /// The frame would decode to more bytes than the caller's `maxOutput`.
        case outputLimitExceeded
        /// The frame's window is larger than the caller's `maxWindow`.
        case windowTooLarge
        /// The frame decoded, but its XXH64 content checksum does not match the bytes.
        case checksumMismatch
    }

    /// The family of the failure.
    public let kind: Kind
    /// What exactly is wrong, in words (never contains the decoded data).
    public let reason: String
    /// Offset in the input (from the first byte passed to the decoder) where the problem was found.
    public let offset: Int

    public init(_ kind: Kind, _ reason: String, offset: Int) {
        self.kind = kind
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "zstd \(kind.rawValue): \(reason) (input offset \(offset))" }
}

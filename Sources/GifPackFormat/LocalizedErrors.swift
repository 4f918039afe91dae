import Foundation

// The format's public errors as Foundation's LocalizedError:
// `error.localizedDescription` (what alerts and logs show) is the error's own one-line message,
// the one `String(describing:)` gives, not Foundation's "The operation could not be completed".

extension IndexError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension PackReadError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension CompressedIndex.Refusal: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension PackCatalogStream.Failure: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension IndexTimestamp.InvalidClock: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

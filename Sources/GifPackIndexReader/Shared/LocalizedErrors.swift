import Foundation

// The index reader's public errors as Foundation's LocalizedError:
// `error.localizedDescription` (what alerts and logs show) is the error's own one-line message,
// the one `String(describing:)` gives, not Foundation's "The operation could not be completed".

extension PackClientError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension PackRejection: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension IndexRefusal: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

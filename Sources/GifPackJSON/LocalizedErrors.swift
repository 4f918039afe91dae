import Foundation

// The JSON module's public errors as Foundation's LocalizedError:
// `error.localizedDescription` (what alerts and logs show) is the error's own one-line message,
// the one `String(describing:)` gives, not Foundation's "The operation could not be completed".

extension JSONParseError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension CanonicalJSON.EncodingError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

extension IndentedJSONEncoder.Failure: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

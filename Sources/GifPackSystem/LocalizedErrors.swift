import Foundation

// GifPackSystem's public error as Foundation's LocalizedError:
// `error.localizedDescription` (what alerts and logs show) is the error's own one-line message,
// the one `String(describing:)` gives, not Foundation's "The operation could not be completed".

extension FileSystemError: LocalizedError {
    /// The error's message: its `description`.
    package var errorDescription: String? { description }
}

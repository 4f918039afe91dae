/// Replaces secrets (the API key) by `<redacted>`, as `APIKey` prints itself, in any text about to
/// be written out.
///
/// URLs and messages never carry the key by construction (it travels in a request header); this
/// is the last line of defence for log lines, in case a server echoes it back in an error body or a
/// future change lets it slip into a message. Secrets shorter than ``minimumLength`` are not
/// replaced: they occur inside ordinary words (a test key `k` would eat every "k"), and no real API
/// key is that short (RapidAPI keys have 50 characters).
///
/// ```swift
/// let redactor = SecretRedactor(secrets: [manifest.source.apiKey?.value].compactMap { $0 })
/// redactor.redact("bad key sk-123456") // "bad key <redacted>"
/// ```
public struct SecretRedactor: Sendable, Equatable {
    public static let replacement = "<redacted>"
    public static let minimumLength = 4
    /// The secrets to replace, longest first (so a secret containing another is replaced whole).
    public let secrets: [String]

    public init(secrets: [String]) {
        self.secrets = Array(Set(secrets.filter { $0.count >= Self.minimumLength })).sorted { $0.count > $1.count }
    }

    public func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.replacement)
        }
        return result
    }
}

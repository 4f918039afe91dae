/// Replaces secrets (the API key) by `<redacted>`, as `APIKey` prints itself, in any text about to
/// be written out.
///
/// URLs and messages never carry the key by construction (it travels in a request header); this
/// is the last line of defence for log lines, in case a server echoes it back in an error body or a
/// future change lets it slip into a message.
///
/// ```swift
/// let redactor = SecretRedactor(secrets: [manifest.source.apiKey?.value].compactMap { $0 })
/// redactor.redact("bad key sk-123456") // "bad key <redacted>"
/// ```
public struct SecretRedactor: Sendable, Equatable {
    public static let replacement = "<redacted>"
    /// The non-empty secrets, longest first (so a secret containing another is replaced whole).
    public let secrets: [String]

    public init(secrets: [String]) {
        self.secrets = Array(Set(secrets.filter { !$0.isEmpty })).sorted { $0.count > $1.count }
    }

    public func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.replacement)
        }
        return result
    }
}

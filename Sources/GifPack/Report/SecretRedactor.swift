import Foundation

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

extension SecretRedactor {
    /// The redactor for a source's API key (none for a source without a key).
    public init(source: SourceSettings) { self.init(secrets: [source.apiKey?.value].compactMap { $0 }) }

    /// True when there is nothing to redact.
    public var isEmpty: Bool { secrets.isEmpty }

    /// `value` with every secret replaced in every string and object key, the structure unchanged.
    /// This is how a catalog record that echoes the key is published: the field stays, its text
    /// reads `<redacted>` where the key was, the same on every run.
    public func redact(_ value: JSONValue) -> JSONValue {
        guard !secrets.isEmpty else { return value }
        switch value {
        case .string(let text): return .string(redact(text))
        case .array(let values): return .array(values.map { redact($0) })
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for key in members.keys.sorted() { result[redact(key)] = redact(members[key]!) }
            return .object(result)
        default: return value
        }
    }

    /// `value` with every secret replaced in every string it encodes to (through its `Codable`
    /// form), so a report is clean whatever field a secret reached.
    public func redact<Value: Codable>(_ value: Value) -> Value {
        guard !secrets.isEmpty, let data = try? JSONEncoder().encode(value),
              let tree = try? JSONDecoder().decode(JSONValue.self, from: data) else { return value }
        let clean = redact(tree)
        guard clean != tree, let cleanData = try? JSONEncoder().encode(clean),
              let result = try? JSONDecoder().decode(Value.self, from: cleanData) else { return value }
        return result
    }
}

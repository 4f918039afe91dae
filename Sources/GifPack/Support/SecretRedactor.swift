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
package struct SecretRedactor: Sendable, Equatable {
    package static let replacement = "<redacted>"
    package static let minimumLength = 4
    /// The secrets to replace, longest first (so a secret containing another is replaced whole).
    package let secrets: [String]

    package init(secrets: [String]) {
        self.secrets = Array(Set(secrets.filter { $0.count >= Self.minimumLength })).sorted { $0.count > $1.count }
    }

    package func redact(_ text: String) -> String {
        guard mentionsSecret(text) else { return text }
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.replacement)
        }
        return result
    }

    /// True when `text` holds a secret. A byte search over the UTF-8 form (`memchr`, `memcmp`): the check every
    /// string of every catalog page and every report goes through, so it must cost little when, as
    /// nearly always, there is nothing to find.
    package func mentionsSecret(_ text: String) -> Bool {
        guard !secrets.isEmpty else { return false }
        var text = text
        return text.withUTF8 { haystack in secrets.contains { Self.occurs($0, in: UnsafeRawBufferPointer(haystack)) } }
    }

    static func occurs(_ secret: String, in haystack: UnsafeRawBufferPointer) -> Bool {
        var needle = secret
        return needle.withUTF8 { (needle: UnsafeBufferPointer<UInt8>) -> Bool in
            occurs(UnsafeRawBufferPointer(needle), in: haystack)
        }
    }

    /// A byte search: `memchr` finds each place the needle's first byte occurs, `memcmp` checks the rest.
    static func occurs(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first, let start = needle.baseAddress else { return true }
        guard let base = haystack.baseAddress, haystack.count >= needle.count else { return false }
        var offset = 0
        while haystack.count - offset >= needle.count {
            guard let hit = MemoryCalls.find(first, from: base + offset, count: haystack.count - offset - needle.count + 1) else { return false }
            if MemoryCalls.compare(hit, start, count: needle.count) == 0 { return true }
            offset = UnsafeRawPointer(hit) - base + 1
        }
        return false
    }
}

extension SecretRedactor {
    /// The redactor for a source's API key (none for a source without a key).
    package init(source: SourceSettings) { self.init(secrets: [source.apiKey?.value].compactMap { $0 }) }

    /// `value` with every secret replaced in every string and object key, the structure unchanged.
    /// This is how a catalog record that echoes the key is written into a pack: the field stays, its text
    /// reads `<redacted>` where the key was, the same on every run.
    package func redact(_ value: JSONValue) -> JSONValue {
        guard !secrets.isEmpty, mentionsSecret(value) else { return value }
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

    /// True when a string or object key anywhere in `value` holds a secret.
    package func mentionsSecret(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): mentionsSecret(text)
        case .array(let values): values.contains { mentionsSecret($0) }
        case .object(let members): members.contains { mentionsSecret($0.key) || mentionsSecret($0.value) }
        default: false
        }
    }

    /// Why a value could not be redacted: its `Codable` round trip failed, so it is not returned.
    package struct Unredactable: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    /// `value` with every secret replaced in every string it encodes to (through its `Codable`
    /// form), so a report is clean whatever field a secret reached. Fails closed: when the value
    /// cannot be encoded, or its cleaned form cannot be decoded again, it throws instead of
    /// returning the value as it was.
    ///
    /// The encoded bytes are searched first, and the value is returned as it is when no secret is in
    /// them (the usual case, whatever the report's size). That search is exact because the encoder
    /// escapes nothing but `"`, `\` and control characters: a secret holding one of those is looked
    /// for in the decoded strings instead. Non-finite numbers round-trip as strings.
    package func redacted<Value: Codable>(_ value: Value) throws(Unredactable) -> Value {
        guard !secrets.isEmpty else { return value }
        let strings = (positive: "+Infinity", negative: "-Infinity", nan: "NaN")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: strings.positive, negativeInfinity: strings.negative,
            nan: strings.nan)
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: strings.positive, negativeInfinity: strings.negative,
            nan: strings.nan)
        let data: Data
        do { data = try encoder.encode(value) } catch { throw Unredactable(description: "\(Value.self) cannot be encoded to be searched for secrets") }
        let plain = secrets.allSatisfy { $0.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") } }
        if plain, !data.withUnsafeBytes({ bytes in secrets.contains { Self.occurs($0, in: bytes) } }) { return value }
        let tree: JSONValue
        do { tree = try JSONDecoder().decode(JSONValue.self, from: data) } catch {
            throw Unredactable(description: "the encoded \(Value.self) cannot be read back to be searched for secrets")
        }
        let clean = redact(tree)
        guard clean != tree else { return value }
        do { return try decoder.decode(Value.self, from: try encoder.encode(clean)) } catch {
            throw Unredactable(description: "\(Value.self) with its secrets replaced is no longer a valid \(Value.self)")
        }
    }

    /// The report with every secret replaced (``redacted(_:)``); when that fails, a report that
    /// keeps only the exit status, the counts and the times, with a message saying it was
    /// withheld — never the report as it was.
    package func redact(_ report: BuildReport) -> BuildReport {
        do { return try redacted(report) } catch {
            var withheld = BuildReport(
                generator: redact(report.generator), exitStatus: report.exitStatus,
                message: "the report was withheld: it holds a secret and \(error.description)")
            withheld.exitMeaning = redact(report.exitMeaning)
            withheld.startedAt = report.startedAt
            withheld.finishedAt = report.finishedAt
            withheld.bytes = report.bytes
            withheld.stageSeconds = report.stageSeconds
            return withheld
        }
    }
}

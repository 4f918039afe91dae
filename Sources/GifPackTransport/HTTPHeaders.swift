/// An ordered list of HTTP header fields, as sent or as received.
///
/// Order and duplicates are kept (a response may carry several `Set-Cookie` or `Link` fields);
/// lookups by name are ASCII case-insensitive, as HTTP field names are. The subscript returns the
/// first match, `values(for:)` all of them.
///
/// Printing a value of this type (`description`, `dump`, string interpolation) never shows the
/// values of fields whose names look secret (`X-RapidAPI-Key`, `Authorization`, `Cookie`, anything
/// with "key", "token", "secret", "auth", "password" or "cookie" in its name): they print as
/// `<redacted>`.
///
/// ```swift
/// var headers: HTTPHeaders = ["X-RapidAPI-Host": "exercisedb.p.rapidapi.com"]
/// headers.append(name: "X-RapidAPI-Key", value: key)
/// headers["x-rapidapi-host"]            // "exercisedb.p.rapidapi.com"
/// print(headers)                        // X-RapidAPI-Host: exercisedb.p.rapidapi.com, X-RapidAPI-Key: <redacted>
/// ```
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// One header field.
    public typealias Element = (name: String, value: String)

    private struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    private var fields: [Field] = []

    /// An empty header list.
    public init() {}

    /// The given fields, in order.
    package init(_ fields: [(name: String, value: String)]) {
        self.fields = fields.map { Field(name: $0.name, value: $0.value) }
    }

    /// Number of fields, duplicates included.
    package var count: Int { fields.count }

    /// True when there is no field.
    package var isEmpty: Bool { fields.isEmpty }

    /// Adds a field after the existing ones, keeping any earlier field of the same name.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field with this name (case-insensitively).
    package mutating func remove(name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// The value of the first field with this name (case-insensitively), or nil. Setting replaces
    /// every field of that name with one field at the position of the first (or at the end);
    /// setting nil removes them.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            guard let newValue else { remove(name: name); return }
            if let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) {
                fields[first].value = newValue
                var index = fields.index(after: first)
                while index < fields.endIndex {
                    if Self.sameName(fields[index].name, name) { fields.remove(at: index) } else { index += 1 }
                }
            } else {
                append(name: name, value: newValue)
            }
        }
    }

    /// The values of every field with this name (case-insensitively), in order.
    package func values(for name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// True when a field with this name exists (case-insensitively).
    package func contains(name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.map { (name: $0.name, value: $0.value) }.makeIterator()
    }

    /// Appends an obsolete line-folded continuation to the last field's value.
    package mutating func extendLastValue(with continuation: String) {
        guard let last = fields.indices.last else { return }
        fields[last].value = fields[last].value.isEmpty ? continuation : fields[last].value + " " + continuation
    }

    /// ASCII case-insensitive comparison of two field names.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    /// True when the name suggests a credential, whose value must never be printed.
    package static func isSensitive(name: String) -> Bool {
        let lowered = name.lowercased()
        return ["key", "token", "secret", "auth", "password", "cookie"].contains { lowered.contains($0) }
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// `["Accept": "application/json"]`; literal order is kept.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// `[("Accept", "application/json")]`, or `[]` for no header.
    public init(arrayLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: CustomStringConvertible, CustomReflectable {
    /// `Name: value, Name: value`, secret-looking values replaced by `<redacted>`.
    public var description: String {
        fields.map { "\($0.name): \(Self.isSensitive(name: $0.name) ? "<redacted>" : $0.value)" }
            .joined(separator: ", ")
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            unlabeledChildren: fields.map {
                "\($0.name): \(Self.isSensitive(name: $0.name) ? "<redacted>" : $0.value)"
            }, displayStyle: .collection)
    }
}

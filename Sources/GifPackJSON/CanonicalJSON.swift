import GifPackSystem

/// The project's own canonical JSON, written byte by byte so that the bytes a pack hashes never
/// depend on a Foundation version (docs/FORMAT.md, "Canonical JSON", is the specification):
///
/// - no whitespace between tokens;
/// - object keys sorted by their UTF-8 bytes (equivalently, by Unicode code points);
/// - strings: `"` `\` escaped as `\"` `\\`; U+0008, U+0009, U+000A, U+000C, U+000D as `\b` `\t` `\n`
///   `\f` `\r`; other code points below U+0020 as `\u00xx` (lowercase hex); everything else,
///   `/`, U+007F and non-ASCII included, as its UTF-8 bytes;
/// - integers in decimal; other numbers as Swift's shortest round-trip `Double.description`
///   (`1.5`, `1e-05`, `1.2345678901234568e+17`) with a trailing `.0` dropped (`-0.0` → `-0`);
///   NaN and infinities cannot be written.
///
/// These are the bytes `JSONEncoder` gave with `[.sortedKeys, .withoutEscapingSlashes]` when
/// packs were first made, so existing packs keep their content digests.
///
/// ```swift
/// let bytes = try CanonicalJSON.encode(.object(["b": .integer(1), "a": .string("x/y")]))
/// // {"a":"x/y","b":1}
/// ```
package enum CanonicalJSON {
    /// A value that has no canonical JSON form.
    package enum EncodingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// NaN or an infinity: JSON has no such number.
        case nonFiniteNumber(Double)

        package var description: String {
            switch self {
            case .nonFiniteNumber(let value): "the number \(value) has no JSON form"
            }
        }
    }

    /// The canonical bytes of `value` (no trailing newline).
    package static func encode(_ value: JSONValue) throws(EncodingError) -> [UInt8] {
        var bytes: [UInt8] = []
        try append(value, to: &bytes)
        return bytes
    }

    /// Appends the canonical bytes of `value`.
    package static func append(_ value: JSONValue, to bytes: inout [UInt8]) throws(EncodingError) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): appendInteger(number, to: &bytes)
        case .number(let number): try appendNumber(number, to: &bytes)
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                try append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (position, member) in sorted.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                try append(member.value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends an integer in decimal.
    package static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: String(number).utf8)
    }

    /// Appends a finite number: shortest round-trip digits, a trailing `.0` dropped.
    package static func appendNumber(_ number: Double, to bytes: inout [UInt8]) throws(EncodingError) {
        guard number.isFinite else { throw .nonFiniteNumber(number) }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes += Array(text.utf8)
    }

    /// Appends a string literal, escaped as above.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendString(bytes: $0, to: &bytes) }
    }

    private static func appendString(bytes text: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(0x22)
        // Most strings need no escape: their bytes go in at once.
        if !text.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            bytes.append(contentsOf: text)
            bytes.append(0x22)
            return
        }
        for byte in text {
            switch byte {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x08: bytes += [0x5C, UInt8(ascii: "b")]
            case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
            case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
            case 0x0C: bytes += [0x5C, UInt8(ascii: "f")]
            case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
            case 0x00..<0x20:
                bytes += Array("\\u00".utf8)
                Hex.appendByte(byte, to: &bytes)
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }
}

import Foundation
import GifPackSystem

/// Bounds on the JSON text ``JSONParser`` accepts.
///
/// Every JSON document gifpack reads from outside (catalog pages, `catalog.json`, `index.json`, the
/// install manifest) is parsed with limits, so a hostile document is refused with a reason instead of
/// costing time or stack: nesting deeper than ``maxDepth`` and documents larger than ``maxBytes``.
///
/// ```swift
/// let value = try JSONParser.parse(bytes, limits: JSONLimits(maxDepth: 64, maxBytes: 64 << 20))
/// ```
package struct JSONLimits: Sendable, Equatable {
    /// Arrays and objects may nest at most this many levels (the outermost one is level 1).
    package var maxDepth: Int
    /// Largest document, in bytes.
    package var maxBytes: Int

    package init(maxDepth: Int = JSONLimits.standardDepth, maxBytes: Int = 64 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// The nesting every reader of the format accepts (see docs/FORMAT.md).
    package static let standardDepth = 64

    /// The nesting the builder accepts in an API list page. A record sits one or two levels down in
    /// a page and three levels down in `catalog.json` (`{"exercises":[{"data":…}]}`), so a page
    /// within this limit always gives a `catalog.json` within ``standardDepth``.
    package static let catalogPageDepth = 60

    /// 64 levels, 64 MiB.
    package static let standard = JSONLimits()
}

/// Why ``JSONParser`` refused a document, and the byte offset where it noticed.
///
/// ```swift
/// do { _ = try JSONParser.parse(Array("[[1]".utf8)) }
/// catch { print(error) }   // "JSON ends too early at byte 4: expected , or ]"
/// ```
package struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal.
    package enum Kind: Sendable, Equatable {
        /// Arrays or objects nested deeper than the limit.
        case tooDeep(limit: Int)
        /// The document is larger than the limit.
        case tooLarge(bytes: Int, limit: Int)
        /// Not JSON: the text says what was expected.
        case syntax(String)
        /// The input ended inside a value.
        case unexpectedEnd(String)
        /// A string holds bytes that are not UTF-8, or a `\u` escape names a lone surrogate.
        case invalidText(String)
        /// A number is not finite as a double (e.g. `1e400`).
        case numberOutOfRange
        /// An object names the same key twice (refused: readers could disagree on which one counts).
        case duplicateKey(String)
        /// Something other than whitespace follows the value.
        case trailingData
    }

    package var kind: Kind
    /// Byte offset in the input, counted from 0.
    package var offset: Int

    package init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    package var description: String {
        switch kind {
        case .tooDeep(let limit): "JSON nested deeper than \(limit) levels at byte \(offset)"
        case .tooLarge(let bytes, let limit): "JSON of \(bytes) bytes is larger than the \(limit)-byte limit"
        case .syntax(let expected): "not JSON at byte \(offset): \(expected)"
        case .unexpectedEnd(let expected): "JSON ends too early at byte \(offset): \(expected)"
        case .invalidText(let detail): "invalid text in a JSON string at byte \(offset): \(detail)"
        case .numberOutOfRange: "JSON number out of range at byte \(offset)"
        case .duplicateKey(let key): "JSON object repeats the key \"\(TerminalText.escaped(key, maxScalars: 80))\" at byte \(offset)"
        case .trailingData: "JSON value followed by more data at byte \(offset)"
        }
    }
}

/// A strict JSON (RFC 8259) parser into ``JSONValue`` that runs in time linear in its input, with
/// bounded nesting and size.
///
/// Foundation's `JSONDecoder` takes time that grows faster than the input on deeply nested values
/// (a 14 KB document of 500-level arrays costs seconds); this parser makes one pass, recursing at
/// most ``JSONLimits/maxDepth`` levels. Rules: UTF-8 only (no byte-order mark), no trailing commas,
/// no comments, no control characters inside strings, `\u` surrogate pairs combined and lone
/// surrogates refused, a key at most once per object. Numbers become `.integer` when they are
/// integral and fit an `Int64` (`1.0`, `1e2` included, as `JSONDecoder` reads them) and `.number`
/// otherwise; a number outside the double range is refused.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"id":"0001","n":[1,2.5]}"#.utf8))
/// value["id"]?.stringValue // "0001"
/// ```
package enum JSONParser {
    /// Parses a whole document.
    package static func parse(_ bytes: [UInt8], limits: JSONLimits = .standard) throws(JSONParseError) -> JSONValue {
        try parse(bytes, limits: limits, discardingArraysNamed: [])
    }

    /// Parses a whole document, checking it all, but keeps every array that is the value of an
    /// object member named in `discarded` as an empty array: its elements are parsed one at a time
    /// and let go. A reader that needs an index's packs but not their exercise lists holds a few
    /// kilobytes instead of the whole tree.
    ///
    /// ```swift
    /// let value = try JSONParser.parse(Array(#"{"a":[1,2],"b":3}"#.utf8), discardingArraysNamed: ["a"])
    /// // {"a":[],"b":3}
    /// ```
    package static func parse(
        _ bytes: [UInt8], limits: JSONLimits = .standard,
        discardingArraysNamed discarded: Set<String>
    ) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer, limits: limits, discardingArraysNamed: discarded) }
        }
        return try result.get()
    }

    /// Parses a document in memory that is not an array (a mapped file), as
    /// ``parse(_:limits:discardingArraysNamed:)`` does. `passed` is called now and then, while
    /// discarded elements are parsed, with an offset before which no byte is read again: a mapped
    /// file can let those pages go, so a large document is never resident whole.
    package static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, limits: JSONLimits = .standard,
        discardingArraysNamed discarded: Set<String>,
        passed: ((Int) -> Void)? = nil
    ) throws(JSONParseError) -> JSONValue {
        guard buffer.count <= limits.maxBytes else {
            throw JSONParseError(.tooLarge(bytes: buffer.count, limit: limits.maxBytes), at: 0)
        }
        var parser = Parser(input: buffer, maxDepth: limits.maxDepth, discarded: discarded, passed: passed)
        return try parser.document()
    }

    private struct Parser {
        let input: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        /// Member names whose array values are parsed but not kept.
        let discarded: Set<String>
        /// Told, every megabyte or so of discarded elements, where the parser is.
        let passed: ((Int) -> Void)?
        var lastPassed = 0
        var position = 0
        var depth = 0

        init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int, discarded: Set<String> = [], passed: ((Int) -> Void)? = nil) {
            self.input = input
            self.maxDepth = maxDepth
            self.discarded = discarded
            self.passed = passed
        }

        mutating func document() throws(JSONParseError) -> JSONValue {
            skipWhitespace()
            let value = try self.value()
            skipWhitespace()
            guard position == input.count else { throw JSONParseError(.trailingData, at: position) }
            return value
        }

        private mutating func skipWhitespace() {
            while position < input.count {
                switch input[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        private func fail(_ expected: String) -> JSONParseError {
            position < input.count
                ? JSONParseError(.syntax(expected), at: position)
                : JSONParseError(.unexpectedEnd(expected), at: position)
        }

        private mutating func value() throws(JSONParseError) -> JSONValue {
            guard position < input.count else { throw fail("expected a value") }
            switch input[position] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail("expected a value")
            }
        }

        private mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let start = position
            let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            for byte in text {
                guard position < input.count else { throw JSONParseError(.unexpectedEnd("expected \(word)"), at: start) }
                guard input[position] == byte else { throw JSONParseError(.syntax("expected \(word)"), at: start) }
                position += 1
            }
        }

        private mutating func enter() throws(JSONParseError) {
            depth += 1
            if depth > maxDepth { throw JSONParseError(.tooDeep(limit: maxDepth), at: position) }
        }

        private mutating func array(keeping: Bool = true) throws(JSONParseError) -> JSONValue {
            try enter()
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if position < input.count, input[position] == UInt8(ascii: "]") {
                position += 1
                depth -= 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                let element = try value()
                if keeping {
                    elements.append(element)
                } else if let passed, position - lastPassed >= 1 << 20 {
                    lastPassed = position
                    passed(position)
                }
                skipWhitespace()
                guard position < input.count else { throw fail("expected , or ]") }
                switch input[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    depth -= 1
                    return .array(elements)
                default: throw fail("expected , or ]")
                }
            }
        }

        private mutating func object() throws(JSONParseError) -> JSONValue {
            try enter()
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if position < input.count, input[position] == UInt8(ascii: "}") {
                position += 1
                depth -= 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard position < input.count, input[position] == UInt8(ascii: "\"") else { throw fail("expected a key string") }
                let keyOffset = position
                let key = try string()
                skipWhitespace()
                guard position < input.count, input[position] == UInt8(ascii: ":") else { throw fail("expected :") }
                position += 1
                skipWhitespace()
                let member =
                    if !discarded.isEmpty, discarded.contains(key), position < input.count,
                        input[position] == UInt8(ascii: "[")
                    {
                        try array(keeping: false)
                    } else {
                        try value()
                    }
                guard members.updateValue(member, forKey: key) == nil else {
                    throw JSONParseError(.duplicateKey(key), at: keyOffset)
                }
                skipWhitespace()
                guard position < input.count else { throw fail("expected , or }") }
                switch input[position] {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    depth -= 1
                    return .object(members)
                default: throw fail("expected , or }")
                }
            }
        }

        /// A string starting at the opening quote; leaves `position` after the closing one.
        private mutating func string() throws(JSONParseError) -> String {
            let start = position
            position += 1
            // Fast path: no escapes.
            var scan = position
            while scan < input.count {
                let byte = input[scan]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                scan += 1
            }
            if scan < input.count, input[scan] == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: input[position..<scan])
                guard let string = String(validating: text, as: UTF8.self) else {
                    throw JSONParseError(.invalidText("the bytes are not UTF-8"), at: start)
                }
                position = scan + 1
                return string
            }
            var bytes = Array(input[position..<scan])
            position = scan
            while true {
                guard position < input.count else { throw JSONParseError(.unexpectedEnd("the string is not closed"), at: position) }
                let byte = input[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    guard let string = String(validating: bytes, as: UTF8.self) else {
                        throw JSONParseError(.invalidText("the bytes are not UTF-8"), at: start)
                    }
                    return string
                case UInt8(ascii: "\\"):
                    try escape(into: &bytes)
                case 0..<0x20:
                    throw JSONParseError(.syntax("control character 0x\(String(byte, radix: 16)) inside a string"), at: position)
                default:
                    bytes.append(byte)
                    position += 1
                }
            }
        }

        private mutating func escape(into bytes: inout [UInt8]) throws(JSONParseError) {
            let start = position
            position += 1
            guard position < input.count else { throw JSONParseError(.unexpectedEnd("unfinished escape"), at: start) }
            let letter = input[position]
            position += 1
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(letter)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4(escapeAt: start)
                if (0xD800...0xDBFF).contains(code) {
                    guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"),
                        input[position + 1] == UInt8(ascii: "u")
                    else {
                        throw JSONParseError(.invalidText("\\u\(String(code, radix: 16)) is a lone high surrogate"), at: start)
                    }
                    let lowStart = position
                    position += 2
                    let low = try hex4(escapeAt: lowStart)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw JSONParseError(.invalidText("\\u\(String(code, radix: 16)) is not followed by a low surrogate"), at: start)
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw JSONParseError(.invalidText("\\u\(String(code, radix: 16)) is a lone low surrogate"), at: start)
                }
                bytes.append(contentsOf: Unicode.Scalar(code).map { Array(String($0).utf8) } ?? [])
            default:
                throw JSONParseError(.syntax("unknown escape"), at: start)
            }
        }

        private mutating func hex4(escapeAt start: Int) throws(JSONParseError) -> UInt32 {
            guard position + 4 <= input.count else { throw JSONParseError(.unexpectedEnd("unfinished \\u escape"), at: start) }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = input[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw JSONParseError(.syntax("\\u needs four hex digits"), at: start)
                }
                code = code << 4 | UInt32(digit)
                position += 1
            }
            return code
        }

        private mutating func digits() -> Int {
            let start = position
            while position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) { position += 1 }
            return position - start
        }

        private mutating func number() throws(JSONParseError) -> JSONValue {
            let start = position
            if input[position] == UInt8(ascii: "-") { position += 1 }
            guard position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) else {
                throw fail("expected a digit")
            }
            if input[position] == UInt8(ascii: "0") {
                position += 1
                if position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) {
                    throw JSONParseError(.syntax("a number may not start with 0"), at: start)
                }
            } else {
                _ = digits()
            }
            var isInteger = true
            if position < input.count, input[position] == UInt8(ascii: ".") {
                isInteger = false
                position += 1
                guard digits() > 0 else { throw fail("expected a digit after .") }
            }
            if position < input.count, input[position] == UInt8(ascii: "e") || input[position] == UInt8(ascii: "E") {
                isInteger = false
                position += 1
                if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits() > 0 else { throw fail("expected a digit in the exponent") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
            // Integral values in Int64's range written with a fraction or exponent are integers, as
            // JSONDecoder reads them (1.0, 1e2); digits alone beyond Int64 stay doubles.
            // -2^63 is also the double of decimals just below Int64.min (-9.223372036854776e+18, which
            // canonical JSON writes for -9223372036854775809): those do not fit and stay doubles, or
            // canonical bytes would read back as a different value.
            if !isInteger, double == double.rounded(), double >= -0x1p63, double < 0x1p63,
                double != -0x1p63 || Self.fitsInt64(text)
            {
                return .integer(Int64(double))
            }
            return .number(double)
        }

        /// Whether the decimal `text` (a JSON number) is at least Int64.min, compared exactly as
        /// decimals rather than as the double it rounds to.
        private static func fitsInt64(_ text: String) -> Bool {
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { return false }
            return value >= Decimal(Int64.min)
        }
    }
}

import Yams

/// A YAML node together with its key path, so every error can say where it happened.
struct ManifestNode {
    let node: Node
    let path: String

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The mapping's entries, refusing keys outside `allowed`.
    func mapping(allowed: [String]) throws(ManifestError) -> [String: ManifestNode] {
        guard case .mapping(let mapping) = node else {
            throw .wrongType(path: path.isEmpty ? "(top level)" : path, expected: "a mapping")
        }
        var result: [String: ManifestNode] = [:]
        for (keyNode, valueNode) in mapping {
            guard let key = keyNode.string else { throw .wrongType(path: path, expected: "a mapping with string keys") }
            guard allowed.contains(key) else { throw .unknownKey(path: child(key), allowed: allowed) }
            guard result[key] == nil else { throw .invalidValue(path: child(key), reason: "key appears twice") }
            result[key] = ManifestNode(node: valueNode, path: child(key))
        }
        return result
    }

    var isNull: Bool {
        if case .scalar(let scalar) = node, scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
            return true
        }
        return false
    }

    func string() throws(ManifestError) -> String {
        guard case .scalar(let scalar) = node, !isNull else { throw .wrongType(path: path, expected: "a string") }
        return scalar.string
    }

    func bool() throws(ManifestError) -> Bool {
        guard case .scalar(let scalar) = node else { throw .wrongType(path: path, expected: "true or false") }
        switch scalar.string {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: throw .wrongType(path: path, expected: "true or false")
        }
    }

    func int(in range: ClosedRange<Int>) throws(ManifestError) -> Int {
        guard case .scalar(let scalar) = node else { throw .wrongType(path: path, expected: "an integer") }
        guard let value = Int(scalar.string) else {
            if UnitParser.isInteger(scalar.string) {
                throw .invalidValue(path: path, reason: "\(scalar.string) is outside \(range.lowerBound)...\(range.upperBound)")
            }
            throw .wrongType(path: path, expected: "an integer")
        }
        guard range.contains(value) else {
            throw .invalidValue(path: path, reason: "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A string or a list of strings.
    func stringList() throws(ManifestError) -> [String] {
        switch node {
        case .scalar: return [try string()]
        case .sequence(let sequence):
            var values: [String] = []
            for (index, element) in sequence.enumerated() {
                values.append(try ManifestNode(node: element, path: "\(path)[\(index)]").string())
            }
            return values
        default: throw .wrongType(path: path, expected: "a string or a list of strings")
        }
    }

    func sequence() throws(ManifestError) -> [ManifestNode] {
        guard case .sequence(let sequence) = node else { throw .wrongType(path: path, expected: "a list") }
        return sequence.enumerated().map { ManifestNode(node: $0.element, path: "\(path)[\($0.offset)]") }
    }

    /// `"500ms"`, `"10s"`, `"5m"`, `"2h"`, `"30d"` or a bare number of seconds.
    func duration() throws(ManifestError) -> Duration {
        let text = try string().trimmingCharacters(in: .whitespaces)
        switch UnitParser.parseDuration(text) {
        case .value(let duration): return duration
        case .tooLarge:
            throw .invalidValue(path: path, reason: "\"\(text)\" is longer than the largest duration accepted, \(UnitParser.maxDurationDays)d")
        case .invalid:
            throw .invalidValue(path: path, reason: "\"\(text)\" is not a duration (examples: 500ms, 10s, 5m, 2h, 30d)")
        }
    }

    /// `"8MB"`, `"512KB"`, `"1GiB"` or a bare number of bytes.
    func byteSize() throws(ManifestError) -> Int64 {
        let text = try string().trimmingCharacters(in: .whitespaces)
        switch UnitParser.parseBytes(text) {
        case .value(let bytes) where bytes > 0: return bytes
        case .tooLarge:
            throw .invalidValue(path: path, reason: "\"\(text)\" is larger than the largest size accepted, \(UnitParser.maxBytes) bytes (1 TiB)")
        default:
            throw .invalidValue(path: path, reason: "\"\(text)\" is not a byte size (examples: 4194304, 512KB, 8MB)")
        }
    }
}

import Foundation

/// Parses the human units used in manifests. Values are bounded well inside `Int64` (durations
/// to ``maxDurationDays`` days, sizes to ``maxBytes``), so no later arithmetic on them (deadlines,
/// millisecond timeouts, byte budgets) can overflow.
enum UnitParser {
    /// The longest duration a manifest may give: 100 years.
    static let maxDurationDays = 36_500
    /// The largest byte size a manifest may give: 1 TiB.
    static let maxBytes: Int64 = 1 << 40

    enum Parsed<Value> {
        case value(Value)
        case tooLarge
        case invalid
    }

    static func duration(_ text: String) -> Duration? {
        if case .value(let duration) = parseDuration(text) { return duration }
        return nil
    }

    static func bytes(_ text: String) -> Int64? {
        if case .value(let bytes) = parseBytes(text) { return bytes }
        return nil
    }

    static func parseDuration(_ text: String) -> Parsed<Duration> {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var number: Double?
        var factor = 1.0
        if let (suffix, seconds) = units.first(where: { text.hasSuffix($0.0) }) {
            number = Double(text.dropLast(suffix.count))
            factor = seconds
        } else {
            number = Double(text)
        }
        guard let number, number >= 0, !number.isNaN else { return .invalid }
        let milliseconds = number * factor * 1000
        guard milliseconds.isFinite, milliseconds <= Double(maxDurationDays) * 86_400_000 else { return .tooLarge }
        return .value(.milliseconds(Int64(milliseconds.rounded())))
    }

    static func parseBytes(_ text: String) -> Parsed<Int64> {
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824),
            ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1)
        ]
        var number: Double?
        if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }) {
            number = Double(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)).map { $0 * factor }
        } else if let whole = Int64(text) {
            number = Double(whole)
        } else if isInteger(text) {
            return .tooLarge
        }
        guard let number, number >= 0, !number.isNaN else { return .invalid }
        guard number.isFinite, number <= Double(maxBytes) else { return .tooLarge }
        return .value(Int64(number))
    }

    /// True for an optionally signed run of decimal digits (an integer, however large).
    static func isInteger(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") || text.hasPrefix("+") ? text.dropFirst() : Substring(text)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}

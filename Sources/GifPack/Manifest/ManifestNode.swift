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
        guard case .scalar(let scalar) = node, let value = Int(scalar.string) else {
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
        guard let duration = UnitParser.duration(text) else {
            throw .invalidValue(path: path, reason: "\"\(text)\" is not a duration (examples: 500ms, 10s, 5m, 2h, 30d)")
        }
        return duration
    }

    /// `"8MB"`, `"512KB"`, `"1GiB"` or a bare number of bytes.
    func byteSize() throws(ManifestError) -> Int64 {
        let text = try string().trimmingCharacters(in: .whitespaces)
        guard let bytes = UnitParser.bytes(text), bytes > 0 else {
            throw .invalidValue(path: path, reason: "\"\(text)\" is not a byte size (examples: 4194304, 512KB, 8MB)")
        }
        return bytes
    }
}

import Foundation

/// Parses the human units used in manifests.
enum UnitParser {
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, seconds) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0, number.isFinite else { return nil }
            return .milliseconds(Int64((number * seconds * 1000).rounded()))
        }
        guard let number = Double(text), number >= 0, number.isFinite else { return nil }
        return .milliseconds(Int64((number * 1000).rounded()))
    }

    static func bytes(_ text: String) -> Int64? {
        let units: [(String, Double)] = [("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824),
                                         ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)),
                  number >= 0, number.isFinite else { return nil }
            return Int64(number * factor)
        }
        return Int64(text)
    }
}

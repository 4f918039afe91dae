import Foundation

// The one reader of Swift source text behind the repository's rule checks: the source
// lock rules (``SourceShape``: SourceShapeTests), the test hygiene rules (TestHygieneTests) and the
// client's portability and platform floor scans (ClientPortabilityTests, ClientPlatformFloorTests)
// all read code through ``SwiftSource``, which blanks comments and string literal contents (raw and
// multi-line strings, nested block comments; interpolated code stays code) and keeps every line
// where it was. Each rule is run on made-up sources that break it, so a check that cannot fail shows.

/// One Swift file, with comments and string literal contents blanked out (same length, same lines).
struct SwiftSource {
    let name: String
    let code: [UInt8]

    init(name: String, text: String) {
        self.name = name
        code = Self.blankCommentsAndStrings(Array(text.utf8))
    }

    /// The line of byte `offset`.
    func line(at offset: Int) -> Int { code[..<offset].reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } }

    func text(_ range: Range<Int>) -> String { String(decoding: code[range], as: UTF8.self) }

    /// The code, line by line (as many lines as the text, `\n`-separated).
    var lines: [String] { String(decoding: code, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// Comments and the contents of string literals become spaces (newlines kept); interpolated
    /// code inside strings (`\(…)`) stays code.
    static func blankCommentsAndStrings(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var index = 0
        func at(_ offset: Int, _ text: String) -> Bool {
            let pattern = Array(text.utf8)
            return offset + pattern.count <= bytes.count && Array(bytes[offset..<offset + pattern.count]) == pattern
        }
        func blank(_ range: Range<Int>) {
            for position in range where bytes[position] != UInt8(ascii: "\n") { out[position] = UInt8(ascii: " ") }
        }
        /// Scans code from `start` until an unbalanced `)` (inside an interpolation) or the end;
        /// returns the offset after that `)`.
        func code(from start: Int, inInterpolation: Bool) -> Int {
            var position = start, depth = 0
            while position < bytes.count {
                let byte = bytes[position]
                if at(position, "//") {
                    let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                    blank(position..<end)
                    position = end
                } else if at(position, "/*") {
                    var end = position + 2, nesting = 1
                    while end < bytes.count, nesting > 0 {
                        if at(end, "/*") { nesting += 1; end += 2 } else if at(end, "*/") { nesting -= 1; end += 2 } else { end += 1 }
                    }
                    blank(position..<end)
                    position = end
                } else if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && (at(position, "#\"") || at(position, "##\""))) {
                    position = string(from: position)
                } else {
                    if byte == UInt8(ascii: "(") { depth += 1 }
                    if byte == UInt8(ascii: ")") {
                        if inInterpolation && depth == 0 { return position + 1 }
                        depth -= 1
                    }
                    position += 1
                }
            }
            return position
        }
        /// A string literal starting at `start` (its `#`s or first quote); returns the offset after it.
        func string(from start: Int) -> Int {
            var position = start, hashes = 0
            while bytes[position] == UInt8(ascii: "#") { hashes += 1; position += 1 }
            let multiline = at(position, "\"\"\"")
            let quote = multiline ? "\"\"\"" : "\""
            position += quote.utf8.count
            let close = Array((quote + String(repeating: "#", count: hashes)).utf8)
            let escape = "\\" + String(repeating: "#", count: hashes)
            var contentStart = position
            while position < bytes.count {
                if at(position, escape) {
                    let afterEscape = position + escape.utf8.count
                    if afterEscape < bytes.count, bytes[afterEscape] == UInt8(ascii: "(") {
                        blank(contentStart..<position)
                        position = code(from: afterEscape + 1, inInterpolation: true)
                        contentStart = position
                    } else {
                        position = afterEscape + 1
                    }
                } else if position + close.count <= bytes.count, Array(bytes[position..<position + close.count]) == close {
                    blank(contentStart..<position)
                    return position + close.count
                } else if !multiline, bytes[position] == UInt8(ascii: "\n") {
                    blank(contentStart..<position)
                    return position
                } else {
                    position += 1
                }
            }
            blank(contentStart..<position)
            return position
        }
        while index < bytes.count { index = code(from: index, inInterpolation: false) }
        return out
    }
}

/// The shape rules: no function (`func`, `init`, `deinit`, `subscript`; from its declaration
/// line to the closing brace of its body) over `maxFunction` lines, no Swift file over `maxFile`
/// lines. A finding reads `path:line name length` (`<file>` for a file).
///
/// ```swift
/// let problems = try SourceShape.problems(under: root + "/Sources")
/// ```
enum SourceShape {
    /// Every `.swift` file below `root` (or `root` itself), in path order.
    static func swiftFiles(under root: String) throws -> [String] {
        if root.hasSuffix(".swift") { return [root] }
        guard let walker = FileManager.default.enumerator(atPath: root) else { throw ShapeError("cannot list \(root)") }
        var paths: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") { paths.append("\(root)/\(relative)") }
        return paths.sorted()
    }

    /// The lock rules for a file of `Sources/` (`path` relative to the package): an
    /// `@unchecked Sendable` in code carries `// @unchecked: <why it is safe>` on its line, and
    /// `NSLock` is used only by GifPackSystem's `Locked`.
    static func lockProblems(in text: String, path: String) -> [String] {
        let raw = text.split(separator: "\n", omittingEmptySubsequences: false)
        var problems: [String] = []
        for (index, line) in SwiftSource(name: path, text: text).lines.enumerated() {
            if line.contains("@unchecked Sendable"), !raw[index].contains("// @unchecked: ") {
                problems.append("\(path):\(index + 1): @unchecked Sendable without `// @unchecked: why it is safe` on its line")
            }
            if line.range(of: #"\bNSLock\b"#, options: .regularExpression) != nil, path != "Sources/GifPackSystem/Locked.swift" {
                problems.append("\(path):\(index + 1): NSLock (lock with GifPackSystem's Locked in the client's closure, Mutex elsewhere)")
            }
        }
        return problems
    }

    struct ShapeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

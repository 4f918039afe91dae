import Foundation
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// The shape rules for `Sources/`, held by ``SourceShape`` (GifPackTestSupport, on the
/// scanner the other rule checks share): no function over 100 lines, no file over 450. The check
/// runs on the real tree, and on a made-up source that breaks both rules, so it is seen to fail.
/// The lock rules ride along: every `@unchecked Sendable` says on its line why it is safe,
/// and `NSLock` appears only inside GifPackSystem's `Locked` (the Linux-only modules use `Mutex`).
@Suite("Source shape: functions and files within their limits", .timeLimit(.minutes(2)))
struct SourceShapeTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    // The tree scans run on a thread of their own: seconds of work in a debug build, too long to
    // hold one of the cooperative pool's two threads while the other suites run.
    @Test func sourcesKeepFunctionsUnder100LinesAndFilesUnder450() async throws {
        let root = Self.root
        let problems = try await onAThreadOfItsOwn("gifpack.test-shape-scan") { try SourceShape.problems(under: root + "/Sources") }
        #expect(problems.isEmpty, "over the limits (path:line name length):\n\(problems.joined(separator: "\n"))")
    }

    @Test(.computes) func theCheckNamesALongFunctionAndALongFile() throws {
        let folder = try TemporaryDirectory()
        let body = (0..<120).map { "    let v\($0) = \($0) // { not a brace that counts }" }.joined(separator: "\n")
        let padding = (0..<400).map { "// line \($0)" }.joined(separator: "\n")
        try "func tooLong() {\n\(body)\n}\n\(padding)\n".write(toFile: folder.file("Long.swift"), atomically: true, encoding: .utf8)
        try "func short() {\n    let x = \"}\"\n}\n".write(toFile: folder.file("Short.swift"), atomically: true, encoding: .utf8)
        let output = try SourceShape.problems(under: folder.path).joined(separator: "\n")
        #expect(!output.isEmpty)
        #expect(output.contains("Long.swift:1 tooLong"), "\(output)")
        #expect(output.contains("Long.swift:1 <file>"), "\(output)")
        #expect(!output.contains("Short.swift"), "\(output)")
    }

    @Test func everyUncheckedSendableSaysWhyAndOnlyLockedUsesNSLock() async throws {
        let root = Self.root
        let problems = try await onAThreadOfItsOwn("gifpack.test-lock-scan") { () throws -> [String] in
            var problems: [String] = []
            for path in try SourceShape.swiftFiles(under: root + "/Sources") {
                let name = String(path.dropFirst(root.count + 1))
                problems += SourceShape.lockProblems(in: try String(contentsOfFile: path, encoding: .utf8), path: name)
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test(.computes) func theLockCheckNamesAnUnexplainedUncheckedSendableAndAStrayNSLock() {
        let text = """
            final class A: @unchecked Sendable {
                private let lock = NSLock()
            }
            final class B: @unchecked Sendable {  // @unchecked: touched on one thread only.
                let text = "NSLock in a string is fine" // and NSLock in a comment
            }
            """
        #expect(SourceShape.lockProblems(in: text, path: "Sources/M/A.swift") == [
            "Sources/M/A.swift:1: @unchecked Sendable without `// @unchecked: why it is safe` on its line",
            "Sources/M/A.swift:2: NSLock (lock with GifPackSystem's Locked in the client's closure, Mutex elsewhere)",
        ])
        #expect(SourceShape.lockProblems(in: "let lock = NSLock()\n", path: "Sources/GifPackSystem/Locked.swift").isEmpty)
    }
}

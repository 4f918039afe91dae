import Foundation
import Testing
@testable import GifPackTestSupport

/// The source shape is a report, not a limit: `make lint` prints the longest functions and files
/// (`scripts/source-report.py`) for a reader to judge, and a type's story stays in one file where it
/// reads better so. The report is run here on a made-up tree, so a report that lists nothing shows.
/// The lock rules are checks: every `@unchecked Sendable` says on its line why it is safe, and
/// `NSLock` appears only inside GifPackSystem's `Locked` (the Linux-only modules use `Mutex`).
@Suite("Source shape: the length report and the lock rules", .timeLimit(.minutes(2)))
struct SourceShapeTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func theReportListsTheLongestFunctionAndFileFirstAndIgnoresBracesInCommentsAndStrings() async throws {
        let folder = try TemporaryDirectory()
        let body = (0..<120).map { "    let v\($0) = \($0) // { not a brace that counts }" }.joined(separator: "\n")
        let padding = (0..<400).map { "// line \($0)" }.joined(separator: "\n")
        try "func tooLong() {\n\(body)\n}\n\(padding)\n".write(toFile: folder.file("Long.swift"), atomically: true, encoding: .utf8)
        try "func short() {\n    let x = \"}\"\n    let y = 1\n}\n".write(toFile: folder.file("Short.swift"), atomically: true, encoding: .utf8)
        let output = folder.file("report.txt")
        let report = try ChildProcess(
            "/usr/bin/python3", [Self.root + "/scripts/source-report.py", "--top", "5", folder.path],
            stdout: .file(output), stderr: .file(output, append: true))
        #expect(await report.exitStatus() == 0)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == "source report: 2 files, 526 lines, 2 functions", "\(lines)")
        let files = lines.firstIndex(of: "longest files (lines):").map { Array(lines[($0 + 1)...].prefix(2)) } ?? []
        #expect(files == ["    522  \(folder.path)/Long.swift", "      4  \(folder.path)/Short.swift"], "\(lines)")
        let functions = lines.firstIndex(of: "longest functions (lines):").map { Array(lines[($0 + 1)...]) } ?? []
        #expect(functions == ["    122  \(folder.path)/Long.swift:1 tooLong", "      4  \(folder.path)/Short.swift:1 short"], "\(lines)")
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
        #expect(
            SourceShape.lockProblems(in: text, path: "Sources/M/A.swift") == [
                "Sources/M/A.swift:1: @unchecked Sendable without `// @unchecked: why it is safe` on its line",
                "Sources/M/A.swift:2: NSLock (lock with GifPackSystem's Locked in the client's closure, Mutex elsewhere)"
            ])
        #expect(SourceShape.lockProblems(in: "let lock = NSLock()\n", path: "Sources/GifPackSystem/Locked.swift").isEmpty)
    }
}

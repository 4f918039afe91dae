import Foundation
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// Issue 29's shape rules for `Sources/`, held by `scripts/source-shape.py`: no function over 100
/// lines, no file over 450. The script runs on the real tree, and on a made-up source that breaks
/// both rules, so the check is seen to fail.
@Suite("Source shape: functions and files within their limits", .timeLimit(.minutes(2)))
struct SourceShapeTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test func sourcesKeepFunctionsUnder100LinesAndFilesUnder450() async throws {
        let script = Self.root + "/scripts/source-shape.py"
        #expect(FileManager.default.fileExists(atPath: script), "missing \(script)")
        let result = try await run("/usr/bin/python3", [script, Self.root + "/Sources"])
        #expect(result.status == 0, "over the limits (path:line name length):\n\(result.output)\(result.error)")
    }

    @Test func theCheckNamesALongFunctionAndALongFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("source-shape-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let body = (0..<120).map { "    let v\($0) = \($0) // { not a brace that counts }" }.joined(separator: "\n")
        let padding = (0..<400).map { "// line \($0)" }.joined(separator: "\n")
        try "func tooLong() {\n\(body)\n}\n\(padding)\n".write(toFile: folder + "/Long.swift", atomically: true, encoding: .utf8)
        try "func short() {\n    let x = \"}\"\n}\n".write(toFile: folder + "/Short.swift", atomically: true, encoding: .utf8)
        let result = try await run("/usr/bin/python3", [Self.root + "/scripts/source-shape.py", folder])
        #expect(result.status == 1, "\(result.output)\(result.error)")
        #expect(result.output.contains("Long.swift:1 tooLong"), "\(result.output)")
        #expect(result.output.contains("Long.swift:1 <file>"), "\(result.output)")
        #expect(!result.output.contains("Short.swift"), "\(result.output)")
    }
}

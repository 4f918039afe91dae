import Foundation
import Testing
@testable import GifPackTestSupport

/// The README's five-minute path, run as written: the block is cut out of README.md at test time and
/// run by `bash -e` (any failing step fails the test) under `env -i`, from a folder laid out like the
/// repository root after `make install`: `manifests/demo.yaml`, `.build/release/exercisedb-fixture`,
/// and `gifpack` on the `PATH` (the debug builds of both stand in for the release ones).
@Suite("README: the five-minute path", .timeLimit(.minutes(5)))
struct ReadmeQuickstartTests {
    static let heading = "## Five minutes: build, publish, install"

    /// The first ```sh block under `heading`.
    static func quickstartBlock(in readme: String) throws -> String {
        guard let section = readme.range(of: "\n\(heading)\n") else { throw ExtractionError("README.md has no \"\(heading)\" section") }
        let rest = readme[section.upperBound...]
        guard let open = rest.range(of: "```sh\n") else { throw ExtractionError("the section has no ```sh block") }
        let body = rest[open.upperBound...]
        guard let close = body.range(of: "\n```\n") else { throw ExtractionError("the ```sh block is not closed") }
        return String(body[..<close.lowerBound]) + "\n"
    }

    struct ExtractionError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    @Test func theBlockRunsAsWrittenAndInstallsEveryPackedGIF() async throws {
        let readme = try String(contentsOfFile: "\(Self.repositoryRoot)/README.md", encoding: .utf8)
        let block = try Self.quickstartBlock(in: readme)
        #expect(block.contains("gifpack install"), "the block no longer ends in an install")

        let root = try TemporaryDirectory()
        let fm = FileManager.default
        try fm.createDirectory(atPath: root.file("manifests"), withIntermediateDirectories: true)
        try fm.copyItem(atPath: "\(Self.repositoryRoot)/manifests/demo.yaml", toPath: root.file("manifests/demo.yaml"))
        try fm.createDirectory(atPath: root.file(".build/release"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root.file(".build/release/exercisedb-fixture"), withDestinationPath: productPath("exercisedb-fixture"))
        try fm.createDirectory(atPath: root.file("bin"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: root.file("bin/gifpack"), withDestinationPath: productPath("gifpack"))
        let script = try root.write(block, to: "quickstart.sh")

        let result = try await run(
            "/usr/bin/env",
            [
                "-i", "PATH=\(root.file("bin")):/usr/bin:/bin", "HOME=\(root.path)",
                "/bin/bash", "-e", script
            ], currentDirectory: root.path)
        #expect(result.status == 0, "the block failed (\(result.status)):\n\(result.output)\n\(result.error)")

        // The install holds one GIF file per exercise that has one, named by id, as the index says.
        let index = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root.file("www/index.json")))) as? [String: Any]
        let packs = try #require(index?["packs"] as? [[String: Any]])
        #expect(!packs.isEmpty)
        let installed = try fm.contentsOfDirectory(atPath: root.file("exercise-gifs")).filter { $0.hasSuffix(".gif") }
        #expect(installed.count >= 50, "expected the demo's 60 exercises installed, found \(installed.count)")
        #expect(fm.fileExists(atPath: root.file("dist/index.json")))
    }

    @Test(.computes) func theExtractorFindsTheBlockAndRefusesAReadmeWithoutIt() throws {
        let sample = "# x\n\n\(Self.heading)\n\ntext\n\n```sh\necho one\necho two\n```\n\n## Next\n"
        #expect(try Self.quickstartBlock(in: sample) == "echo one\necho two\n")
        #expect(throws: (any Error).self) { try Self.quickstartBlock(in: "# x\n\n## Other\n\n```sh\necho\n```\n") }
    }
}

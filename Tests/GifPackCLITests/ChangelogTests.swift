import Foundation
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

/// CHANGELOG.md and the built `gifpack` agree: the newest released section (the first `## [x.y.z]`
/// heading; `## [Unreleased]` is not a release) names the version `gifpack --version` prints.
@Suite("CHANGELOG.md and gifpack --version agree", .timeLimit(.minutes(3)))
struct ChangelogTests {
    struct Missing: Error, CustomStringConvertible { var description: String }

    /// The version of the first `## [MAJOR.MINOR.PATCH]` heading of a changelog.
    static func newestReleased(in changelog: String) throws -> String {
        for line in changelog.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("## [") {
            let name = line.dropFirst(4).prefix { $0 != "]" }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) {
                return String(name)
            }
        }
        throw Missing(description: "CHANGELOG.md has no released section (a `## [x.y.z]` heading)")
    }

    @Test func theNewestReleasedSectionIsTheVersionGifpackReports() async throws {
        let changelog = try String(contentsOfFile: "\(PublishServers.repositoryRoot)/CHANGELOG.md", encoding: .utf8)
        let released = try Self.newestReleased(in: changelog)
        let result = try await gifpackCLI(["--version"])
        #expect(result.status == 0, "\(result.error)")
        #expect(
            result.output.trimmingCharacters(in: .whitespacesAndNewlines) == released,
            "gifpack --version prints \(result.output), CHANGELOG.md's newest release is \(released)")
    }

    @Test(.computes) func unreleasedAndMalformedHeadingsAreNotReleases() throws {
        #expect(try Self.newestReleased(in: "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n\n## [0.1.0]\n") == "0.2.0")
        #expect(throws: Missing.self) { try Self.newestReleased(in: "## [Unreleased]\n## [1.2] - x\n## [v1.0.0]\n") }
    }
}

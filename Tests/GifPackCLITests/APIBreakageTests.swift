import Foundation
import Testing
@testable import GifPackTestSupport

/// A release does not break an app's build unnoticed. scripts/api-check.sh
/// compares the public API of the test run's own modules (what `import GifPackClient` gives, dumped
/// by swift-api-digester) with the newest baseline, api/GifPackClient-<version>.json; a breaking
/// change passes only when CHANGELOG.md's [Unreleased] section announces it with a
/// `### Breaking (X.Y.Z)` heading that raises the minor version (before 1.0). A copy of the API with
/// a public member removed shows the check failing, and what makes it pass.
@Suite("API promise: a breaking change needs a new minor version in CHANGELOG.md", .timeLimit(.minutes(2)))
struct APIBreakageTests {
    static var script: String { "\(DocCCatalogTests.root)/scripts/api-check.sh" }

    static func check(_ arguments: [String], changelog: String? = nil) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        if let changelog { environment["CHANGELOG"] = changelog }
        return try await run("/bin/bash", [script] + arguments, environment: environment)
    }

    @Test func theBuiltAPIKeepsTheBaselineOrItsBreakIsAnnounced() async throws {
        let result = try await Self.check([try FloorObjectScan.buildDirectory()])
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(result.output.contains("api-check: "), "\(result.output)")
    }

    /// Removes from `node` the first descendant (depth first) whose printedName starts with `prefix`.
    static func removing(_ prefix: String, from node: inout [String: Any]) -> Bool {
        guard var children = node["children"] as? [[String: Any]] else { return false }
        if let at = children.firstIndex(where: { ($0["printedName"] as? String)?.hasPrefix(prefix) == true }) {
            children.remove(at: at)
            node["children"] = children
            return true
        }
        for index in children.indices where removing(prefix, from: &children[index]) {
            node["children"] = children
            return true
        }
        return false
    }

    @Test func aRemovedPublicMemberFailsUntilCHANGELOGAnnouncesTheNextMinorVersion() async throws {
        let work = try TemporaryDirectory()
        // The API as built, recorded as the baseline of a release 0.3.0; the current API lacks GIFLoader.emptyMemory().
        let baseline = work.file("GifPackClient-0.3.0.json")
        let dumped = try await Self.check(["--dump", try FloorObjectScan.buildDirectory(), baseline])
        try #require(dumped.status == 0, "\(dumped.error)")
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: baseline))) as? [String: Any])
        var abi = try #require(root["ABIRoot"] as? [String: Any])
        #expect(Self.removing("emptyMemory(", from: &abi))
        root["ABIRoot"] = abi
        let removed = work.file("removed.json")
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: removed))

        let unchanged = try await Self.check(["--compare", baseline, baseline])
        #expect(unchanged.status == 0 && unchanged.output.contains("keeps every declaration of 0.3.0"), "\(unchanged.output)")

        let changelog = work.file("CHANGELOG.md")
        func writeChangelog(_ unreleased: String) throws -> String {
            try "# Changelog\n\n## [Unreleased]\n\n\(unreleased)\n### Added\n\n## [0.3.0] - 2026-12-01\n\n### Breaking (0.4.0)\n"
                .write(toFile: changelog, atomically: true, encoding: .utf8)
            return changelog
        }
        let silent = try await Self.check(["--compare", baseline, removed], changelog: try writeChangelog(""))
        #expect(silent.status == 1, "\(silent.output)")
        #expect(silent.output.contains("Func GIFLoader.emptyMemory() has been removed"), "\(silent.output)")
        #expect(silent.error.contains("not announced"), "\(silent.error)")

        // A patch release does not allow it; the released section's heading does not count.
        let patch = try await Self.check(["--compare", baseline, removed], changelog: try writeChangelog("### Breaking (0.3.1)\n"))
        #expect(patch.status == 1 && patch.error.contains("does not raise the minor version"), "\(patch.error)")

        let announced = try await Self.check(["--compare", baseline, removed], changelog: try writeChangelog("### Breaking (0.4.0)\n"))
        #expect(announced.status == 0, "\(announced.output)\n\(announced.error)")
        #expect(announced.output.contains("1 breaking changes against 0.3.0, announced in CHANGELOG.md as 0.4.0"), "\(announced.output)")

        // An addition breaks nothing: the member is new against a baseline without it.
        let added = work.file("GifPackClient-0.3.1.json")
        try FileManager.default.copyItem(atPath: removed, toPath: added)
        let addition = try await Self.check(["--compare", added, baseline], changelog: try writeChangelog(""))
        #expect(addition.status == 0, "\(addition.output)\n\(addition.error)")
    }

    /// The repository holds one baseline, named by the release whose API it records.
    @Test(.computes) func theBaselineIsARecordedReleaseVersion() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: "\(DocCCatalogTests.root)/api").filter { $0.hasSuffix(".json") }
        #expect(names.count == 1, "one baseline, the last release's: \(names)")
        #expect(names.allSatisfy { $0.wholeMatch(of: /GifPackClient-\d+\.\d+\.\d+\.json/) != nil }, "\(names)")
    }
}

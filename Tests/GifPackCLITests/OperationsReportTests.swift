import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackCLI
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// report.json and the metrics file against fixture builds whose every outcome is known in advance.
@Suite("Operations: report and metrics of known builds", .timeLimit(.minutes(5)))
struct OperationsReportTests {
    /// Four builds over the same cache: faults and a 404, then 304s with a reused last good GIF,
    /// then fresh skips, then a quota stop. Every counter of each report and of its metrics is checked.
    @Test func everyCounterOfFourBuildsIsRight() async throws {
        let server = try startFixture(count: 12) {
            $0.duplicateEvery = 4
            $0.quota = 1000
        }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let ids = server.catalog.exercises.map(\.id).sorted()
        let conditional = rapidAPIManifest(server: server, fetch: "  refresh_after: 0")
            .replacingOccurrences(of: "concurrency: 3", with: "concurrency: 1")
        let metrics = MetricsFile(path: workspace.file("metrics/gifpack.prom"))

        // Build 1: one retry, two retries, a persistent 404; everything else downloaded.
        server.schedule([.status(500)], forExercise: ids[0])
        server.setDefaultFault(.status(404), forExercise: ids[1])
        server.schedule([.status(503), .htmlWith200], forExercise: ids[2])
        let first = try await runBuild(manifest: conditional, workspace: workspace)
        let good = ids.filter { $0 != ids[1] }
        let served = good.map { server.catalog.gifBytes(id: $0, resolution: 180)! }
        let distinct = Set(served.map(sha256Hex)).count
        #expect(distinct < served.count, "the fixture must serve some identical GIFs")

        #expect(first.exitStatus == .partial, "\(first.message)")
        #expect(first.exitMeaning == ExitStatus.partial.summary)
        #expect(first.schemaVersion == 2)
        #expect(first.gifs.wanted == 12)
        #expect(first.gifs.valid == 11)
        #expect(first.gifs.downloaded == 11)
        #expect(first.gifs.newlyStored == distinct)
        #expect(first.gifs.deduplicated == 11 - distinct)
        #expect(first.gifs.notModified == 0)
        #expect(first.gifs.skippedFresh == 0)
        #expect(first.gifs.reusedLastGood == 0)
        #expect(first.gifs.rejected == 1)
        #expect(first.gifs.rejectedByReason == ["http-404": 1])
        #expect(first.gifs.missing == 1)
        #expect(first.rejections.map(\.exerciseID) == [ids[1]])
        #expect(first.gifs.bytesDownloaded == Int64(served.reduce(0) { $0 + $1.count }))
        #expect(first.bytes.downloaded == first.gifs.bytesDownloaded)
        #expect(first.http.retries == 3)
        #expect(server.stats.imageRequests == 12 + 3)
        #expect(first.http.requests == server.stats.totalRequests)
        #expect(first.http.requests == first.catalog.pages + 15)
        #expect(first.http.quotaRemaining == server.quotaRemaining)
        #expect(first.http.quotaRemaining == 1000 - 15)
        try expectPacks(first, in: workspace, outcome: "published", version: 1)
        #expect(first.bytes.written == first.bytes.packed)
        #expect(Set(first.stageSeconds.keys) == Set(BuildStage.allCases.map(\.rawValue) + ["total"]))
        #expect(first.startedAt != nil && first.finishedAt != nil)
        #expect(try decodedReportFile(workspace) == first, "report.json holds exactly the returned report")

        let firstMetrics = try PrometheusSamples(try metrics.write(first, finishedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        try expectMetrics(firstMetrics, match: first)
        #expect(firstMetrics["gifpack_last_success_timestamp_seconds"] == 1_800_000_000)
        #expect(firstMetrics["gifpack_gifs_rejected{reason=\"http-404\"}"] == 1)
        #expect(firstMetrics["gifpack_pack_published{pack=\"all\"}"] == 1)

        // Build 2: 304s, the 404 remembered (missing_ttl), one GIF failing 4 times keeps its old GIF.
        server.setDefaultFault(.status(500), forExercise: ids[3])
        server.resetStats()
        let second = try await runBuild(manifest: conditional, workspace: workspace)
        #expect(second.exitStatus == .partial, "\(second.message)")
        #expect(second.gifs.downloaded == 0)
        #expect(second.gifs.notModified == 10)
        #expect(second.gifs.skippedFresh == 0)
        #expect(second.gifs.reusedLastGood == 1)
        #expect(second.reusedLastGood.map(\.exerciseID) == [ids[3]])
        #expect(second.reusedLastGood.first?.reason == .httpStatus(500))
        #expect(second.gifs.valid == 11)
        #expect(second.gifs.rejectedByReason == ["known-missing": 1])
        #expect(second.gifs.missing == 1)
        #expect(second.gifs.deduplicated == 0)
        #expect(second.http.retries == 3)
        #expect(server.stats.imageRequests == 10 + 4)
        #expect(second.http.requests == second.catalog.pages + 14)
        #expect(second.http.quotaRemaining == 1000 - 15 - 14)
        try expectPacks(second, in: workspace, outcome: "unchanged", version: 1)
        #expect(second.bytes.written == 0)
        let secondMetrics = try PrometheusSamples(try metrics.write(second, finishedAt: Date(timeIntervalSince1970: 1_800_000_100)))
        try expectMetrics(secondMetrics, match: second)
        #expect(secondMetrics["gifpack_last_success_timestamp_seconds"] == 1_800_000_100, "exit 3 wrote its packs: a success")
        #expect(secondMetrics["gifpack_pack_published{pack=\"all\"}"] == 0)

        // Build 3: within refresh_after nothing is asked again but the GIF that failed (a 304 now).
        server.setDefaultFault(nil, forExercise: ids[3])
        server.resetStats()
        let fresh = rapidAPIManifest(server: server, fetch: "  refresh_after: 7d").replacingOccurrences(of: "concurrency: 3", with: "concurrency: 1")
        let third = try await runBuild(manifest: fresh, workspace: workspace)
        #expect(third.exitStatus == .partial, "\(third.message)")
        #expect(third.gifs.skippedFresh == 10)
        #expect(third.gifs.notModified == 1)
        #expect(third.gifs.downloaded == 0)
        #expect(third.gifs.reusedLastGood == 0)
        #expect(third.gifs.rejectedByReason == ["known-missing": 1])
        #expect(server.stats.imageRequests == 1)
        #expect(third.http.retries == 0)
        try expectPacks(third, in: workspace, outcome: "unchanged", version: 1)
        let thirdMetrics = try PrometheusSamples(try metrics.write(third, finishedAt: Date(timeIntervalSince1970: 1_800_000_200)))
        try expectMetrics(thirdMetrics, match: third)

        // Build 4: the monthly quota is used up. Exit 5, nothing written, last success kept.
        server.setQuota(0)
        let fourth = try await runBuild(manifest: conditional, workspace: workspace)
        #expect(fourth.exitStatus == .quotaExhausted, "\(fourth.message)")
        #expect(fourth.stopReason?.exitStatus == .quotaExhausted, "\(String(describing: fourth.stopReason))")
        #expect(fourth.packs.isEmpty)
        #expect(fourth.stageSeconds["fetch"] != nil, "a stopped fetch still reports its duration")
        #expect(try decodedReportFile(workspace) == fourth)
        let fourthMetrics = try PrometheusSamples(try metrics.write(fourth, finishedAt: Date(timeIntervalSince1970: 1_800_000_300)))
        try expectMetrics(fourthMetrics, match: fourth)
        #expect(fourthMetrics["gifpack_exit_status"] == 5)
        #expect(fourthMetrics["gifpack_last_run_timestamp_seconds"] == 1_800_000_300)
        #expect(fourthMetrics["gifpack_last_success_timestamp_seconds"] == 1_800_000_200, "a failed run keeps the last success")
        #expect(fourthMetrics.names.contains("gifpack_pack_bytes") == false, "no packs, no pack samples")
    }

    @Test(.computes) func aFailedRunBeforeAnySuccessReportsZeroAndTheFileIsReplacedAtomically() throws {
        let workspace = try TemporaryDirectory()
        let path = workspace.file("gifpack.prom")
        let failed = BuildReport(generator: "gifpack test", exitStatus: .failed, message: "no luck")
        let text = try MetricsFile(path: path).write(failed, finishedAt: Date(timeIntervalSince1970: 1_700_000_000))
        let samples = try PrometheusSamples(text)
        #expect(samples["gifpack_last_success_timestamp_seconds"] == 0)
        #expect(samples["gifpack_exit_status"] == 1)
        #expect(samples["gifpack_quota_remaining"] == nil, "an unknown quota is left out, not reported as 0")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: workspace.path) == ["gifpack.prom"],
            "no temporary file is left beside it")
        #expect(MetricsText.lastSuccess(in: "gifpack_last_success_timestamp_seconds 1.7e9\n") == 1.7e9)
        #expect(MetricsText.lastSuccess(in: "# gifpack_last_success_timestamp_seconds 5\n") == nil)
    }

    @Test(.computes) func labelValuesAreEscaped() throws {
        var report = BuildReport(generator: "gifpack test", exitStatus: .success, message: "")
        report.gifs.rejectedByReason = ["odd \"reason\"\\\n": 2]
        let samples = try PrometheusSamples(MetricsText.render(report, finishedAt: Date(), previousLastSuccess: nil))
        #expect(samples[#"gifpack_gifs_rejected{reason="odd \"reason\"\\\n"}"#] == 2)
    }

    private func expectPacks(_ report: BuildReport, in workspace: TemporaryDirectory, outcome: String, version: Int) throws {
        #expect(report.packs.map(\.outcome) == [outcome])
        let pack = try #require(report.packs.first)
        #expect(pack.version == version)
        #expect(pack.isNewVersion == (outcome == "published"))
        let size = try #require(FileSystem.fileSize(workspace.file("dist/\(pack.file)")))
        #expect(pack.bytes == size)
        #expect(report.bytes.packed == size)
        #expect(report.bytes.packedUncompressed == pack.uncompressedBytes)
        let ratio = (Double(pack.uncompressedBytes) / Double(size) * 1000).rounded() / 1000
        #expect(pack.compressionRatio == ratio)
        #expect(report.bytes.compressionRatio == ratio)
        #expect(pack.missing == report.gifs.missing)
    }

    private func decodedReportFile(_ workspace: TemporaryDirectory) throws -> BuildReport {
        try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
    }

    /// The metrics that mirror report counters hold exactly those counters.
    private func expectMetrics(_ samples: PrometheusSamples, match report: BuildReport) throws {
        let gifs = report.gifs
        #expect(samples["gifpack_exit_status"] == Double(report.exitStatus.rawValue))
        #expect(samples["gifpack_build_duration_seconds"].map { abs($0 - report.stageSeconds["total"]!) < 1e-5 } == true)
        #expect(samples["gifpack_gifs_wanted"] == Double(gifs.wanted))
        #expect(samples["gifpack_gifs{outcome=\"downloaded\"}"] == Double(gifs.downloaded))
        #expect(samples["gifpack_gifs{outcome=\"not_modified\"}"] == Double(gifs.notModified))
        #expect(samples["gifpack_gifs{outcome=\"skipped_fresh\"}"] == Double(gifs.skippedFresh))
        #expect(samples["gifpack_gifs{outcome=\"reused_last_good\"}"] == Double(gifs.reusedLastGood))
        #expect(samples["gifpack_gifs{outcome=\"missing\"}"] == Double(gifs.missing))
        let outcomes = ["downloaded", "not_modified", "skipped_fresh", "reused_last_good", "missing"]
            .compactMap { samples["gifpack_gifs{outcome=\"\($0)\"}"] }.reduce(0, +)
        #expect(outcomes == Double(gifs.wanted), "the outcomes partition the GIFs wanted")
        #expect(samples["gifpack_gifs_deduplicated"] == Double(gifs.deduplicated))
        for (reason, count) in gifs.rejectedByReason {
            #expect(samples["gifpack_gifs_rejected{reason=\"\(reason)\"}"] == Double(count))
        }
        #expect(samples["gifpack_downloaded_bytes"] == Double(gifs.bytesDownloaded))
        #expect(samples["gifpack_requests"] == Double(report.http.requests))
        #expect(samples["gifpack_retries"] == Double(report.http.retries))
        #expect(samples["gifpack_quota_remaining"] == report.http.quotaRemaining.map(Double.init))
        for pack in report.packs {
            #expect(samples["gifpack_pack_bytes{pack=\"\(pack.name)\"}"] == Double(pack.bytes))
            #expect(samples["gifpack_pack_version{pack=\"\(pack.name)\"}"] == Double(pack.version))
        }
    }
}

/// The samples of a Prometheus text exposition, checked line by line: every non-comment line is
/// `name{labels} value`, and every sample's family was introduced by `# HELP` and `# TYPE`.
struct PrometheusSamples {
    struct FormatError: Error, CustomStringConvertible {
        var line: String
        var problem: String
        var description: String { "\(problem): \(line)" }
    }

    private(set) var values: [String: Double] = [:]
    private(set) var names: Set<String> = []

    init(_ text: String) throws {
        #expect(text.hasSuffix("\n"), "the exposition ends with a newline")
        var helped: Set<String> = []
        var typed: Set<String> = []
        let sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$/
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) where !line.isEmpty {
            if line.hasPrefix("# HELP ") {
                helped.insert(String(line.dropFirst(7).prefix { $0 != " " }))
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["gauge", "counter"].contains(parts[3]) else { throw FormatError(line: line, problem: "bad TYPE") }
                typed.insert(String(parts[2]))
            } else if line.hasPrefix("#") {
                continue
            } else {
                guard let match = line.wholeMatch(of: sample) else { throw FormatError(line: line, problem: "not name{labels} value") }
                let name = String(match.output.1)
                guard name.hasPrefix("gifpack_") else { throw FormatError(line: line, problem: "unprefixed name") }
                guard helped.contains(name), typed.contains(name) else { throw FormatError(line: line, problem: "no HELP/TYPE before") }
                guard let value = Double(match.output.3) ?? ["NaN": .nan, "+Inf": .infinity, "-Inf": -.infinity][String(match.output.3)] else {
                    throw FormatError(line: line, problem: "bad value")
                }
                let key = name + (match.output.2.map(String.init) ?? "")
                guard values[key] == nil else { throw FormatError(line: line, problem: "duplicate sample") }
                values[key] = value
                names.insert(name)
            }
        }
    }

    subscript(key: String) -> Double? { values[key] }
}

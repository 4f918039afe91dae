import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The built `gifpack` binary as cron and CI see it: standard error is a pipe.
@Suite("Operations: the command line unattended", .timeLimit(.minutes(3)))
struct OperationsCLITests {
    private func environment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["SOURCE_DATE_EPOCH"] = "1700000000"
        environment["TERM"] = "xterm-256color"  // colour would be allowed on a terminal: a pipe must still get none
        environment.removeValue(forKey: "NO_COLOR")
        return environment
    }

    /// `latency`: a build whose fetch lasts several of the progress renderer's ticks (0.1 s) needs
    /// tens of milliseconds a request; at 3 ms its 24 GIFs are fetched within one tick, before any
    /// plain progress line is due.
    private func faultyServer(latency: Int = 3) throws -> FixtureServer {
        let server = try startFixture(count: 24) { $0.latencyMilliseconds = latency }
        let ids = server.catalog.exercises.map(\.id).sorted()
        server.setDefaultFault(.status(404), forExercise: ids[0])
        server.schedule([.status(503)], forExercise: ids[1])
        return server
    }

    private func arguments(_ manifest: String, _ workspace: TemporaryDirectory, _ extra: [String]) -> [String] {
        ["build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache")] + extra
    }

    @Test func textOutputToAPipeHoldsNoControlCharacters() async throws {
        let server = try faultyServer(latency: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let result = try await run(
            productPath("gifpack"), arguments(manifest, workspace, ["--verbose", "--progress-interval", "0.05"]),
            environment: environment())
        #expect(result.status == 3, "\(result.error)")
        for (name, text) in [("stderr", result.error), ("stdout", result.output)] {
            let controls = text.unicodeScalars.filter { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }
            #expect(controls.isEmpty, "\(name) holds control characters: \(controls.map { String($0.value, radix: 16) })")
        }
        #expect(!result.error.contains("\u{1B}") && !result.error.contains("\r"))
        let lines = result.error.split(separator: "\n")
        #expect(lines.contains { $0.contains(" info    fetch ") && $0.contains("event=progress") }, "plain progress lines")
        #expect(lines.contains { $0.contains("event=attempt") && $0.contains("outcome=retry") && $0.contains("status=503") })
        #expect(lines.contains { $0.contains(" warning ") && $0.contains("http-404") })
        #expect(result.output.contains("gifs: 24 wanted"), "the summary of a partial build that wrote its packs goes to standard output")
        #expect(!result.error.contains(testAPIKey) && !result.output.contains(testAPIKey))
    }

    @Test func jsonLogsParseLineByLineWithEveryAttemptField() async throws {
        let server = try faultyServer()
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let result = try await run(
            productPath("gifpack"), arguments(manifest, workspace, ["--log-format", "json", "--verbose"]),
            environment: environment())
        #expect(result.status == 3, "\(result.error)")
        var events: [String: Int] = [:]
        var attempts: [[String: Any]] = []
        for line in result.error.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            for key in ["timestamp", "level", "label", "message", "event"] {
                #expect(object[key] != nil, "\(key) missing in \(line)")
            }
            let event = object["event"] as? String ?? "?"
            events[event, default: 0] += 1
            if event == "attempt" { attempts.append(object) }
        }
        #expect(result.error.hasSuffix("\n"))
        #expect(attempts.count == 24 + 1, "every attempt is logged: 24 GIFs, one retried")
        for attempt in attempts {
            for key in ["exercise_id", "url", "attempt", "duration_ms", "outcome"] {
                #expect(attempt[key] != nil, "\(key) missing in \(attempt)")
            }
            #expect(attempt["attempt"] is NSNumber && attempt["duration_ms"] is NSNumber, "numbers stay numbers")
            #expect((attempt["url"] as? String)?.hasPrefix(server.rapidAPIBaseURL) == true)
        }
        #expect(attempts.contains { $0["outcome"] as? String == "retry" && $0["status"] as? Int == 503 && $0["reason"] as? String == "http-503" })
        #expect(attempts.contains { $0["outcome"] as? String == "failed" && $0["status"] as? Int == 404 })
        #expect(attempts.filter { $0["outcome"] as? String == "downloaded" }.count == 23)
        #expect(events["finished"] == 1)
        #expect(events["summary"] == 1 && result.output.isEmpty, "with JSON logs the summary is a JSON line on standard error: \(result.output)")
        #expect(events["stage"] == BuildStage.allCases.count)
        #expect(!result.error.contains(testAPIKey))
    }

    @Test func metricsAndSummaryFilesAreWrittenOnSuccessAndOnFailure() async throws {
        let server = try faultyServer()
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let metricsPath = workspace.file("textfile/gifpack.prom")
        let summaryPath = workspace.file("step-summary.md")
        try "## earlier step\n".write(toFile: summaryPath, atomically: true, encoding: .utf8)
        let files = ["--quiet", "--metrics-file", metricsPath, "--summary-file", summaryPath]

        let started = Date().timeIntervalSince1970.rounded(.down)
        let built = try await run(productPath("gifpack"), arguments(manifest, workspace, files), environment: environment())
        let ended = Date().timeIntervalSince1970.rounded(.up)
        #expect(built.status == 3, "\(built.error)")
        #expect(built.output.split(separator: "\n").count == 1 && built.error.isEmpty, "--quiet: only the last line")
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        let samples = try PrometheusSamples(String(contentsOfFile: metricsPath, encoding: .utf8))
        #expect(samples["gifpack_exit_status"] == 3)
        #expect(samples["gifpack_gifs{outcome=\"downloaded\"}"] == Double(report.gifs.downloaded))
        #expect(samples["gifpack_gifs{outcome=\"missing\"}"] == 1)
        #expect(samples["gifpack_retries"] == 1)
        #expect(samples["gifpack_requests"] == Double(report.http.requests))
        let pack = try #require(report.packs.first)
        #expect(samples["gifpack_pack_bytes{pack=\"all\"}"] == Double(pack.bytes))
        let lastSuccess = try #require(samples["gifpack_last_success_timestamp_seconds"])
        #expect((started...ended).contains(lastSuccess), "the last success is the time of this run, however long it took")

        // A bad manifest: exit 2, metrics still written, last success carried forward, summary appended.
        let broken = try workspace.write("version: 1\nsource: 12\n", to: "broken.yaml")
        let refused = try await run(productPath("gifpack"), arguments(broken, workspace, files), environment: environment())
        #expect(refused.status == 2, "\(refused.error)")
        let after = try PrometheusSamples(String(contentsOfFile: metricsPath, encoding: .utf8))
        #expect(after["gifpack_exit_status"] == 2)
        #expect(after["gifpack_last_success_timestamp_seconds"] == lastSuccess)

        let summary = try String(contentsOfFile: summaryPath, encoding: .utf8)
        #expect(summary.hasPrefix("## earlier step\n"), "appended, never truncated")
        #expect(summary.components(separatedBy: "gifpack build").count - 1 == 2, "one section per run")
        #expect(summary.contains("| all | 1 | new version | 24 |"))
        #expect(summary.contains("| missing | 1 (http-404: 1) |"))
        #expect(summary.contains("(exit 2)"))
        for path in [metricsPath, summaryPath] {
            #expect(!(try String(contentsOfFile: path, encoding: .utf8)).contains(testAPIKey))
        }
    }

    @Test func everySubcommandHasHelpWithExamplesAndCompletionsGenerate() async throws {
        let build = try await run(productPath("gifpack"), ["build", "--help"])
        #expect(build.status == 0)
        for text in ["Examples:", "--metrics-file", "--summary-file", "--log-format", "--progress", "--verbose", "--quiet", "Exit status:"] {
            #expect(build.output.contains(text), "build --help lacks \(text)")
        }
        let prune = try await run(productPath("gifpack"), ["prune", "--help"])
        #expect(prune.status == 0 && prune.output.contains("Example"))
        for shell in ["bash", "zsh", "fish"] {
            let script = try await run(productPath("gifpack"), ["--generate-completion-script", shell])
            #expect(script.status == 0, "\(shell): \(script.error)")
            #expect(script.output.contains("metrics-file") && script.output.contains("prune"), "\(shell) completion lacks build options")
        }
        let conflicting = try await run(productPath("gifpack"), ["build", "--manifest", "m.yaml", "--quiet", "--verbose"])
        #expect(conflicting.status != 0 && conflicting.error.contains("--quiet and --verbose"))
    }
}

import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
import GifPackFormat
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// What a user meets at the command line: exit statuses, error messages, cron and CI defaults.
@Suite("User-facing: exit statuses, messages, cron and CI defaults", .timeLimit(.minutes(5)))
struct UserFacingTests {
    private func environment(key: String? = testAPIKey) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = key
        if key == nil { environment.removeValue(forKey: "GIFPACK_TEST_KEY") }
        environment["SOURCE_DATE_EPOCH"] = "1700000000"
        return environment
    }

    /// A manifest whose server is never reached (nothing listens on port 9).
    private let unreachable = """
        version: 1
        source:
          kind: exercisedb-rapidapi
          base_url: http://127.0.0.1:9
          api_key_env: GIFPACK_TEST_KEY
        """

    @Test func everyCommandLineMistakeExitsTwoAndWritesTheMetricsFile() async throws {
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(unreachable, to: "manifest.yaml")
        let out = workspace.file("dist")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let mistakes: [(String, [String])] = [
            ("missing --manifest", ["build", "--out", out]),
            ("unknown option", ["build", "-m", manifest, "--out", out, "--frobnicate"]),
            ("bad --progress value", ["build", "-m", manifest, "--out", out, "--progress", "sideways"]),
            ("-q -v together", ["build", "-m", manifest, "--out", out, "-q", "-v"])
        ]
        for (index, (name, arguments)) in mistakes.enumerated() {
            let metrics = workspace.file("metrics-\(index).prom")
            let summary = workspace.file("summary-\(index).md")
            FileSystem.remove("\(out)/report.json")
            let result = try await run(
                productPath("gifpack"), arguments + ["--metrics-file", metrics, "--summary-file=\(summary)"],
                environment: environment())
            #expect(result.status == 2, "\(name): exit \(result.status), \(result.error)")
            #expect(result.output.isEmpty, "\(name): \(result.output)")
            let samples = try PrometheusSamples(String(contentsOfFile: metrics, encoding: .utf8))
            #expect(samples["gifpack_exit_status"] == 2, "\(name)")
            #expect(try String(contentsOfFile: summary, encoding: .utf8).contains("(exit 2)"), "\(name)")
            let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: "\(out)/report.json")))
            #expect(report.exitStatus == .usage, "\(name)")
        }
        // Other commands' mistakes exit 2 as well.
        let install = try await run(productPath("gifpack"), ["install", "--index", "x.json"])
        #expect(install.status == 2, "\(install.error)")
        #expect(install.error.contains("--cache"))
        // Help is not a mistake.
        #expect(try await run(productPath("gifpack"), ["build", "--help"]).status == 0)
    }

    @Test func aMisspelledSubcommandSuggestsTheNearestOne() async throws {
        let result = try await run(productPath("gifpack"), ["instal", "--index", "x.json"])
        #expect(result.status == 2)
        #expect(result.error.contains("unknown command 'instal' — did you mean 'install'?"), "\(result.error)")
        let far = try await run(productPath("gifpack"), ["zzzzzzzz"])
        #expect(far.status == 2)
        #expect(far.error.contains("unknown command 'zzzzzzzz'") && !far.error.contains("did you mean"), "\(far.error)")
        #expect(far.error.contains("build, prune"))
    }

    @Test func outNamingAFileReportsTheRealErrnoWithoutAZeroSummary() async throws {
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(unreachable, to: "manifest.yaml")
        let file = try workspace.write("not a directory\n", to: "occupied")
        let result = try await run(
            productPath("gifpack"), ["build", "-m", manifest, "--out", file, "--cache", workspace.file("cache")],
            environment: environment())
        #expect(result.status == 2, "a command-line mistake")
        #expect(result.error.contains("--out: \(file) exists and is not a directory"), "\(result.error)")
        #expect(!result.error.contains("Permission denied"))
        for text in ["catalog: 0", "gifs: 0 wanted", "requests: 0"] {
            #expect(!result.error.contains(text) && !result.output.contains(text), "a summary of zeros before any work: \(text)")
        }

        // Below the file: the real errno, with the path.
        let below = try await run(
            productPath("gifpack"), ["build", "-m", manifest, "--out", "\(file)/dist", "--cache", workspace.file("cache")],
            environment: environment())
        #expect(below.status == 2)
        #expect(below.error.contains("--out: cannot use \(file)/dist: Not a directory"), "\(below.error)")
    }

    @Test(.computes) func createDirectoryReportsTheErrnoOfTheFailingCall() throws {
        let workspace = try TemporaryDirectory()
        let file = try workspace.write("x", to: "file")
        #expect(throws: FileSystemError.io(operation: "mkdir", path: file, errno: EEXIST)) { try FileSystem.createDirectory(file) }
        #expect(throws: FileSystemError.io(operation: "mkdir", path: "\(file)/a/b", errno: ENOTDIR)) {
            try FileSystem.createDirectory("\(file)/a/b")
        }
        try FileSystem.createDirectory(workspace.file("x/y/z/"))
        try FileSystem.createDirectory(workspace.file("x/y/z"))
        var info = stat()
        #expect(stat(workspace.file("x/y/z"), &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR)
    }

    @Test func aManifestThatIsADirectoryIsNamedAsOne() async throws {
        let workspace = try TemporaryDirectory()
        let result = try await run(
            productPath("gifpack"), ["build", "-m", workspace.path, "--out", workspace.file("dist")],
            environment: environment())
        #expect(result.status == 2)
        #expect(result.error.contains("cannot read manifest \(workspace.path): it is a directory"), "\(result.error)")
        #expect(!result.error.contains("NSCocoaErrorDomain"))
        let missing = try await run(productPath("gifpack"), ["build", "-m", workspace.file("nope.yaml")], environment: environment())
        #expect(missing.status == 2)
        #expect(missing.error.contains("No such file or directory"), "\(missing.error)")
    }

    @Test func quietPrintsNothingOnSuccessAndAPartialRunSummarisesOnStandardOutput() async throws {
        let server = try startFixture(count: 12) { $0.latencyMilliseconds = 1 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let quiet = try await run(
            productPath("gifpack"),
            [
                "build", "-m", manifest, "--out", workspace.file("dist"),
                "--cache", workspace.file("cache"), "--quiet"
            ], environment: environment())
        #expect(quiet.status == 0, "\(quiet.error)")
        #expect(quiet.output.isEmpty && quiet.error.isEmpty, "--quiet printed: \(quiet.output)\(quiet.error)")

        let ids = server.catalog.exercises.map(\.id).sorted()
        server.setDefaultFault(.status(404), forExercise: ids[0])
        let partial = try await run(
            productPath("gifpack"),
            [
                "build", "-m", manifest, "--out", workspace.file("dist2"),
                "--cache", workspace.file("cache2"), "--progress", "off", "--log-level", "error"
            ],
            environment: environment())
        #expect(partial.status == 3, "\(partial.error)")
        #expect(partial.output.contains("gifs: 12 wanted"), "the summary of a run that wrote its packs goes to standard output")
        #expect(partial.output.contains("partial: ") && partial.output.contains("(exit 3)"), "\(partial.output)")
        #expect(!partial.output.contains("error:") && !partial.error.contains("error:"), "\(partial.output)\(partial.error)")
    }

    @Test func relativeManifestPathsResolveAgainstTheManifestFolder() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: workspace.file("conf"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: workspace.file("elsewhere"), withIntermediateDirectories: true)
        let manifest = try workspace.write(
            rapidAPIManifest(server: server) + """

                output:
                  directory: ../output
                cache:
                  directory: state
                """, to: "conf/gifpack.yaml")
        // Run from another folder with a relative manifest path, as cron does from $HOME.
        let result = try await run(
            productPath("gifpack"), ["build", "-m", "../conf/gifpack.yaml", "-q"],
            environment: environment(), currentDirectory: workspace.file("elsewhere"))
        #expect(result.status == 0, "\(result.error)")
        #expect(FileSystem.exists(workspace.file("output/index.json")))
        #expect(FileSystem.exists(workspace.file("conf/state/state.sqlite")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.file("elsewhere")).isEmpty)

        // The loader resolves defaults too; absolute paths and --out stay as given.
        let loaded = try ManifestLoader().load(path: manifest, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        #expect(loaded.output.directory == workspace.file("conf/../output"))
        #expect(loaded.cache.directory == workspace.file("conf/state"))
        let bare = try workspace.write(unreachable, to: "conf/bare.yaml")
        let defaults = try ManifestLoader().load(path: bare, environment: ["GIFPACK_TEST_KEY": "k"])
        #expect(defaults.output.directory == workspace.file("conf/dist"))
        #expect(defaults.cache.directory == workspace.file("conf/.gifpack-cache"))
    }

    @Test func pruneNeedsNoAPIKey() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let dirs = ["--out", workspace.file("dist"), "--cache", workspace.file("cache")]
        let built = try await run(productPath("gifpack"), ["build", "-m", manifest, "-q"] + dirs, environment: environment())
        #expect(built.status == 0, "\(built.error)")
        let pruned = try await run(productPath("gifpack"), ["prune", "-m", manifest] + dirs, environment: environment(key: nil))
        #expect(pruned.status == 0, "\(pruned.error)")
        #expect(pruned.output.contains("deleted 0 pack file(s)"), "\(pruned.output)")
        // A build still needs it.
        let refused = try await run(productPath("gifpack"), ["build", "-m", manifest] + dirs, environment: environment(key: nil))
        #expect(refused.status == 2)
        #expect(refused.error.contains("GIFPACK_TEST_KEY"))
    }

    /// Prune never rewrites index.json, so it never signs: the manifest's signing key is not read.
    @Test func pruneReadsNoSigningKey() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: workspace)
        let manifest = try workspace.write(rapidAPIManifest(server: server) + "\n" + key.block(), to: "manifest.yaml")
        let dirs = ["--out", workspace.file("dist"), "--cache", workspace.file("cache")]
        let built = try await run(productPath("gifpack"), ["build", "-m", manifest, "-q"] + dirs, environment: environment())
        #expect(built.status == 0, "\(built.error)")
        let index = try fileBytes(workspace.file("dist/index.json"))
        let signature = try fileBytes(workspace.file("dist/index.json.minisig"))

        // The key file is gone (a pruning host without it): prune works and leaves the signed index alone.
        try FileManager.default.removeItem(atPath: key.secretPath)
        let pruned = try await run(productPath("gifpack"), ["prune", "-m", manifest] + dirs, environment: environment(key: nil))
        #expect(pruned.status == 0, "\(pruned.error)")
        #expect(pruned.output.contains("deleted 0 pack file(s)"), "\(pruned.output)")
        #expect(try fileBytes(workspace.file("dist/index.json")) == index)
        #expect(try fileBytes(workspace.file("dist/index.json.minisig")) == signature)
        // The same with the key in an unset variable.
        let fromEnvironment = try workspace.write(
            rapidAPIManifest(server: server) + "\nsigning:\n  secret_key_env: GIFPACK_TEST_SIGNING_KEY\n",
            to: "manifest-env.yaml")
        var unset = environment(key: nil)
        unset.removeValue(forKey: "GIFPACK_TEST_SIGNING_KEY")
        let prunedEnv = try await run(productPath("gifpack"), ["prune", "-m", fromEnvironment] + dirs, environment: unset)
        #expect(prunedEnv.status == 0, "\(prunedEnv.error)")
        // A bad signing block is still a usage error, and a build still needs the key.
        let badBlock = try workspace.write(rapidAPIManifest(server: server) + "\nsigning:\n  secret_key_env: not a name\n", to: "manifest-bad.yaml")
        let refusedPrune = try await run(productPath("gifpack"), ["prune", "-m", badBlock] + dirs, environment: unset)
        #expect(refusedPrune.status == 2 && refusedPrune.error.contains("signing.secret_key_env"), "\(refusedPrune.error)")
        let refusedBuild = try await run(productPath("gifpack"), ["build", "-m", manifest] + dirs, environment: environment())
        #expect(refusedBuild.status == 2 && refusedBuild.error.contains("signing.secret_key_file"), "\(refusedBuild.error)")
    }

    @Test func aRefusedRunWritesReportJSONInAnExistingOutputDirectory() async throws {
        let workspace = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: workspace.file("conf/dist"), withIntermediateDirectories: true)
        let manifest = try workspace.write(unreachable, to: "conf/manifest.yaml")
        // The key is missing: the manifest still names its output directory, where the report goes.
        let result = try await run(productPath("gifpack"), ["build", "-m", manifest], environment: environment(key: nil))
        #expect(result.status == 2)
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("conf/dist/report.json"))))
        #expect(report.exitStatus == .usage && report.exitMeaning == ExitStatus.usage.summary)
        #expect(report.message.contains("GIFPACK_TEST_KEY"), "\(report.message)")
        #expect(report.startedAt != nil && report.finishedAt != nil)
        // A refused run creates nothing: no output directory, no report.
        let fresh = try await run(productPath("gifpack"), ["build", "-m", manifest, "--out", workspace.file("new")], environment: environment(key: nil))
        #expect(fresh.status == 2)
        #expect(!FileSystem.exists(workspace.file("new")))
    }

    @Test func requestsAnsweredWithAuthErrorsAreCounted() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try ManifestLoader().parse(rapidAPIManifest(server: server), environment: ["GIFPACK_TEST_KEY": "wrong-key"])
        let options = BuildOptions(outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"))
        let report = await BuildPipeline(manifest: manifest, options: options).run()
        #expect(report.exitStatus == .authRejected)
        #expect(report.http.requests == 1, "the catalog page answered 401 was sent: \(report.http)")
        let written = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(written.http.requests == 1)
    }

    @Test func theIndexCarriesTheBaseURLOnlyWhenAsked() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .success)
        let text = try String(contentsOfFile: workspace.file("dist/index.json"), encoding: .utf8)
        #expect(!text.contains("127.0.0.1") && !text.contains("baseURL"), "the build's address leaks: \(text.prefix(300))")
        #expect(try readIndex(workspace.file("dist/index.json")).source.baseURL == nil)

        let asked = try await runBuild(
            manifest: rapidAPIManifest(server: server) + "\noutput:\n  publish_base_url: true\n",
            workspace: workspace, out: "dist2", cache: "cache2")
        #expect(asked.exitStatus == .success)
        #expect(try readIndex(workspace.file("dist2/index.json")).source.baseURL == server.rapidAPIBaseURL)
        #expect(throws: ManifestError.wrongType(path: "output.publish_base_url", expected: "true or false")) {
            try ManifestLoader().parse(unreachable + "\noutput:\n  publish_base_url: yes-please\n", environment: ["GIFPACK_TEST_KEY": "k"])
        }
    }
}

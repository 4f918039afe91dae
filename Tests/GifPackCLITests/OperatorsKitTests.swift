import ExerciseDBFixture
import Foundation
import Glibc
import Testing
@testable import GifPack
import GifPackClient
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// The operator's kit as written: every shell example of `docs/running-unattended.md` run exactly as
/// it stands (see ``UnattendedDoc`` and ``OperatorMachine``), `--quiet` on every command, the JSON
/// stream, the check of what clients can read (`--public-url`), and `--out` mistakes.
@Suite("Operator's kit: documented cron, systemd, Actions and nginx recipes; quiet; public reads", .tags(.nginx, .s3), .serialized, .timeLimit(.minutes(5)))
struct OperatorsKitTests {
    /// A manifest for the fixture server reading its key from `EXERCISEDB_API_KEY`, writing into
    /// `root/dist` and `root/cache`.
    static func manifest(server: FixtureServer, root: String, extra: String = "") -> String {
        rapidAPIManifest(server: server).replacingOccurrences(of: "GIFPACK_TEST_KEY", with: "EXERCISEDB_API_KEY") + """

            output:
              directory: \(root)/dist
            \(extra)
            cache:
              directory: \(root)/cache
            """
    }

    // MARK: cron

    @Test func theCronLineBuildsAndPublishesSilentlyAndFailsLoudly() async throws {
        let crontab = try UnattendedDoc.block("cron")
        let (schedule, command) = try UnattendedDoc.cronCommand(crontab)
        #expect(schedule == ["17", "3", "*", "*", "*"])
        #expect(!command.contains("%"), "cron turns % into a newline")
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let machine = try OperatorMachine()
        let nginx = try await DocumentedNginx.start(location: try UnattendedDoc.block("nginx"), www: machine.www)
        defer { nginx.stop() }
        let root = machine.workspace.path
        _ = try machine.workspace.write(Self.manifest(server: server, root: root), to: "etc-upper/gifpack/exercisedb.yaml")
        _ = try machine.workspace.write(
            "EXERCISEDB_API_KEY=\(testAPIKey)\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/gifpack/\n",
            to: "etc-upper/gifpack/env")

        // A first run builds and publishes: not a byte of output.
        let first = try await machine.cron(command)
        #expect(first.status == 0 && first.output.isEmpty && first.error.isEmpty, "exit \(first.status): \(first.output)\(first.error)")
        #expect(try fileBytes("\(machine.www)/gifpack/index.json") == fileBytes("\(root)/dist/index.json"))
        // Nothing new: silent again, and the target still serves the same index.
        let again = try await machine.cron(command)
        #expect(again.status == 0 && again.output.isEmpty && again.error.isEmpty, "exit \(again.status): \(again.output)\(again.error)")
        let install = try await gifpackCLI([
            "install", "--index", "\(nginx.baseURL)/gifpack/index.json",
            "--cache", machine.workspace.file("app-cache"), "--quiet"
        ])
        #expect(install.status == 0 && install.output.isEmpty && install.error.isEmpty, "\(install.error)")

        // A publish that failed last time is finished by the next run, though the build finds nothing new.
        try FileManager.default.removeItem(atPath: "\(machine.www)/gifpack")
        let republished = try await machine.cron(command)
        #expect(republished.status == 0 && republished.output.isEmpty && republished.error.isEmpty, "\(republished.error)")
        #expect(try fileBytes("\(machine.www)/gifpack/index.json") == fileBytes("\(root)/dist/index.json"))

        // A wrong key: one line, exit 4, and the key never shown.
        _ = try machine.workspace.write(
            "EXERCISEDB_API_KEY=wrong-key-123\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/gifpack/\n",
            to: "etc-upper/gifpack/env")
        let refused = try await machine.cron(command)
        #expect(refused.status == 4, "\(refused.error)")
        #expect(refused.output.isEmpty && refused.error.split(separator: "\n").count == 1, "one line: \(refused.output)\(refused.error)")
        #expect(!refused.error.contains("wrong-key-123"))

        // The public URL answers 404 (a wrong address): the run fails, loudly, naming why.
        _ = try machine.workspace.write(
            "EXERCISEDB_API_KEY=\(testAPIKey)\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/elsewhere/\n",
            to: "etc-upper/gifpack/env")
        let unreadable = try await machine.cron(command)
        #expect(unreadable.status == 1, "\(unreadable.error)")
        #expect(unreadable.output.isEmpty && unreadable.error.split(separator: "\n").count == 1, "\(unreadable.error)")
        #expect(unreadable.error.contains("clients cannot read \(nginx.baseURL)/elsewhere/index.json: HTTP 404"), "\(unreadable.error)")
        let lost = try await gifpackCLI([
            "install", "--index", "\(nginx.baseURL)/elsewhere/index.json", "--cache",
            machine.workspace.file("lost-cache")
        ])
        #expect(lost.status == 1 && lost.error.contains("HTTP status 404 — nothing is served there"), "install names the cause: \(lost.error)")

        // The API down: one line on standard error, a failing status.
        server.stop()
        _ = try machine.workspace.write(
            "EXERCISEDB_API_KEY=\(testAPIKey)\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/gifpack/\n",
            to: "etc-upper/gifpack/env")
        let down = try await machine.cron(command)
        #expect(down.status == 1, "\(down.error)")
        #expect(down.output.isEmpty && down.error.split(separator: "\n").count == 1 && down.error.hasPrefix("error: "), "\(down.error)")
    }

    @Test func theCronLinesExitThreeIsOneLineAndStillPublishes() async throws {
        let (_, command) = try UnattendedDoc.cronCommand(try UnattendedDoc.block("cron"))
        let server = try startFixture(count: 6)
        defer { server.stop() }
        server.setDefaultFault(.status(404), forExercise: server.catalog.exercises.map(\.id).sorted()[0])
        let machine = try OperatorMachine()
        let nginx = try await DocumentedNginx.start(location: try UnattendedDoc.block("nginx"), www: machine.www)
        defer { nginx.stop() }
        let root = machine.workspace.path
        _ = try machine.workspace.write(Self.manifest(server: server, root: root), to: "etc-upper/gifpack/exercisedb.yaml")
        _ = try machine.workspace.write(
            "EXERCISEDB_API_KEY=\(testAPIKey)\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/gifpack/\n",
            to: "etc-upper/gifpack/env")
        let partial = try await machine.cron(command)
        #expect(partial.status == 3, "\(partial.error)")
        #expect(
            partial.error.isEmpty && partial.output.split(separator: "\n").count == 1 && partial.output.hasPrefix("partial: "),
            "exit 3 is one line, as documented: \(partial.output)\(partial.error)")
        #expect(try fileBytes("\(machine.www)/gifpack/index.json") == fileBytes("\(root)/dist/index.json"), "exit 3 publishes")
    }

    // MARK: systemd

    @Test func theSystemdUnitPublishesAndItsJournalIsOneJSONStream() async throws {
        let service = try UnattendedDoc.block("systemd-service")
        let timer = try UnattendedDoc.block("systemd-timer")
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let machine = try OperatorMachine()
        let nginx = try await DocumentedNginx.start(location: try UnattendedDoc.block("nginx"), www: machine.www)
        defer { nginx.stop() }
        let root = machine.workspace.path
        _ = try machine.workspace.write(Self.manifest(server: server, root: root), to: "etc-upper/gifpack/exercisedb.yaml")
        let envText = "EXERCISEDB_API_KEY=\(testAPIKey)\nGIFPACK_PUBLIC_URL=\(nginx.baseURL)/gifpack/\n"
        _ = try machine.workspace.write(envText, to: "etc-upper/gifpack/env")

        // systemd's own reading of the units: no unknown key, no bad value, the binary where it says.
        _ = try machine.workspace.write(service, to: "gifpack.service")
        _ = try machine.workspace.write(timer, to: "gifpack.timer")
        let verify = try await machine.run(
            [
                "/usr/bin/systemd-analyze", "verify", machine.workspace.file("gifpack.service"),
                machine.workspace.file("gifpack.timer")
            ], environment: ["PATH": "/usr/bin:/bin"])
        #expect(verify.status == 0 && verify.error.isEmpty, "systemd-analyze verify: \(verify.output)\(verify.error)")

        let keys = UnattendedDoc.unitKeys(service, section: "Service")
        #expect(keys["Type"] == "oneshot")
        #expect(keys["EnvironmentFile"] == "/etc/gifpack/env")
        let success = Set((keys["SuccessExitStatus"] ?? "").split(separator: " ").compactMap { Int32($0) } + [0])
        #expect(success == [0, 3])
        let environment = UnattendedDoc.environmentFile(envText)
        let argv = try UnattendedDoc.execWords(try #require(keys["ExecStart"]), environment: environment)
        #expect(argv.first == "/usr/local/bin/gifpack")
        #expect(argv.contains("--publish"), "the unit publishes")
        let journal = try #require(try UnattendedDoc.block("journal").components(separatedBy: " | ").last)

        // Run as systemd runs it: no shell, the EnvironmentFile's variables and a PATH.
        let first = try await machine.run(argv, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(success.contains(first.status), "exit \(first.status): \(first.error)")
        #expect(first.output.isEmpty, "nothing on standard output: \(first.output)")
        #expect(try fileBytes("\(machine.www)/gifpack/index.json") == fileBytes("\(root)/dist/index.json"))
        let records = try await Self.jqLines(first.error, filter: "-c .")
        #expect(records.count == first.error.split(separator: "\n").count, "every line is JSON")
        let shownFirst = try await Self.jqLines(first.error, filter: journal).compactMap(Self.object)
        let summary = try #require(shownFirst.first { $0["event"] as? String == "summary" })
        #expect(summary["exit_status"] as? Int == 0 && summary["published"] as? Bool == true, "\(summary)")
        #expect(first.error.contains("\"event\":\"publish\""), "the publish's lines are in the stream")
        #expect(!first.error.contains(testAPIKey))

        // A failure reaches the journal as JSON too, and fails the unit.
        server.stop()
        let failed = try await machine.run(argv, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        #expect(!success.contains(failed.status))
        #expect(failed.output.isEmpty)
        let shown = try await Self.jqLines(failed.error, filter: journal).compactMap(Self.object)
        #expect(
            shown.contains { $0["event"] as? String == "summary" && $0["level"] as? String == "error" && $0["exit_status"] as? Int == 1 },
            "\(failed.error)")
    }

    /// `text` (one JSON object a line, as `journalctl -o cat` prints it) through `jq` with the
    /// documented filter's words; jq's output lines.
    static func jqLines(_ text: String, filter: String) async throws -> [String] {
        let workspace = try TemporaryDirectory()
        let input = try workspace.write(text, to: "journal")
        let result = try await run("/bin/sh", ["-c", "cat \(OperatorMachine.quoted(input)) | \(filter.hasPrefix("jq") ? filter : "jq " + filter)"])
        guard result.status == 0 else { throw PublishTestFailure("jq failed (\(result.status)): \(result.error)") }
        return result.output.split(separator: "\n").map(String.init)
    }

    static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    // MARK: GitHub Actions and S3

    @Test func theActionsStepPublishesToABucketClientsCanReadAndAPrivateBucketIsNamed() async throws {
        let workflow = try UnattendedDoc.block("github-actions")
        let policy = try UnattendedDoc.block("s3-bucket-policy")
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        try await moto.createBucket("cdn-bucket")
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let machine = try OperatorMachine()
        let publicURL = "\(moto.endpoint)/cdn-bucket/gifpack/"
        let publishing = "  publish: s3://cdn-bucket/gifpack\n  publish_endpoint: \(moto.endpoint)"
        var environment = moto.credentials.filter { !$0.value.isEmpty }
        environment["EXERCISEDB_API_KEY"] = testAPIKey

        // The first release, from a machine with the output: the bucket is private, so clients
        // could not read it — the publish says so and fails.
        let seed = try TemporaryDirectory()
        let seedManifest = try seed.write(Self.manifest(server: server, root: seed.path, extra: publishing), to: "m.yaml")
        let refused = try await gifpackCLI(["build", "-m", seedManifest, "--quiet", "--public-url", publicURL], environment: environment)
        #expect(refused.status == 1, "\(refused.error)")
        #expect(refused.output.isEmpty && refused.error.split(separator: "\n").count == 1)
        #expect(refused.error.contains("HTTP 403 — the bucket or CDN refuses anonymous reads — see docs/running-unattended.md"), "\(refused.error)")
        let install = try await gifpackCLI(["install", "--index", publicURL + "index.json", "--cache", seed.file("app")])
        #expect(install.status == 1 && install.error.contains("refuses anonymous reads"), "install names the cause: \(install.error)")

        // The documented bucket policy, applied as written: the same publish now passes its check.
        let policyFile = try seed.write(policy, to: "policy.json")
        let put = try await run(
            "/usr/bin/curl",
            ["-sS", "-f", "-X", "PUT", "-T", policyFile] + moto.signing
                + ["\(moto.endpoint)/cdn-bucket?policy"])
        #expect(put.status == 0, "\(put.error)")
        let published = try await gifpackCLI(["build", "-m", seedManifest, "--quiet", "--public-url", publicURL], environment: environment)
        #expect(published.status == 0 && published.output.isEmpty && published.error.isEmpty, "\(published.error)")

        // The Actions step, as written, on a runner that starts empty.
        let step = try await Self.workflowStep(workflow, named: "Build and publish")
        let runner = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: runner.file("manifests"), withIntermediateDirectories: true)
        _ = try runner.write(
            rapidAPIManifest(server: server).replacingOccurrences(of: "GIFPACK_TEST_KEY", with: "EXERCISEDB_API_KEY")
                + "\noutput:\n\(publishing)\n", to: "manifests/exercisedb.yaml")
        let script = try runner.write(step.run, to: "step.sh")
        let secrets = [
            "EXERCISEDB_API_KEY": testAPIKey, "AWS_ACCESS_KEY_ID": moto.credentials["AWS_ACCESS_KEY_ID"] ?? "",
            "AWS_SECRET_ACCESS_KEY": moto.credentials["AWS_SECRET_ACCESS_KEY"] ?? ""
        ]
        var stepEnvironment: [String: String] = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": runner.path,
            "GITHUB_OUTPUT": runner.file("github-output"), "GITHUB_STEP_SUMMARY": runner.file("step-summary.md")
        ]
        for (name, value) in step.env {
            if let secret = value.range(of: #"^\$\{\{ secrets\.([A-Z_]+) \}\}$"#, options: .regularExpression).map({ _ in
                String(value.dropFirst("${{ secrets.".count).dropLast(" }}".count))
            }) {
                #expect(secrets.keys.contains(secret), "no test value for secret \(secret)")
                stepEnvironment[name] = secrets[secret] ?? ""
            } else {
                stepEnvironment[name] = value
            }
        }
        #expect(stepEnvironment["GIFPACK_PUBLIC_URL"]?.hasSuffix("/") == true)
        stepEnvironment["GIFPACK_PUBLIC_URL"] = publicURL
        let ran = try await machine.run(
            ["/bin/bash", "--noprofile", "--norc", "-eo", "pipefail", script], environment: stepEnvironment,
            currentDirectory: runner.path)
        #expect(ran.status == 0, "\(ran.output)\(ran.error)")
        let outputs = try String(contentsOfFile: runner.file("github-output"), encoding: .utf8)
        #expect(outputs.contains("exit-status=0"), "\(outputs)")
        #expect(FileSystem.exists(runner.file("dist/index.json")))
        #expect(try await moto.get("cdn-bucket/gifpack/index.json") == fileBytes(runner.file("dist/index.json")))
        // The release review, against the live index read back over HTTP (its packs downloaded).
        let review = try String(contentsOfFile: runner.file("review/index.html"), encoding: .utf8)
        #expect(review.contains("against \(publicURL)index.json"), "\(ran.error)")
        #expect(!review.contains("id=\"problems\""), "everything of both sides could be read")
    }

    /// A step of the documented workflow: its `run` script and its `env`, read with PyYAML (from
    /// the test venv) as GitHub reads YAML.
    static func workflowStep(_ workflow: String, named name: String) async throws -> (run: String, env: [String: String]) {
        let workspace = try TemporaryDirectory()
        let file = try workspace.write(workflow, to: "workflow.yaml")
        let python = "\(PublishServers.repositoryRoot)/.venv-test/bin/python"
        let result = try await run(python, ["-c", "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)", file])
        guard result.status == 0 else { throw PublishTestFailure("the workflow is not YAML: \(result.error)") }
        let document = try #require(Self.object(result.output))
        let jobs = try #require(document["jobs"] as? [String: Any])
        for case let job as [String: Any] in jobs.values {
            for case let step as [String: Any] in (job["steps"] as? [Any]) ?? [] where step["name"] as? String == name {
                let run = try #require(step["run"] as? String)
                let env = ((step["env"] as? [String: Any]) ?? [:]).mapValues { "\($0)" }
                return (run, env)
            }
        }
        throw PublishTestFailure("no step named \(name)")
    }

    // MARK: nginx

    @Test func theDocumentedNginxBlockServesTypesAndCacheHeadersWithoutGzipOnPacks() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let machine = try OperatorMachine()
        let nginx = try await DocumentedNginx.start(location: try UnattendedDoc.block("nginx"), www: machine.www)
        defer { nginx.stop() }
        let publish = try await gifpackCLI([
            "publish", "--from", built.workspace.file("dist"), "--to", "\(machine.www)/gifpack",
            "--public-url", "\(nginx.baseURL)/gifpack/", "--quiet"
        ])
        #expect(publish.status == 0 && publish.output.isEmpty && publish.error.isEmpty, "\(publish.error)")
        let index = try built.index()
        let pack = try await headWithGzip("\(nginx.baseURL)/gifpack/\(index.packs[0].file)")
        #expect(pack[":status"] == "200" && pack["content-type"] == "application/zstd", "\(pack)")
        #expect(pack["content-encoding"] == nil, "packs are never compressed: \(pack)")
        #expect(pack["cache-control"] == "public, max-age=31536000, immutable")
        let json = try await headWithGzip("\(nginx.baseURL)/gifpack/index.json")
        #expect(json["content-type"] == "application/json" && json["cache-control"] == "public, max-age=60", "\(json)")
        let compressed = try await headWithGzip("\(nginx.baseURL)/gifpack/index.json.zst")
        #expect(compressed[":status"] == "200" && compressed["content-type"] == "application/zstd", "\(compressed)")
        #expect(compressed["content-encoding"] == nil && compressed["cache-control"] == "public, max-age=60", "\(compressed)")
        // Range requests reach the pack's bytes untouched.
        let range = try await run(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Accept-Encoding: gzip",
                "-r", "0-99", "\(nginx.baseURL)/gifpack/\(index.packs[0].file)"
            ])
        #expect(range.output == "206")
        let install = try await gifpackCLI([
            "install", "--index", "\(nginx.baseURL)/gifpack/index.json",
            "--cache", machine.workspace.file("app-cache")
        ])
        #expect(install.status == 0, "\(install.error)")
    }

    // MARK: what clients see

    @Test func thePublicURLCheckNamesAStaleIndexAndASignatureMismatch() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let keygen = try await gifpackCLI([
            "keygen", "--secret-key", workspace.file("k.key"), "--public-key", workspace.file("k.pub"),
            "--quiet"
        ])
        #expect(keygen.status == 0 && keygen.output.isEmpty && keygen.error.isEmpty, "\(keygen.output)\(keygen.error)")
        let manifest = try workspace.write(
            Self.manifest(server: server, root: workspace.path)
                + "\nsigning:\n  secret_key_file: \(workspace.file("k.key"))\n", to: "m.yaml")
        let environment = ["EXERCISEDB_API_KEY": testAPIKey]
        let site = workspace.file("site")
        let first = try await gifpackCLI(["build", "-m", manifest, "--quiet", "--publish", site], environment: environment)
        #expect(first.status == 0 && first.output.isEmpty && first.error.isEmpty, "\(first.error)")
        let nginx = try await NginxServer.start(root: site)
        defer { nginx.stop() }
        // What clients read is what was published.
        let good = try await gifpackCLI(["publish", "--from", workspace.file("dist"), "--to", site, "--public-url", nginx.baseURL, "--quiet"])
        #expect(good.status == 0 && good.output.isEmpty && good.error.isEmpty, "\(good.error)")

        // A CDN that keeps an old copy: a public URL serving another folder that holds an older index.
        let stale = workspace.file("stale")
        try await copyTree(site, to: stale)
        let staleServer = try await NginxServer.start(root: stale)
        defer { staleServer.stop() }
        // An exercise renamed upstream: a new pack version and index.
        server.renameExercise(id: try #require(server.catalog.exercises.map(\.id).sorted().first), to: "renamed upstream")
        let second = try await gifpackCLI(
            ["build", "-m", manifest, "--quiet", "--publish", site, "--public-url", staleServer.baseURL + "/"],
            environment: environment)
        #expect(second.status == 1, "\(second.output)\(second.error)")
        #expect(second.error.contains("clients get another index.json from \(staleServer.baseURL)/index.json than the one just published"), "\(second.error)")
        #expect(second.error.contains("stale copy"))
        #expect(second.output.isEmpty && second.error.split(separator: "\n").count == 1, "one line: \(second.output)\(second.error)")

        // The signature served does not match the index served.
        try fileBytes("\(site)/index.json").withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: "\(stale)/index.json")) }
        let mismatch = try await gifpackCLI([
            "publish", "--from", workspace.file("dist"), "--to", site,
            "--public-url", staleServer.baseURL + "/index.json", "--quiet"
        ])
        #expect(mismatch.status == 1 && mismatch.error.contains("signature mismatch"), "\(mismatch.error)")
        #expect(!mismatch.error.contains("clients get another index.json"))
        #expect(mismatch.error.contains("clients cannot read \(staleServer.baseURL)/signatures/"), "the hash-named signature: \(mismatch.error)")
    }

    // MARK: quiet, JSON, --out

    @Test func quietPrintsNothingOnSuccessAndOneLineOnFailureForEveryCommand() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(Self.manifest(server: server, root: workspace.path), to: "m.yaml")
        let environment = ["EXERCISEDB_API_KEY": testAPIKey]
        let index = workspace.file("dist/index.json")
        func silent(_ arguments: [String], _ extra: [String: String] = [:]) async throws {
            let result = try await gifpackCLI(arguments, environment: extra)
            #expect(
                result.status == 0 && result.output.isEmpty && result.error.isEmpty,
                "gifpack \(arguments.joined(separator: " ")): exit \(result.status), printed \(result.output)\(result.error)")
        }
        func oneLine(_ arguments: [String], _ extra: [String: String] = [:]) async throws -> ProcessResult {
            let result = try await gifpackCLI(arguments, environment: extra)
            #expect(
                result.status != 0 && (result.output + result.error).split(separator: "\n").count == 1,
                "gifpack \(arguments.joined(separator: " ")): exit \(result.status), printed \(result.output)\(result.error)")
            return result
        }
        try await silent(["build", "-m", manifest, "--quiet", "--publish", workspace.file("www")], environment)
        try await silent(["publish", "--from", workspace.file("dist"), "--to", workspace.file("www2"), "--quiet"])
        try await silent(["install", "--index", index, "--cache", workspace.file("app"), "--quiet"])
        try await silent(["verify", workspace.file("dist"), "--quiet"])
        try await silent(["prune", "-m", manifest, "--quiet"], environment)
        try await silent(["diff", index, index, "--quiet"])
        try await silent(["keygen", "--secret-key", workspace.file("s.key"), "--public-key", workspace.file("s.pub"), "--quiet"])
        let id = try #require(server.catalog.exercises.map(\.id).sorted().first)
        let cat = try await gifpackCLI(["cat", index, id])
        #expect(cat.status == 0 && cat.error.isEmpty && !cat.output.isEmpty, "cat writes the GIF and nothing else")

        // Failures: one line each, the build's included (it used to log the failure, then print it).
        let refused = try await oneLine(["build", "-m", manifest, "--quiet"], ["EXERCISEDB_API_KEY": "wrong-key-456"])
        #expect(refused.status == 4)
        _ = try await oneLine(["publish", "--from", workspace.file("nope"), "--to", workspace.file("www3"), "--quiet"])
        _ = try await oneLine(["install", "--index", workspace.file("nope.json"), "--cache", workspace.file("app2"), "--quiet"])
        let pack = workspace.file("dist/\(try readIndex(index).packs[0].file)")
        var bytes = try fileBytes(pack)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: pack))
        _ = try await oneLine(["verify", workspace.file("dist"), "--quiet"])
    }

    @Test func jsonLogsPutTheSummaryOnStandardErrorAndNothingOnStandardOutput() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(Self.manifest(server: server, root: workspace.path), to: "m.yaml")
        let result = try await gifpackCLI(
            [
                "build", "-m", manifest, "--log-format", "json", "--progress", "plain",
                "--publish", workspace.file("www")
            ], environment: ["EXERCISEDB_API_KEY": testAPIKey])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.isEmpty, "standard output stays empty: \(result.output)")
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { Self.object($0) != nil }, "every line is one JSON object: \(result.error)")
        let summary = try #require(lines.compactMap(Self.object).first { $0["event"] as? String == "summary" }, "\(result.error)")
        #expect(summary["level"] as? String == "notice", "\(summary)")
        #expect(lines.compactMap(Self.object).contains { $0["event"] as? String == "publish" && $0["outcome"] as? String == "published" })
        #expect(summary["gifs_wanted"] as? Int == 6 && summary["exit_status"] as? Int == 0)
        #expect((summary["message"] as? String)?.hasPrefix("ok: ") == true)
    }

    // MARK: the report and the summary

    @Test func catalogRetriesAreCountedAndLoggedWithVerbose() async throws {
        let server = try startFixture(count: 6) { $0.listFault = .echoKeyInErrorBody(status: 503) }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(Self.manifest(server: server, root: workspace.path), to: "m.yaml")
        let result = try await gifpackCLI(
            ["build", "-m", manifest, "--verbose", "--log-format", "json", "--progress", "off"],
            environment: ["EXERCISEDB_API_KEY": testAPIKey])
        #expect(result.status == 1, "\(result.error)")
        let attempts = result.error.split(separator: "\n").compactMap { Self.object(String($0)) }
            .filter { $0["event"] as? String == "catalog-attempt" }
        #expect(attempts.map { $0["outcome"] as? String } == ["retry", "retry", "retry", "failed"], "\(attempts)")
        #expect(attempts.allSatisfy { ($0["url"] as? String)?.hasPrefix(server.rapidAPIBaseURL + "/exercises?") == true && $0["reason"] != nil })
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(report.http.retries == 3 && report.http.requests == 4, "\(report.http)")
        #expect(!result.error.contains(testAPIKey))
    }

    @Test func theSummaryNamesGIFsNotRecheckedAndWhenTheyWillBe() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(Self.manifest(server: server, root: workspace.path), to: "m.yaml")
        let environment = ["EXERCISEDB_API_KEY": testAPIKey]
        let first = try await gifpackCLI(["build", "-m", manifest, "--quiet"], environment: environment)
        #expect(first.status == 0, "\(first.error)")
        // Upstream changes a GIF; refresh_after (7 days by default) keeps the build from asking.
        let id = try #require(server.catalog.exercises.map(\.id).sorted().first)
        server.replaceGIF(id: id, with: try #require(server.catalog.gifBytes(id: server.catalog.exercises.map(\.id).sorted()[1], resolution: 180)))
        let again = try await gifpackCLI(["build", "-m", manifest, "--progress", "off", "--log-level", "error"], environment: environment)
        #expect(again.status == 0, "\(again.error)")
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(report.gifs.skippedFresh == 6)
        let from = try #require(report.gifs.freshRecheckFrom.flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) })
        let days = from.timeIntervalSinceNow / 86400
        #expect(days > 6.9 && days <= 7, "seven days from the first fetch: \(from)")
        #expect(
            again.output.contains("not re-checked: 6 GIF(s) fetched less than refresh_after ago — the first is asked for again from \(report.gifs.freshRecheckFrom ?? "?")"),
            "\(again.output)")
    }

    /// swift-argument-parser's man page generator drops every character outside ASCII: an example
    /// `EXERCISEDB_API_KEY=… gifpack build` became `EXERCISEDB_API_KEY= gifpack build`, an empty key.
    @Test func theManPageExamplesSayWhatTheHelpSays() async throws {
        let dump = try await run(productPath("gifpack"), ["--experimental-dump-help"])
        #expect(dump.status == 0)
        let offending = dump.output.unicodeScalars.filter { !$0.isASCII }
        #expect(offending.isEmpty, "help texts with characters the man page loses: \(String(String.UnicodeScalarView(offending)))")
        let man = try String(contentsOfFile: "\(PublishServers.repositoryRoot)/docs/man/gifpack.1", encoding: .utf8)
        #expect(man.contains("EXERCISEDB_API_KEY=\"$(cat /etc/gifpack/api-key)\" gifpack build -m manifests/exercisedb.yaml --out dist/"))
        #expect(man.range(of: #"[A-Z_]+= gifpack"#, options: .regularExpression) == nil, "an example with an empty variable")
        #expect(man.contains("--public-url https://www.example.com/gifpack/"), "make man after changing the examples")
    }

    @Test func outNamingAFileOrAFolderWithoutItsParentIsACommandLineMistake() async throws {
        let workspace = try TemporaryDirectory()
        let server = try startFixture(count: 1)
        defer { server.stop() }
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "m.yaml")
        let file = try workspace.write("not a directory\n", to: "occupied")
        let environment = ["GIFPACK_TEST_KEY": testAPIKey]
        let onFile = try await gifpackCLI(["build", "-m", manifest, "--out", file], environment: environment)
        #expect(onFile.status == 2 && onFile.error.contains("--out: \(file) exists and is not a directory"), "\(onFile.error)")
        let deep = workspace.file("nonexistent/deep/dir")
        let missing = try await gifpackCLI(["build", "-m", manifest, "--out", deep], environment: environment)
        #expect(missing.status == 2, "\(missing.error)")
        #expect(
            missing.error.contains("gifpack creates only the last component — create \(workspace.file("nonexistent/deep")) first"),
            "\(missing.error)")
        #expect(!FileSystem.exists(workspace.file("nonexistent")), "nothing was created")
        let cache = try await gifpackCLI(
            ["build", "-m", manifest, "--out", workspace.file("dist"), "--cache", "\(file)/cache"],
            environment: environment)
        #expect(cache.status == 2 && cache.error.contains("--cache: cannot use \(file)/cache: Not a directory"), "\(cache.error)")
        // The last component alone is made.
        let made = try await gifpackCLI(
            [
                "build", "-m", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"),
                "--quiet"
            ], environment: environment)
        #expect(made.status == 0, "\(made.error)")
    }
}

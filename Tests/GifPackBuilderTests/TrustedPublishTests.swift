import ExerciseDBFixture
import Foundation
import GifPackGIF
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Trusted delivery: immutable names, signed index", .timeLimit(.minutes(5)))
struct TrustedPublishTests {
    func changeAGIF(_ server: FixtureServer, seed: UInt64) throws {
        server.replaceGIF(
            id: server.catalog.exercises.map(\.id).sorted()[0],
            with: try GIFSynthesizer.animatedGIF(width: 24, height: 24, frames: 2, colors: 4, seed: seed))
    }

    /// Earlier pack files are all still there, byte for byte.
    func expectKept(_ earlier: [String: String], in dist: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let now = try packFiles(dist)
        for (name, hash) in earlier { #expect(now[name] == hash, "\(name) changed or vanished", sourceLocation: sourceLocation) }
    }

    @Test func aRebuildAfterLosingTheIndexAndThenTheCachePublishesNewNames() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0")
        let dist = workspace.file("dist")

        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let v1 = try #require(try readIndex("\(dist)/index.json").packs.first)
        #expect(v1.file == "packs/all-v1-\(v1.sha256.prefix(8)).tar.zst")

        // index.json lost: the state's history continues the versions.
        var earlier = try packFiles(dist)
        try FileManager.default.removeItem(atPath: "\(dist)/index.json")
        try changeAGIF(server, seed: 91)
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .success, "\(second.message)")
        let v2 = try #require(try readIndex("\(dist)/index.json").packs.first)
        #expect(v2.version == 2 && v2.file == "packs/all-v2-\(v2.sha256.prefix(8)).tar.zst")
        // The posters pack continues its versions the same way (format 1.2).
        let posters2 = try #require(v2.posters)
        #expect(posters2.version == 2 && posters2.file == "packs/all-posters-v2-\(posters2.sha256.prefix(8)).tar.zst")
        try expectKept(earlier, in: dist)

        // index.json and the cache lost: the pack files present continue the versions.
        earlier = try packFiles(dist)
        try FileManager.default.removeItem(atPath: "\(dist)/index.json")
        try FileManager.default.removeItem(atPath: workspace.file("cache"))
        try changeAGIF(server, seed: 92)
        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.exitStatus == .success, "\(third.message)")
        let v3 = try #require(try readIndex("\(dist)/index.json").packs.first)
        #expect(v3.version == 3 && !earlier.keys.contains(PathText.lastComponent(v3.file)))
        let posters3 = try #require(v3.posters)
        #expect(posters3.version == 3 && !earlier.keys.contains(PathText.lastComponent(posters3.file)))
        try expectKept(earlier, in: dist)
        #expect(try packFiles(dist).count == 6, "three versions of the pack and of its posters pack")
    }

    /// A published target whose `index.json.minisig` lags (it is another index's): the build reads the
    /// signature published under the index's hash and keeps the live bytes, as with a current one.
    @Test func aPreviousIndexWhoseSignatureBesideLagsIsKeptThroughItsHashNamedSignature() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let live = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: live)
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0") + "\n" + key.block()
        _ = try await runBuild(manifest: manifest, workspace: live, now: trustT0)
        let older = try fileBytes(live.file("dist/index.json.minisig"))
        try changeAGIF(server, seed: 95)
        _ = try await runBuild(manifest: manifest, workspace: live, now: trustT0)
        let liveBytes = try fileBytes(live.file("dist/index.json"))
        // As a publish leaves it: the hash-named signature, and a lagging index.json.minisig.
        let hashNamed = SignatureLocation.hashNamed(live.file("dist/index.json"), indexSHA256: sha256Hex(liveBytes))
        try FileManager.default.createDirectory(atPath: live.file("dist/signatures"), withIntermediateDirectories: true)
        try FileSystem.writeAtomically(try fileBytes(live.file("dist/index.json.minisig")), to: hashNamed)
        try FileSystem.writeAtomically(older, to: live.file("dist/index.json.minisig"))
        let cdn = try ClientStaticFileServer(root: live.file("dist"))
        defer { cdn.stop() }
        for previous in [cdn.baseURL + "/index.json", live.file("dist/index.json")] {
            let runner = try TemporaryDirectory()
            let report = try await runBuild(
                manifest: manifest, workspace: runner, now: trustT0.addingTimeInterval(3600),
                previousIndex: previous)
            #expect(report.exitStatus == .success, "\(report.message)")
            #expect(try fileBytes(runner.file("dist/index.json")) == liveBytes, "\(previous): the live index was signed again")
        }
    }

    @Test func aFreshRunnerWithOnlyThePreviousIndexContinuesVersionsAndSequence() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let live = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: live)
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0") + "\n" + key.block()
        _ = try await runBuild(manifest: manifest, workspace: live, now: trustT0)
        try changeAGIF(server, seed: 93)
        _ = try await runBuild(manifest: manifest, workspace: live, now: trustT0)
        let liveIndex = try readIndex(live.file("dist/index.json"))
        #expect(liveIndex.packs.first?.version == 2 && liveIndex.sequence == 2)
        let livePacks = try packFiles(live.file("dist"))
        let cdn = try ClientStaticFileServer(root: live.file("dist"))
        defer { cdn.stop() }
        let url = cdn.baseURL + "/index.json"

        // Nothing changed: a runner with nothing but the live index republishes the live index as it is.
        let same = try TemporaryDirectory()
        let unchanged = try await runBuild(manifest: manifest, workspace: same, now: trustT0.addingTimeInterval(3600), previousIndex: url)
        #expect(unchanged.exitStatus == .success, "\(unchanged.message)")
        #expect(unchanged.packs.map(\.outcome) == ["unchanged"])
        #expect(try fileBytes(same.file("dist/index.json")) == fileBytes(live.file("dist/index.json")))
        #expect(try fileBytes(same.file("dist/index.json.minisig")) == fileBytes(live.file("dist/index.json.minisig")))
        #expect(try packFiles(same.file("dist")).allSatisfy { livePacks[$0.key] == $0.value })

        // Changed inputs: version 3 under a new name, sequence 3; the live packs stay as they were.
        let fresh = try TemporaryDirectory()
        try changeAGIF(server, seed: 94)
        let report = try await runBuild(manifest: manifest, workspace: fresh, now: trustT0.addingTimeInterval(7200), previousIndex: url)
        #expect(report.exitStatus == .success, "\(report.message)")
        let index = try readIndex(fresh.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        #expect(pack.version == 3 && index.sequence == 3)
        #expect(livePacks[PathText.lastComponent(pack.file)] == nil)
        #expect(pack.posters?.version == 3 && livePacks[PathText.lastComponent(pack.posters?.file ?? "")] == nil)
        try expectKept(livePacks, in: live.file("dist"))
        #expect(cdn.requests.map(\.path).contains("/index.json.minisig"))

        // An unreachable previous index stops the build before the API is asked anything.
        server.resetStats()
        let missing = try await runBuild(manifest: manifest, workspace: fresh, previousIndex: cdn.baseURL + "/nothing.json")
        #expect(missing.exitStatus == .failed && missing.message.contains("/nothing.json"), "\(missing.message)")
        #expect(server.stats.totalRequests == 0)
    }

    @Test func aNameHeldByOtherBytesIsAHardErrorNamingTheFile() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        _ = try await runBuild(manifest: manifest, workspace: workspace)
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        let path = workspace.file("dist/\(pack.file)")
        let other = Array("not the published bytes".utf8)
        try Data(other).write(to: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: workspace.file("dist/index.json"))

        // The same content comes out with the same bytes, so it wants the same name: taken by other bytes.
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains(pack.file) && report.message.contains("different bytes"), "\(report.message)")
        #expect(try fileBytes(path) == other)
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    @Test func theOutputDirectoryHoldsNoLockFile() async throws {
        let server = try startFixture(count: 2)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let dist = workspace.file("dist")
        try FileManager.default.createDirectory(atPath: dist, withIntermediateDirectories: true)
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dist).sorted() == [".gifpack-output", "index.json", "index.json.zst", "packs", "report.json"],
            "the marker that says the directory is gifpack's, and nothing that locks it")
    }

    @Test func aSignedIndexVerifiesWithStockMinisignAndKeepsTheSecretOutOfEveryOutput() async throws {
        let server = try startFixture(count: 5)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        // The key pair made by the command line.
        let secretPath = workspace.file("gifpack.key")
        let publicPath = workspace.file("gifpack.pub")
        let keygen = try await run(productPath("gifpack"), ["keygen", "--secret-key", secretPath, "--public-key", publicPath])
        #expect(keygen.status == 0, "\(keygen.error)")
        let mode = try FileManager.default.attributesOfItem(atPath: secretPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let again = try await run(productPath("gifpack"), ["keygen", "--secret-key", secretPath, "--public-key", publicPath])
        #expect(again.status == 2 && again.error.contains("already exists"))
        let secretText = String(try String(contentsOfFile: secretPath, encoding: .utf8).split(separator: "\n")[1])

        let manifestPath = try workspace.write(
            rapidAPIManifest(server: server) + "\nsigning:\n  secret_key_file: \(secretPath)\n",
            to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["GIFPACK_NOW"] = "2026-11-23T09:00:00Z"
        let build = try await run(
            productPath("gifpack"),
            [
                "build", "-m", manifestPath, "--out", workspace.file("dist"),
                "--cache", workspace.file("cache"), "--log-format", "json"
            ], environment: environment)
        #expect(build.status == 0, "\(build.error)")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.sequence == 1 && index.expires == "2026-12-23T09:00:00Z")
        let verified = try await run("/usr/bin/minisign", ["-Vm", workspace.file("dist/index.json"), "-p", publicPath])
        #expect(verified.status == 0, "\(verified.output)\(verified.error)")
        let signature = try String(contentsOfFile: workspace.file("dist/index.json.minisig"), encoding: .utf8)
        #expect(try MinisignSignature(text: signature).isPrehashed, "a prehashed ED signature, minisign's default")
        let report = try String(contentsOfFile: workspace.file("dist/report.json"), encoding: .utf8)
        for text in [build.output, build.error, report, signature, try String(contentsOfFile: workspace.file("dist/index.json"), encoding: .utf8)] {
            #expect(!text.contains(secretText) && !text.contains(String(secretText.prefix(40))))
        }
        #expect(report.contains("\"sequence\" : 1"))
    }

    @Test func aDailyRunReSignsOnlyOnceLessThanHalfTheValidityRemains() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: workspace)
        let manifest = rapidAPIManifest(server: server) + "\n" + key.block(expiresAfter: "10d")
        let index = workspace.file("dist/index.json")
        let signature = workspace.file("dist/index.json.minisig")
        let day = 86400.0

        _ = try await runBuild(manifest: manifest, workspace: workspace, now: trustT0)
        let first = (try fileBytes(index), try fileBytes(signature))
        #expect(try readIndex(index).expires == IndexTimestamp.format(trustT0.addingTimeInterval(10 * day)))

        // Day 4: six days of ten left; nothing changes.
        let far = try await runBuild(manifest: manifest, workspace: workspace, now: trustT0.addingTimeInterval(4 * day))
        #expect(far.exitStatus == .success && far.index?.written == false, "\(far.message)")
        #expect(try fileBytes(index) == first.0 && fileBytes(signature) == first.1)

        // Day 6: four days left, under half: signed anew, same packs, next sequence, new expiry.
        let near = try await runBuild(manifest: manifest, workspace: workspace, now: trustT0.addingTimeInterval(6 * day))
        #expect(near.exitStatus == .success && near.index?.written == true, "\(near.message)")
        #expect(near.packs.map(\.outcome) == ["unchanged"])
        let resigned = try readIndex(index)
        #expect(resigned.sequence == 2 && resigned.expires == IndexTimestamp.format(trustT0.addingTimeInterval(16 * day)))
        #expect(resigned.packs == (try PackIndex.decode(from: Data(first.0))).packs)
        let verified = try await run("/usr/bin/minisign", ["-Vm", index, "-p", key.publicPath])
        #expect(verified.status == 0, "\(verified.error)")

        // Signing turned off: an unsigned index, and no stale signature beside it.
        _ = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace, now: trustT0.addingTimeInterval(7 * day))
        #expect(try readIndex(index).sequence == nil)
        #expect(!FileManager.default.fileExists(atPath: signature))
    }

    /// The bad `signing:` blocks and what the error must name.
    func badSigningCase(_ position: Int, key: TestSigningKey, workspace: TemporaryDirectory) throws -> (String, [String]) {
        switch position {
        case 0: ("signing:\n  secret_key_file: \(workspace.file("nope.key"))\n", ["signing.secret_key_file", "nope.key", "does not exist"])
        case 1:
            (
                "signing:\n  secret_key_file: \(try workspace.write("hello\n", to: "bad.key"))\n",
                ["signing.secret_key_file", "bad.key", "not a minisign secret key"]
            )
        case 2: ("signing:\n  secret_key_file: \(key.publicPath)\n", ["signing.secret_key_file", "gifpack.pub", "this is a public key"])
        case 3: ("signing:\n  secret_key_env: GIFPACK_UNSET_SECRET\n", ["signing.secret_key_env", "GIFPACK_UNSET_SECRET", "not set"])
        default: ("signing:\n  secret_key_file: \(key.secretPath)\n  expires_after: 0\n", ["signing.expires_after", "at least"])
        }
    }

    @Test(arguments: 0..<5)
    func badSigningInputExitsTwoNamingTheKeyBeforeAnyTraffic(_ position: Int) async throws {
        let server = try startFixture(count: 2)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: workspace)
        let (block, expected) = try badSigningCase(position, key: key, workspace: workspace)
        let manifestPath = try workspace.write(rapidAPIManifest(server: server) + "\n" + block, to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["GIFPACK_UNSET_SECRET"] = nil
        let result = try await run(
            productPath("gifpack"),
            [
                "build", "-m", manifestPath, "--out", workspace.file("dist"),
                "--cache", workspace.file("cache")
            ], environment: environment)
        #expect(result.status == 2)
        for text in expected { #expect(result.error.contains(text), "\(text) not in: \(result.error)") }
        #expect(!result.error.contains(key.secretText) && !result.output.contains(key.secretText))
        #expect(server.stats.totalRequests == 0)
    }

    @Test(.computes) func theSecretKeyCanComeFromAnEnvironmentVariable() throws {
        let workspace = try TemporaryDirectory()
        let key = try TestSigningKey(workspace: workspace)
        let text = "version: 1\nsource:\n  kind: exercisedb-v1\nsigning:\n  secret_key_env: GIFPACK_SECRET\n  expires_after: 2d\n"
        let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_SECRET": key.secret.fileText])
        let signing = try #require(manifest.signing)
        #expect(signing.secretKey.publicKey == key.secret.publicKey && signing.expiresAfter == .seconds(2 * 86400))
        #expect(signing.keySource == "environment variable GIFPACK_SECRET")
        #expect(!"\(manifest)".contains(key.secretText))
        // The base64 line alone works too.
        let bare = try ManifestLoader().parse(text, environment: ["GIFPACK_SECRET": key.secretText])
        #expect(bare.signing?.secretKey.publicKey == key.secret.publicKey)
    }
}

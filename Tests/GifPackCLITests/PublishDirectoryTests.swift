import Foundation
import Glibc
import Testing
@testable import GifPack
import GifPackClient
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Publish: directory target, command line, retention, racing", .tags(.nginx), .ownThread, .timeLimit(.minutes(5)))
struct PublishDirectoryTests {
    @Test func directoryPublishWritesEveryPackBeforeTheIndexAndSendsNothingTheSecondTime() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let first = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target])
        #expect(first.status == 0, "\(first.error)")
        let index = try readIndex("\(builds.v2)/index.json")
        #expect(index.packs.count == 2)
        // Each pack and its posters pack (format 1.2) are pack files like any other.
        let packFiles = index.packFiles.map(\.file)
        #expect(packFiles.count == 4 && packFiles.filter { $0.contains("-posters-v") }.count == 2)
        #expect(first.output.contains("4 pack(s) uploaded"), "\(first.output)")
        // Exactly the packs, the signatures and the index: no report, no lock, no temporary file.
        let hashNamed = SignatureLocation.key(forIndexSHA256: sha256Hex(try fileBytes("\(builds.v2)/index.json")))
        #expect(relativeFiles(target) == (packFiles + ["index.json", "index.json.minisig", "index.json.zst", hashNamed]).sorted())
        #expect(try fileBytes("\(target)/index.json") == fileBytes("\(builds.v2)/index.json"))
        #expect(try fileBytes("\(target)/index.json.minisig") == fileBytes("\(builds.v2)/index.json.minisig"))
        #expect(try fileBytes("\(target)/\(hashNamed)") == fileBytes("\(builds.v2)/index.json.minisig"))
        #expect(try directoryIndexProblems(target).isEmpty)
        // Order: each file is renamed into place (which sets its ctime); the hash-named signature
        // after the last pack, the index after it, index.json.minisig after the index.
        let lastPack = packFiles.map { changeTime("\(target)/\($0)") }.max() ?? 0
        #expect(lastPack > 0 && lastPack <= changeTime("\(target)/\(hashNamed)"))
        #expect(changeTime("\(target)/\(hashNamed)") <= changeTime("\(target)/index.json"))
        #expect(changeTime("\(target)/index.json") <= changeTime("\(target)/index.json.minisig"))
        // Lines in the order of the actions.
        let lines = first.output.split(separator: "\n").map(String.init)
        let indexLine = try #require(lines.firstIndex { $0.hasPrefix("write: index.json") && !$0.hasPrefix("write: index.json.minisig") })
        let signatureLine = try #require(lines.firstIndex { $0 == "write: \(hashNamed)" })
        let besideLine = try #require(lines.firstIndex { $0 == "write: index.json.minisig" })
        let uploadLines = lines.indices.filter { lines[$0].hasPrefix("upload: packs/") }
        #expect(uploadLines.count == 4 && uploadLines.allSatisfy { $0 < signatureLine })
        #expect(signatureLine < indexLine && indexLine < besideLine)

        let identities = try packFiles.map { try fileIdentity("\(target)/\($0)") }
        let second = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target])
        #expect(second.status == 0, "\(second.error)")
        #expect(
            second.output.contains("0 pack(s) uploaded") && second.output.contains("4 already there")
                && second.output.contains("index unchanged"), "\(second.output)")
        #expect(try packFiles.map { "\(try fileIdentity("\(target)/\($0)"))" } == identities.map { "\($0)" }, "no pack was written again")

        // --with-report adds report.json, after the index.
        let withReport = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target, "--with-report"])
        #expect(withReport.status == 0 && FileSystem.exists("\(target)/report.json"), "\(withReport.error)")
    }

    @Test(arguments: PublishCrashPoint.allCases)
    func aPublishKilledAnywhereLeavesACompleteIndexAndTheNextRunFinishes(_ point: PublishCrashPoint) async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let setup = try await gifpackCLI(["publish", "--from", builds.v1, "--to", target])
        #expect(setup.status == 0, "\(setup.error)")
        let oldIndex = try fileBytes("\(target)/index.json")

        let crashed = try await gifpackCLI(
            ["publish", "--from", builds.v2, "--to", target, "--keep-versions", "1"],
            environment: ["GIFPACK_CRASH_AT": point.rawValue])
        #expect(killedBySIGKILL(crashed), "expected SIGKILL at \(point.rawValue), got \(crashed.status): \(crashed.error)")
        #expect(try directoryIndexProblems(target).isEmpty, "killed at \(point.rawValue)")
        let served = try fileBytes("\(target)/index.json")
        let newIndex = try fileBytes("\(builds.v2)/index.json")
        #expect(served == oldIndex || served == newIndex)
        #expect((served == newIndex) == [.afterIndex, .afterCompressedIndex, .beforeRetention].contains(point), "the index goes live only after every pack")

        let finished = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target, "--keep-versions", "1"])
        #expect(finished.status == 0, "\(finished.error)")
        #expect(try fileBytes("\(target)/index.json") == newIndex)
        #expect(try directoryIndexProblems(target).isEmpty)
        // Leftover temporary files of the killed run are gone; the old index's pack stays (retention
        // keeps the newest keep_versions versions of each pack, "all" has only v1).
        #expect(!relativeFiles(target).contains { $0.contains(".tmp-") }, "\(relativeFiles(target))")
        let v1Pack = try #require(try readIndex("\(builds.v1)/index.json").packs.first?.file)
        #expect(FileSystem.exists("\(target)/\(v1Pack)"))
    }

    @Test func anOlderBuildCannotReplaceANewerLiveIndex() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        #expect(try await gifpackCLI(["publish", "--from", builds.v2, "--to", target]).status == 0)
        let live = try fileBytes("\(target)/index.json")
        let before = relativeFiles(target)

        // v1 is unsigned (no sequence) and v2 carries sequence 1: refused before anything is sent.
        let older = try await gifpackCLI(["publish", "--from", builds.v1, "--to", target])
        #expect(older.status == 7, "\(older.status) \(older.error)")
        #expect(older.error.contains("sequence 1") && older.error.contains("this build's is 0"), "\(older.error)")
        #expect(try fileBytes("\(target)/index.json") == live)
        #expect(relativeFiles(target) == before, "nothing was uploaded")

        // A rival build with the same sequence and other content is refused as well.
        let rival = builds.workspace.file("rival")
        try await copyTree(builds.v2, to: rival)
        var index = try readIndex("\(rival)/index.json")
        index.generator = "rival"
        try FileSystem.writeAtomically([UInt8](try index.encoded()), to: "\(rival)/index.json")
        let same = try await gifpackCLI(["publish", "--from", rival, "--to", target])
        #expect(same.status == 7, "\(same.error)")

        // A higher sequence goes through.
        index.sequence = 2
        try FileSystem.writeAtomically([UInt8](try index.encoded()), to: "\(rival)/index.json")
        let newer = try await gifpackCLI(["publish", "--from", rival, "--to", target])
        #expect(newer.status == 0, "\(newer.error)")
        #expect(try readIndex("\(target)/index.json").sequence == 2)
    }

    @Test func retentionDeletesOnlyOldVersionsAfterTheNewIndexIsLiveAndDryRunListsIt() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let v3 = try await builds.nextAllVersion("v3", seed: 301)
        let v4 = try await builds.nextAllVersion("v4", seed: 302)
        let packOf = { (dir: String) throws -> String in try #require(try readIndex("\(dir)/index.json").packs.first?.file) }
        let postersOf = { (dir: String) throws -> String in try #require(try readIndex("\(dir)/index.json").packs.first?.posters?.file) }
        let (p1, p3, p4) = (try packOf(builds.v1), try packOf(v3), try packOf(v4))
        #expect(p1.hasPrefix("packs/all-v1-") && p3.hasPrefix("packs/all-v2-") && p4.hasPrefix("packs/all-v3-"))
        // Each changed GIF changes its poster too: the posters pack has a version per pack version.
        let (s1, s3, s4) = (try postersOf(builds.v1), try postersOf(v3), try postersOf(v4))
        #expect(s1.hasPrefix("packs/all-posters-v1-") && s3.hasPrefix("packs/all-posters-v2-") && s4.hasPrefix("packs/all-posters-v3-"))
        for dir in [builds.v1, v3] {
            let result = try await gifpackCLI(["publish", "--from", dir, "--to", target, "--keep-versions", "2"])
            #expect(result.status == 0, "\(result.error)")
        }
        #expect(FileSystem.exists("\(target)/\(p1)") && FileSystem.exists("\(target)/\(p3)"))
        #expect(FileSystem.exists("\(target)/\(s1)") && FileSystem.exists("\(target)/\(s3)"))
        // A file that is not a pack name is never touched.
        try "x".write(toFile: "\(target)/packs/README.txt", atomically: true, encoding: .utf8)

        let dry = try await gifpackCLI(["publish", "--from", v4, "--to", target, "--keep-versions", "2", "--dry-run"])
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.output.contains("would upload: \(p4)") && dry.output.contains("would delete: \(p1)"), "\(dry.output)")
        #expect(dry.output.contains("would upload: \(s4)") && dry.output.contains("would delete: \(s1)"), "\(dry.output)")
        #expect(dry.output.contains("would write: index.json"))
        #expect(!FileSystem.exists("\(target)/\(p4)") && FileSystem.exists("\(target)/\(p1)"), "a dry run changes nothing")

        let real = try await gifpackCLI(["publish", "--from", v4, "--to", target, "--keep-versions", "2"])
        #expect(real.status == 0, "\(real.error)")
        let lines = real.output.split(separator: "\n").map(String.init)
        let indexLine = try #require(lines.firstIndex { $0.hasPrefix("write: index.json") && !$0.hasPrefix("write: index.json.minisig") })
        let deleteLine = try #require(lines.firstIndex { $0 == "delete: \(p1)" })
        let postersDeleteLine = try #require(lines.firstIndex { $0 == "delete: \(s1)" })
        let postersUploadLine = try #require(lines.firstIndex { $0.hasPrefix("upload: \(s4)") })
        #expect(indexLine < deleteLine && indexLine < postersDeleteLine, "deleted only after the new index is live")
        #expect(postersUploadLine < indexLine, "the posters pack goes up before the index")
        #expect(!FileSystem.exists("\(target)/\(p1)") && !FileSystem.exists("\(target)/\(s1)"))
        #expect(FileSystem.exists("\(target)/\(p3)") && FileSystem.exists("\(target)/\(p4)") && FileSystem.exists("\(target)/packs/README.txt"))
        #expect(FileSystem.exists("\(target)/\(s3)") && FileSystem.exists("\(target)/\(s4)"))
        #expect(try directoryIndexProblems(target).isEmpty)
    }

    @Test func retentionNeverDeletesWhatTheLiveIndexNames() {
        let stored = [
            "packs/all-v1-aaaaaaaa.tar.zst", "packs/all-v2-bbbbbbbb.tar.zst", "packs/all-v3-cccccccc.tar.zst",
            "packs/upper-body-v7-dddddddd.tar.zst", "packs/upper-body-v9-eeeeeeee.tar.zst", "packs/notes.txt"
        ]
        #expect(
            Publisher.Retention.deletions(
                stored: stored,
                protected: [
                    "packs/all-v3-cccccccc.tar.zst",
                    "packs/upper-body-v9-eeeeeeee.tar.zst"
                ], keepVersions: 1)
                == ["packs/all-v1-aaaaaaaa.tar.zst", "packs/all-v2-bbbbbbbb.tar.zst", "packs/upper-body-v7-dddddddd.tar.zst"])
        // The live index still names v1: kept whatever keep_versions says.
        #expect(
            Publisher.Retention.deletions(
                stored: stored,
                protected: [
                    "packs/all-v3-cccccccc.tar.zst", "packs/all-v1-aaaaaaaa.tar.zst",
                    "packs/upper-body-v9-eeeeeeee.tar.zst"
                ], keepVersions: 2)
                == [])
        #expect(Publisher.Retention.parse("packs/upper-body-v12-0123abcd.tar.zst").map { "\($0.pack) \($0.version)" } == "upper-body 12")
        // A posters pack is retained by its own versions, beside its pack's.
        let withPosters = [
            "packs/all-v1-aaaaaaaa.tar.zst", "packs/all-posters-v1-11111111.tar.zst", "packs/all-v2-bbbbbbbb.tar.zst",
            "packs/all-posters-v2-22222222.tar.zst"
        ]
        #expect(
            Publisher.Retention.deletions(
                stored: withPosters,
                protected: [
                    "packs/all-v2-bbbbbbbb.tar.zst",
                    "packs/all-posters-v2-22222222.tar.zst"
                ], keepVersions: 1)
                == ["packs/all-posters-v1-11111111.tar.zst", "packs/all-v1-aaaaaaaa.tar.zst"])
        #expect(Publisher.Retention.parse("packs/all-posters-v2-22222222.tar.zst").map { "\($0.pack) \($0.version)" } == "all-posters 2")
        #expect(Publisher.Retention.parse("packs/all-v1-xyz.tar.zst") == nil)
    }

    @Test func aBadFromIsRefusedBeforeAnythingIsUploaded() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")

        let missing = try await gifpackCLI(["publish", "--from", builds.workspace.file("nope"), "--to", target])
        #expect(missing.status == 2 && missing.error.contains("not a gifpack output directory"), "\(missing.error)")

        let damaged = builds.workspace.file("damaged")
        try await copyTree(builds.v2, to: damaged)
        let pack = try #require(try readIndex("\(damaged)/index.json").packs.last?.file)
        var bytes = try fileBytes("\(damaged)/\(pack)")
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: "\(damaged)/\(pack)"))
        let refused = try await gifpackCLI(["publish", "--from", damaged, "--to", target])
        #expect(refused.status == 2 && refused.error.contains(pack) && refused.error.contains("does not match"), "\(refused.error)")

        try FileManager.default.removeItem(atPath: "\(damaged)/\(pack)")
        let gone = try await gifpackCLI(["publish", "--from", damaged, "--to", target])
        #expect(gone.status == 2 && gone.error.contains("missing"), "\(gone.error)")
        #expect(!FileSystem.exists(target), "nothing was created at the target")

        let badTarget = try await gifpackCLI(["publish", "--from", builds.v2, "--to", "ftp://example.com/x"])
        #expect(badTarget.status == 2)
        let endpointWithoutS3 = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target, "--endpoint", "http://127.0.0.1:1"])
        #expect(endpointWithoutS3.status == 2)
    }

    @Test func installFromNginxWorksWhileANewVersionIsPublished() async throws {
        let builds = try await PublishBuilds.make(count: 16)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        #expect(try await gifpackCLI(["publish", "--from", builds.v1, "--to", target]).status == 0)
        let nginx = try await NginxServer.start(.init(root: target, publishCacheHeaders: true))
        defer { nginx.stop() }
        let v1Packs = try readIndex("\(builds.v1)/index.json").packs.map(\.name).sorted()
        let v2Packs = try readIndex("\(builds.v2)/index.json").packs.map(\.name).sorted()
        #expect(v1Packs != v2Packs, "the two builds are told apart by their pack names")

        // The publish of v2 stops at each of its phases (a debug-build hook) while an install runs
        // against nginx: after the first new pack, with every pack up but the old index live, and
        // with the new index live before retention. Every install must succeed, and get the version
        // the live index names at that moment.
        let points: [(PublishCrashPoint, [String])] = [(.afterFirstPack, v1Packs), (.beforeIndex, v1Packs), (.beforeRetention, v2Packs)]
        let pauses = builds.workspace.file("pauses")
        try FileManager.default.createDirectory(atPath: pauses, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_PAUSE_AT"] = points.map(\.0.rawValue).joined(separator: ",")
        environment["GIFPACK_PAUSE_DIR"] = pauses
        let publish = try ChildProcess(productPath("gifpack"), ["publish", "--from", builds.v2, "--to", target], environment: environment)
        defer { publish.killAndReap() }
        for (index, (point, expected)) in points.enumerated() {
            try? await waitUntil(deadline: .seconds(120), every: .milliseconds(20)) {
                FileSystem.exists("\(pauses)/\(point.rawValue).reached") || !publish.isRunning
            }
            try #require(FileSystem.exists("\(pauses)/\(point.rawValue).reached"), "the publish reached \(point.rawValue)")
            let cache = builds.workspace.file("cache-\(index)")
            let result = try await gifpackCLI(["install", "--index", "\(nginx.baseURL)/index.json", "--cache", cache])
            #expect(result.status == 0, "install at \(point.rawValue): \(result.error)")
            let installed = try InstallManifest.read(cacheDirectory: cache)
            #expect(installed?.packs.map(\.name) == expected, "install at \(point.rawValue) got \(installed?.packs.map(\.name) ?? [])")
            _ = FileManager.default.createFile(atPath: "\(pauses)/\(point.rawValue).go", contents: nil)
        }
        let status = await publish.exitStatus()
        #expect(status == 0)
        // And once it is done, an install gets v2 over HTTP, with nginx's cache headers.
        let after = try await gifpackCLI(["install", "--index", "\(nginx.baseURL)/index.json", "--cache", builds.workspace.file("cache-final")])
        #expect(after.status == 0, "\(after.error)")
        #expect(try InstallManifest.read(cacheDirectory: builds.workspace.file("cache-final"))?.packs.map(\.name) == v2Packs)
        let head = try await run("/usr/bin/curl", ["-sS", "-I", "\(nginx.baseURL)/\(try readIndex("\(builds.v2)/index.json").packs[0].file)"])
        #expect(head.output.lowercased().contains("cache-control: public, max-age=31536000, immutable"), "\(head.output)")
    }

    @Test func buildPublishesWithTheFlagOrTheManifestKey() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let environment = ["GIFPACK_TEST_KEY": testAPIKey, "SOURCE_DATE_EPOCH": "1700000000"]
        let plain = try workspace.write(rapidAPIManifest(server: server), to: "plain.yaml")
        let flag = try await gifpackCLI(
            [
                "build", "-m", plain, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "--quiet",
                "--publish", workspace.file("www")
            ], environment: environment)
        #expect(flag.status == 0, "\(flag.error)")
        #expect(try fileBytes(workspace.file("www/index.json")) == fileBytes(workspace.file("dist/index.json")))
        #expect(try directoryIndexProblems(workspace.file("www")).isEmpty)
        #expect(!FileSystem.exists(workspace.file("www/report.json")))

        let keyed = try workspace.write(
            rapidAPIManifest(server: server) + """

                output:
                  directory: \(workspace.file("dist2"))
                  publish: \(workspace.file("www2"))
                  index_max_age: 5m
                """, to: "keyed.yaml")
        let manifest = try ManifestLoader().load(path: keyed, environment: environment)
        #expect(manifest.output.publish == workspace.file("www2") && manifest.output.indexMaxAge == 300)
        let viaKey = try await gifpackCLI(["build", "-m", keyed, "--cache", workspace.file("cache"), "--quiet"], environment: environment)
        #expect(viaKey.status == 0, "\(viaKey.error)")
        #expect(try directoryIndexProblems(workspace.file("www2")).isEmpty)

        // A bad key is refused with its path before any traffic.
        let bad = try workspace.write(rapidAPIManifest(server: server) + "\noutput:\n  publish: ftp://x/y\n", to: "bad.yaml")
        let refused = try await gifpackCLI(["build", "-m", bad, "--quiet"], environment: environment)
        #expect(refused.status == 2 && refused.error.contains("output.publish"), "\(refused.error)")
        let endpointAlone = try workspace.write(rapidAPIManifest(server: server) + "\noutput:\n  publish_endpoint: http://127.0.0.1:1\n", to: "e.yaml")
        #expect(try await gifpackCLI(["build", "-m", endpointAlone, "--quiet"], environment: environment).status == 2)
    }
}

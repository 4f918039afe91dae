import Foundation
import GifPackClient
import GifPackHTTP
import Glibc
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures
import GifPackIndexReader

/// Publishing against hostile or broken targets: a live index that does not decode, races lost,
/// publishes killed between the signature and the index, listing keys that climb out of the
/// prefix, store answers that quote credentials, `--from` files that are not regular files.
@Suite("Publish: hostile targets, races and signatures", .tags(.s3), .ownThread, .timeLimit(.minutes(5)))
struct PublishAttackTests {
    /// A copy of `builds.v2` whose index carries `sequence` (and differs from v2 by its generator),
    /// signed again with the builds' key, in `workspace/name`.
    static func signedVariant(_ builds: PublishBuilds, _ name: String, sequence: Int) async throws -> String {
        let directory = builds.workspace.file(name)
        try await copyTree(builds.v2, to: directory)
        var index = try readIndex("\(directory)/index.json")
        index.sequence = sequence
        index.generator = "variant \(name)"
        let bytes = [UInt8](try index.encoded())
        try FileSystem.writeAtomically(bytes, to: "\(directory)/index.json")
        let signature = try builds.key.secret.sign(bytes, trustedComment: "timestamp:\(Int(Date().timeIntervalSince1970))\tfile:index.json\thashed")
        try FileSystem.writeAtomically(Array(signature.fileText.utf8), to: "\(directory)/index.json.minisig")
        return directory
    }

    /// What a client that checks signatures gets from the index at `location`: the index, or the error.
    static func trustedLoad(_ builds: PublishBuilds, _ location: String) async -> Result<PackIndex, PackClientError> {
        let trust = IndexTrust(keys: [builds.key.secret.publicKey])
        do { return .success(try await PackIndexSource(location).load(trust: trust)) } catch { return .failure(error) }
    }

    static func publishInProcess(_ from: String, to target: any PublishTarget, keepVersions: Int = 3) async throws(PublishError) -> PublishReport {
        let source = try await PublishSource.load(from)
        let options = PublishOptions(from: from, target: .directory("unused"), keepVersions: keepVersions)
        return try await Publisher(options: options, environment: [:]).publish(source, to: target) { _ in }
    }

    // MARK: - A live index that does not decode

    @Test func aLiveIndexOfANewerFormatOrUnreadableIsNeverSilentlyReplaced() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        #expect(try await gifpackCLI(["publish", "--from", builds.v1, "--to", target]).status == 0)
        let v1Pack = try #require(try readIndex("\(builds.v1)/index.json").packs.first?.file)

        // A newer format's index (a newer gifpack published it): the target serves a newer index, exit 7.
        let newer = Array(#"{"formatVersion": "9.0", "sequence": 77, "packs": [], "whatever": {"x": 1}}"#.utf8)
        try FileSystem.writeAtomically(newer, to: "\(target)/index.json")
        let before = relativeFiles(target)
        let refused = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target, "--keep-versions", "1"])
        #expect(refused.status == 7, "\(refused.status) \(refused.error)")
        #expect(refused.error.contains("format 9.0"), "\(refused.error)")
        #expect(try fileBytes("\(target)/index.json") == newer && relativeFiles(target) == before, "nothing was changed")

        // A truncated index: the publish stops, exit 1, naming the file and the flag; nothing changed.
        let truncated = Array(try fileBytes("\(builds.v1)/index.json").prefix(100))
        try FileSystem.writeAtomically(truncated, to: "\(target)/index.json")
        let stopped = try await gifpackCLI(["publish", "--from", builds.v2, "--to", target, "--keep-versions", "1"])
        #expect(stopped.status == 1, "\(stopped.status) \(stopped.error)")
        #expect(stopped.error.contains("index.json cannot be read") && stopped.error.contains("--replace-unreadable-index"), "\(stopped.error)")
        #expect(try fileBytes("\(target)/index.json") == truncated && relativeFiles(target) == before, "nothing was changed")

        // With the flag it is replaced, and retention, blind, deletes nothing (v1's pack stays).
        let replaced = try await gifpackCLI([
            "publish", "--from", builds.v2, "--to", target, "--keep-versions", "1",
            "--replace-unreadable-index"
        ])
        #expect(replaced.status == 0, "\(replaced.error)")
        #expect(replaced.output.contains("retention: skipped"), "\(replaced.output)")
        #expect(try fileBytes("\(target)/index.json") == fileBytes("\(builds.v2)/index.json"))
        #expect(FileSystem.exists("\(target)/\(v1Pack)"), "retention deleted nothing")
        #expect(try directoryIndexProblems(target).isEmpty)
    }

    // MARK: - The signature of the index a client reads

    @Test func aLostRaceLeavesTheWinnersSignatureBesideTheWinnersIndex() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        #expect(try await gifpackCLI(["publish", "--from", builds.v2, "--to", target]).status == 0)
        let loser = try await Self.signedVariant(builds, "loser", sequence: 2)
        let winner = try await Self.signedVariant(builds, "winner", sequence: 3)

        // The winner publishes, in its own process, while the loser runs: after the loser read the live index.
        let racing = RivalFirst(DirectoryTarget(root: target)) {
            let result = try await gifpackCLI(["publish", "--from", winner, "--to", target])
            guard result.status == 0 else { throw PublishTestFailure("the winner's publish failed: \(result.error)") }
        }
        let error = await #expect(throws: PublishError.self) { _ = try await Self.publishInProcess(loser, to: racing) }
        #expect(error?.exitStatus == .superseded, "\(String(describing: error))")
        #expect(racing.rivalRan)
        #expect(try fileBytes("\(target)/index.json") == fileBytes("\(winner)/index.json"))
        let loaded = await Self.trustedLoad(builds, "\(target)/index.json")
        #expect((try? loaded.get())?.sequence == 3, "\(loaded)")
        // Stock minisign's file beside the index is the winner's too.
        #expect(try fileBytes("\(target)/index.json.minisig") == fileBytes("\(winner)/index.json.minisig"))
    }

    @Test(arguments: [PublishCrashPoint.afterSignature, .beforeIndexRename, .afterIndex])
    func aPublishKilledAroundTheIndexLeavesAnIndexThatVerifies(_ point: PublishCrashPoint) async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        #expect(try await gifpackCLI(["publish", "--from", builds.v2, "--to", target]).status == 0)
        let next = try await Self.signedVariant(builds, "next", sequence: 2)

        let crashed = try await gifpackCLI(["publish", "--from", next, "--to", target], environment: ["GIFPACK_CRASH_AT": point.rawValue])
        #expect(killedBySIGKILL(crashed), "\(point.rawValue): \(crashed.status) \(crashed.error)")
        let loaded = await Self.trustedLoad(builds, "\(target)/index.json")
        #expect((try? loaded.get())?.sequence == (point == .afterIndex ? 2 : 1), "killed at \(point.rawValue): \(loaded)")

        let finished = try await gifpackCLI(["publish", "--from", next, "--to", target])
        #expect(finished.status == 0, "\(finished.error)")
        #expect((try? (await Self.trustedLoad(builds, "\(target)/index.json")).get())?.sequence == 2)
        #expect(try fileBytes("\(target)/index.json.minisig") == fileBytes("\(next)/index.json.minisig"))
    }

    @Test func s3LostRacesAndKilledPublishesLeaveAnIndexThatVerifies() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        try await moto.createBucket(PublishS3Tests.bucket)
        let (loser, winner) = (try await Self.signedVariant(builds, "loser", sequence: 2), try await Self.signedVariant(builds, "winner", sequence: 3))
        let root = "\(PublishS3Tests.bucket)/gifpack"
        /// The served index and its signature, fetched as a client would, into `directory` (hash-named signatures included).
        func mirror(_ name: String) async throws -> String {
            let directory = builds.workspace.file(name)
            try FileManager.default.createDirectory(atPath: "\(directory)/signatures", withIntermediateDirectories: true)
            let index = try #require(try await moto.get("\(root)/index.json"))
            try Data(index).write(to: URL(fileURLWithPath: "\(directory)/index.json"))
            if let beside = try await moto.get("\(root)/index.json.minisig") {
                try Data(beside).write(to: URL(fileURLWithPath: "\(directory)/index.json.minisig"))
            }
            let key = SignatureLocation.key(forIndexSHA256: sha256Hex(index))
            if let hashed = try await moto.get("\(root)/\(key)") { try Data(hashed).write(to: URL(fileURLWithPath: "\(directory)/\(key)")) }
            return "\(directory)/index.json"
        }

        #expect(try await PublishS3Tests.publish(builds.v2, moto: moto).status == 0)
        // Killed after the hash-named signature, before the index.
        let crashed = try await PublishS3Tests.publish(loser, moto: moto, environment: ["GIFPACK_CRASH_AT": PublishCrashPoint.afterSignature.rawValue])
        #expect(killedBySIGKILL(crashed), "\(crashed.status) \(crashed.error)")
        #expect((try? (await Self.trustedLoad(builds, try await mirror("after-kill"))).get())?.sequence == 1)

        // A lost race: the winner publishes after the loser read the live index.
        let http = try GifPackHTTP.HTTPClient(maxConnections: 2)
        defer { http.shutdown() }
        let s3 = try S3Target(bucket: PublishS3Tests.bucket, prefix: "gifpack/", endpoint: moto.endpoint, environment: moto.credentials, client: http)
        let racing = RivalFirst(s3) {
            let result = try await PublishS3Tests.publish(winner, moto: moto)
            guard result.status == 0 else { throw PublishTestFailure("the winner's publish failed: \(result.error)") }
        }
        await #expect(throws: PublishError.self) { _ = try await Self.publishInProcess(loser, to: racing) }
        #expect(racing.rivalRan)
        let afterRace = try await mirror("after-race")
        #expect(try fileBytes(afterRace) == fileBytes("\(winner)/index.json"))
        let loaded = await Self.trustedLoad(builds, afterRace)
        #expect((try? loaded.get())?.sequence == 3, "\(loaded)")
        #expect(try await moto.get("\(root)/index.json.minisig") == fileBytes("\(winner)/index.json.minisig"))
    }

    @Test func anIndexWriteTheStoreRefusesLeavesTheOldIndexWithItsSignature() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let bucket = PublishS3Tests.bucket
        // moto checks signatures and IAM policies: "admin" may do anything, "restricted" anything
        // but PutObject on the index (so its publish fails at the index write, after the signature).
        let moto = try await MotoServer.start(environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "6"])
        defer { moto.stop() }
        let admin = try await Self.iamUser(moto, "admin", statements: #"{"Effect":"Allow","Action":"s3:*","Resource":"*"}"#)
        let restricted = try await Self.iamUser(
            moto, "restricted",
            statements: #"{"Effect":"Allow","Action":"s3:*","Resource":"*"},"#
                + #"{"Effect":"Deny","Action":"s3:PutObject","Resource":"arn:aws:s3:::\#(bucket)/gifpack/index.json"}"#)
        let signing = [
            "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(admin["AWS_ACCESS_KEY_ID"]!):\(admin["AWS_SECRET_ACCESS_KEY"]!)",
            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"
        ]
        let made = try await run("/usr/bin/curl", ["-sS", "-f", "-X", "PUT"] + signing + ["\(moto.endpoint)/\(bucket)"])
        #expect(made.status == 0, "\(made.error)")
        func get(_ key: String) async throws -> [UInt8]? {
            let out = builds.workspace.file("get-\(UUID().uuidString)")
            let result = try await run("/usr/bin/curl", ["-sS", "-f", "-o", out] + signing + ["\(moto.endpoint)/\(bucket)/gifpack/\(key)"])
            return result.status == 0 ? try fileBytes(out) : nil
        }
        /// The served index with its signatures, copied to a directory a client then reads.
        func served(_ name: String) async throws -> String {
            let directory = builds.workspace.file(name)
            try FileManager.default.createDirectory(atPath: "\(directory)/signatures", withIntermediateDirectories: true)
            let index = try #require(try await get("index.json"))
            try Data(index).write(to: URL(fileURLWithPath: "\(directory)/index.json"))
            let key = SignatureLocation.key(forIndexSHA256: sha256Hex(index))
            for file in ["index.json.minisig", key] {
                if let bytes = try await get(file) { try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(file)")) }
            }
            return "\(directory)/index.json"
        }
        let next = try await Self.signedVariant(builds, "next", sequence: 2)
        func publish(_ from: String, as user: [String: String]) async throws -> ProcessResult {
            try await gifpackCLI(
                ["publish", "--from", from, "--to", "s3://\(bucket)/gifpack", "--endpoint", moto.endpoint],
                environment: user.merging(["AWS_REGION": "us-east-1", "AWS_SESSION_TOKEN": ""]) { $1 })
        }

        #expect(try await publish(builds.v2, as: admin).status == 0)
        let refused = try await publish(next, as: restricted)
        #expect(refused.status == 4 && refused.error.contains("upload index.json"), "\(refused.status) \(refused.error)")
        #expect(try await get("index.json") == fileBytes("\(builds.v2)/index.json"), "the old index is still live")
        let loaded = await Self.trustedLoad(builds, try await served("after-refusal"))
        #expect((try? loaded.get())?.sequence == 1, "\(loaded)")

        #expect(try await publish(next, as: admin).status == 0)
        #expect((try? (await Self.trustedLoad(builds, try await served("after-admin"))).get())?.sequence == 2)
    }

    /// An IAM user of `moto` with an inline policy of `statements`, and its key as environment variables.
    static func iamUser(_ moto: MotoServer, _ name: String, statements: String) async throws -> [String: String] {
        let iam = ["--aws-sigv4", "aws:amz:us-east-1:iam", "--user", "AKIAGIFPACKTEST00001:unused", "-sS", "-f", "-X", "POST"]
        let policy = #"{"Version":"2012-10-17","Statement":["# + statements + "]}"
        var credentials: [String: String] = [:]
        for action in ["CreateUser", "CreateAccessKey", "PutUserPolicy"] {
            var fields = ["Action=\(action)", "UserName=\(name)", "Version=2010-05-08"]
            if action == "PutUserPolicy" { fields += ["PolicyName=s3", "PolicyDocument=\(policy)"] }
            let result = try await run("/usr/bin/curl", iam + fields.flatMap { ["--data-urlencode", $0] } + ["\(moto.endpoint)/"])
            guard result.status == 0 else { throw PublishTestFailure("IAM \(action) for \(name) failed: \(result.error) \(result.output)") }
            if action == "CreateAccessKey" {
                func element(_ tag: String) -> String? {
                    result.output.components(separatedBy: "<\(tag)>").dropFirst().first?.components(separatedBy: "</\(tag)>").first
                }
                guard let id = element("AccessKeyId"), let secret = element("SecretAccessKey") else {
                    throw PublishTestFailure("no access key in \(result.output)")
                }
                credentials = ["AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret]
            }
        }
        return credentials
    }

    @Test func retentionKeepsTheSignaturesOfTheLiveIndexesAndClientsFallBackToTheOneBeside() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let two = try await Self.signedVariant(builds, "two", sequence: 2)
        let three = try await Self.signedVariant(builds, "three", sequence: 3)
        for dir in [builds.v2, two, three] {
            let result = try await gifpackCLI(["publish", "--from", dir, "--to", target])
            #expect(result.status == 0, "\(result.error)")
            if dir == two {
                // Files under signatures/ that are not hash-named signatures are never touched.
                try "x".write(toFile: "\(target)/signatures/notes.txt", atomically: true, encoding: .utf8)
                try "x".write(toFile: "\(target)/signatures/\(String(repeating: "A", count: 64)).minisig", atomically: true, encoding: .utf8)
            }
        }
        let key = { (dir: String) throws -> String in SignatureLocation.key(forIndexSHA256: sha256Hex(try fileBytes("\(dir)/index.json"))) }
        #expect(
            try relativeFiles("\(target)/signatures").map { "signatures/\($0)" }
                == [key(two), key(three), "signatures/\(String(repeating: "A", count: 64)).minisig", "signatures/notes.txt"].sorted())
        #expect(try fileBytes("\(target)/\(key(three))") == fileBytes("\(three)/index.json.minisig"))
        // A target of an older version has only index.json.minisig: the client falls back to it.
        #expect(!FileSystem.exists("\(builds.v2)/signatures"))
        #expect((try? (await Self.trustedLoad(builds, "\(builds.v2)/index.json")).get())?.sequence == 1)
        // And a hash-named signature is used before the one beside (which may lag).
        try FileSystem.writeAtomically(try fileBytes("\(two)/index.json.minisig"), to: "\(target)/index.json.minisig")
        #expect((try? (await Self.trustedLoad(builds, "\(target)/index.json")).get())?.sequence == 3)
        // gifpack verify on the published folder reads the hash-named signature first too.
        let verified = try await gifpackCLI(["verify", target, "--trusted-key", builds.key.publicPath])
        #expect(verified.status == 0, "\(verified.output)\(verified.error)")
    }

    @Test func theLazyCacheVerifiesAnIndexWhoseSignatureBesideLags() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let next = try await Self.signedVariant(builds, "next", sequence: 2)
        for dir in [builds.v2, next] { #expect(try await gifpackCLI(["publish", "--from", dir, "--to", target]).status == 0) }
        // index.json.minisig still the previous index's (a publish killed after the index, or a CDN's stale copy).
        try FileSystem.writeAtomically(try fileBytes("\(builds.v2)/index.json.minisig"), to: "\(target)/index.json.minisig")
        let server = try ClientStaticFileServer(root: target)
        defer { server.stop() }
        let cache = LazyGIFCache(
            directory: builds.workspace.file("lazy"), indexURL: server.baseURL + "/index.json",
            trust: IndexTrust(keys: [builds.key.secret.publicKey]))
        let index = try await cache.index()
        #expect(index.sequence == 2)
    }

    @Test func signatureLocationsAndKeys() {
        let hex = String(repeating: "0a", count: 32)
        #expect(SignatureLocation.key(forIndexSHA256: hex) == "signatures/\(hex).minisig")
        #expect(SignatureLocation.isKey("signatures/\(hex).minisig"))
        for bad in [
            "signatures/\(hex.uppercased()).minisig", "signatures/\(hex).minisig.tmp", "signatures/../\(hex).minisig",
            "signatures/\(hex.dropLast()).minisig", "x/signatures/\(hex).minisig", "signatures/\(hex)g.minisig"
        ] {
            #expect(!SignatureLocation.isKey(bad), "\(bad)")
        }
        #expect(
            SignatureLocation.hashNamed("https://cdn.example.com/g/index.json?v=2#x", indexSHA256: hex)
                == "https://cdn.example.com/g/signatures/\(hex).minisig")
        #expect(SignatureLocation.hashNamed("/srv/www/index.json", indexSHA256: hex) == "/srv/www/signatures/\(hex).minisig")
        #expect(SignatureLocation.hashNamed("index.json", indexSHA256: hex) == "signatures/\(hex).minisig")
    }

    // MARK: - Retention within its prefix

    @Test func retentionNeverDeletesAKeyOutsideThePackGrammar() {
        for key in [
            "packs/../../victim/all-v1-abcdef12.tar.zst", "packs/a/b-v1-abcdef12.tar.zst", "packs/ALL-v1-abcdef12.tar.zst",
            "packs/all-v+1-abcdef12.tar.zst", "packs/all-v01-abcdef12.tar.zst", "packs/all-v1-ABCDEF12.tar.zst",
            "packs/-all-v1-abcdef12.tar.zst", "packs/al l-v1-abcdef12.tar.zst", "packs/all-v1-abcdef1２.tar.zst",
            "packs/all-v99999999999-abcdef12.tar.zst"
        ] {
            #expect(Publisher.Retention.parse(key) == nil, "\(key)")
        }
        #expect(Publisher.Retention.parse("packs/upper_body-2-v3-0123abcd.tar.zst").map { "\($0.pack) \($0.version)" } == "upper_body-2 3")
        #expect(Publisher.Retention.parse("packs/all-posters-v3-0123abcd.tar.zst").map { "\($0.pack) \($0.version)" } == "all-posters 3")
    }

    @Test func s3URLsEncodeEachSegmentAndRefuseDotSegments() throws {
        let http = try GifPackHTTP.HTTPClient(maxConnections: 1)
        defer { http.shutdown() }
        let bucket = S3Bucket(
            endpoint: "http://127.0.0.1:9", bucket: "b", prefix: "p/", credentials: .init(accessKeyID: "AKIAX", secretAccessKey: "s"),
            client: http)
        #expect(try bucket.url(of: "packs/a b?c#d%.tar.zst") == "http://127.0.0.1:9/b/p/packs/a%20b%3Fc%23d%25.tar.zst")
        for key in ["packs/../../victim/x", "packs/./x", "packs//x", "", "packs/x/.."] {
            #expect(throws: HTTPError.self, "\(key)") { _ = try bucket.url(of: key) }
        }
    }

    @Test func s3RetentionNeverDeletesOutsideItsPrefix() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        let bucket = PublishS3Tests.bucket
        try await moto.createBucket(bucket)
        // A victim outside the prefix, and listing keys under packs/ that climb out to it (two
        // versions, so keep-versions 1 would delete the older one).
        for path in [
            "victim/all-v1-abcdef12.tar.zst", "gifpack/packs/../../victim/all-v1-abcdef12.tar.zst",
            "gifpack/packs/../../victim/all-v2-abcdef12.tar.zst"
        ] {
            let put = try await run(
                "/usr/bin/curl",
                ["-sS", "-f", "--path-as-is", "-X", "PUT", "--data-binary", "victim"] + moto.signing
                    + ["\(moto.endpoint)/\(bucket)/\(path)"])
            #expect(put.status == 0, "\(put.error)")
        }
        #expect(try await moto.keys(bucket: bucket, prefix: "gifpack/packs/").contains("gifpack/packs/../../victim/all-v1-abcdef12.tar.zst"))
        let published = try await PublishS3Tests.publish(builds.v1, moto: moto, extra: ["--keep-versions", "1"])
        #expect(published.status == 0, "\(published.error)")
        #expect(!published.output.contains("delete:"), "\(published.output)")
        #expect(!moto.requests.contains { $0.hasPrefix("DELETE ") }, "\(moto.requests)")
        #expect(try await moto.keys(bucket: bucket, prefix: "victim/") == ["victim/all-v1-abcdef12.tar.zst"])
    }

    // MARK: - Weak spots: store messages, redaction, --from files

    @Test func s3ErrorMessagesCarryOnlyTheCleanedCodeAndMessage() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let server = try await EchoingS3ErrorServer.start()
        defer { server.stop() }
        let token = "FwoGZXIvYXdzEJr-session-token-\(UUID().uuidString)"
        let secret = "echoed-secret-\(UUID().uuidString)"
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKIAECHOTEST00000001", "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": token,
            "AWS_REGION": "us-east-1"
        ]
        for mode in ["header", "token", "escape"] {
            let result = try await gifpackCLI(
                ["publish", "--from", builds.v1, "--to", "s3://b/\(mode)", "--endpoint", server.endpoint],
                environment: environment)
            #expect(result.status == 1, "\(mode): \(result.status) \(result.error)")
            #expect(result.error.contains("InvalidArgument"), "\(mode): \(result.error)")
            for text in [result.output, result.error] {
                #expect(!text.contains(token) && !text.contains(secret) && !text.contains("AKIAECHOTEST00000001"), "\(mode): \(text)")
                #expect(!text.contains("\u{1B}"), "\(mode): terminal escapes pass through: \(text)")
            }
        }
    }

    @Test func redactingACodableValueFailsClosed() throws {
        struct Record: Codable, Equatable {
            var note: String
            var ratio: Double
        }
        enum Kind: String, Codable { case plain, secretive = "kind sk-secret-123456" }
        struct Tagged: Codable { var kind: Kind }
        let redactor = SecretRedactor(secrets: ["sk-secret-123456"])
        // A NaN (JSONEncoder refuses it by default) round-trips: the value comes back redacted.
        let cleaned = try redactor.redacted(Record(note: "key sk-secret-123456 leaked", ratio: .nan))
        #expect(cleaned.note == "key <redacted> leaked" && cleaned.ratio.isNaN, "\(cleaned)")
        #expect(try redactor.redacted(Record(note: "key sk-secret-123456", ratio: 1)).note == "key <redacted>")
        // A value whose cleaned form is no longer valid is refused, never returned as it was.
        #expect(throws: SecretRedactor.Unredactable.self) { _ = try redactor.redacted(Tagged(kind: .secretive)) }
        #expect(try redactor.redacted(Tagged(kind: .plain)).kind == .plain)

        // The build report: a NaN ratio no longer lets the report through unredacted.
        var report = BuildReport(generator: "gifpack", exitStatus: .failed, message: "server said sk-secret-123456")
        report.bytes.compressionRatio = .nan
        report.stateErrors = ["echo sk-secret-123456"]
        let redacted = redactor.redact(report)
        #expect(redacted.message == "server said <redacted>" && redacted.stateErrors == ["echo <redacted>"], "\(redacted)")
    }

    @Test func fromFilesAndTheLiveIndexMustBeRegularFilesOfBoundedSize() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        /// The publish with a 60 s bound: reading a FIFO without the checks hangs.
        func publish(_ from: String, _ to: String) async throws -> ProcessResult {
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "GIFPACK_CRASH_AT")
            return try await run(
                "/usr/bin/timeout", ["-s", "KILL", "60", productPath("gifpack"), "publish", "--from", from, "--to", to],
                environment: environment)
        }
        let cases: [(file: String, make: (String) throws -> Void, reason: String)] = [
            ("index.json.minisig", { #expect(mkfifo($0, 0o644) == 0) }, "not a regular file (a FIFO)"),
            ("report.json", { try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: "/dev/zero") }, "not a regular file (a symbolic link)"),
            ("index.json", { #expect(mkfifo($0, 0o644) == 0) }, "not a regular file (a FIFO)"),
            ("index.json", { #expect(truncate($0, 65 << 20) == 0) }, "larger than the 67108864-byte limit"),
            ("index.json.minisig", { #expect(truncate($0, 5000) == 0) }, "larger than the 4096-byte limit")
        ]
        for (number, item) in cases.enumerated() {
            let from = builds.workspace.file("from\(number)")
            try await copyTree(builds.v2, to: from)
            try? FileManager.default.removeItem(atPath: "\(from)/\(item.file)")
            if item.reason.hasPrefix("larger") { try copyTree(file: "\(builds.v2)/\(item.file)", to: "\(from)/\(item.file)") }
            try item.make("\(from)/\(item.file)")
            let result = try await publish(from, target)
            #expect(result.status == 2, "\(item.file) \(item.reason): \(result.status) \(result.error)")
            #expect(result.error.contains("\(from)/\(item.file)") && result.error.contains(item.reason), "\(result.error)")
            #expect(!FileSystem.exists(target), "nothing was uploaded")
        }
        // The target's live index: a FIFO is refused, exit 1, naming it.
        #expect(try await publish(builds.v2, target).status == 0)
        try FileManager.default.removeItem(atPath: "\(target)/index.json")
        #expect(mkfifo("\(target)/index.json", 0o644) == 0)
        let live = try await publish(builds.v2, target)
        #expect(live.status == 1 && live.error.contains("\(target)/index.json") && live.error.contains("a FIFO"), "\(live.status) \(live.error)")
    }
}

/// `cp` of one file, for a test that then grows it.
private func copyTree(file source: String, to destination: String) throws {
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}

/// A target that runs `rival` (another publisher, to completion) the first time the publish asks
/// anything after reading the live index, then does what it is asked on the real target.
final class RivalFirst: PublishTarget, @unchecked Sendable {
    let inner: any PublishTarget
    let rival: @Sendable () async throws -> Void
    private let lock = NSLock()
    private var ran = false

    init(_ inner: any PublishTarget, rival: @escaping @Sendable () async throws -> Void) {
        self.inner = inner
        self.rival = rival
    }

    var rivalRan: Bool { lock.withLock { ran } }

    private func rivalOnce() async throws(PublishError) {
        guard
            lock.withLock({ () -> Bool in
                defer { ran = true }; return !ran
            })
        else { return }
        do { try await rival() } catch { throw .failed("the rival publisher failed: \(error)") }
    }

    var displayName: String { inner.displayName }
    func readLiveIndex() async throws(PublishError) -> LiveIndex? { try await inner.readLiveIndex() }
    func read(_ key: String, maxBytes: Int64) async throws(PublishError) -> [UInt8]? { try await inner.read(key, maxBytes: maxBytes) }
    func stat(_ key: String) async throws(PublishError) -> StoredObject? {
        try await rivalOnce()
        return try await inner.stat(key)
    }
    func putPack(_ key: String, from path: String, bytes: Int64, sha256: String) async throws(PublishError) {
        try await rivalOnce()
        try await inner.putPack(key, from: path, bytes: bytes, sha256: sha256)
    }
    func putMetadataFile(
        _ key: String, bytes: [UInt8], contentType: String, maxAge: Int, replacing live: LiveIndex?,
        conditional: Bool
    ) async throws(PublishError) {
        try await rivalOnce()
        try await inner.putMetadataFile(key, bytes: bytes, contentType: contentType, maxAge: maxAge, replacing: live, conditional: conditional)
    }
    func listKeys(under folder: String) async throws(PublishError) -> [String] { try await inner.listKeys(under: folder) }
    func delete(_ key: String) async throws(PublishError) { try await inner.delete(key) }
    func removeLeftovers() async { await inner.removeLeftovers() }
}

/// A loopback HTTP server (Python, from `.venv-test`) that answers every request like a hostile
/// S3-compatible store: HTTP 400 with an error body whose `Message` quotes the request's
/// credentials. The last path segment of the bucket prefix picks how: `header` quotes the
/// `x-amz-security-token` header line, `token` only the token's value, `escape` the access key
/// with terminal escapes around it.
final class EchoingS3ErrorServer: @unchecked Sendable {
    let port: Int
    let process: ChildProcess
    private let directory: TemporaryDirectory

    static let script = #"""
        import sys
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def answer(self):
                token = self.headers.get("x-amz-security-token", "")
                auth = self.headers.get("authorization", "")
                key = auth.split("Credential=")[1].split("/")[0] if "Credential=" in auth else ""
                if "/header" in self.path:
                    message = "bad header x-amz-security-token: " + token
                elif "/token" in self.path:
                    message = "the token " + token + " is not valid here"
                else:
                    message = "\x1b[31mkey " + key + "\x1b[0m"
                body = ("<?xml version=\"1.0\"?><Error><Code>InvalidArgument</Code><Message>" + message
                        + "</Message><RequestId>1</RequestId></Error>").encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = answer

            def log_message(self, *args):
                pass

        ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
        """#

    static func start() async throws -> EchoingS3ErrorServer { try await EchoingS3ErrorServer() }

    private init() async throws {
        try ServerTags.require(.s3, starting: "an S3-compatible server")
        directory = try TemporaryDirectory()
        let script = try directory.write(Self.script, to: "server.py")
        let python = "\(PublishServers.repositoryRoot)/.venv-test/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw PublishTestFailure("\(python) is missing: run `make test-venv`")
        }
        port = try LoopbackPort.free()
        process = try ChildProcess(python, [script, "\(port)"], stdout: .file(directory.file("log")), stderr: .file(directory.file("log")))
        guard await LoopbackPort.waitUntilListening(port: port, process: process, seconds: 30) else {
            LoopbackPort.kill(process)
            throw PublishTestFailure("the echoing S3 server did not start: \((try? String(contentsOfFile: directory.file("log"), encoding: .utf8)) ?? "")")
        }
    }

    deinit { stop() }

    func stop() { LoopbackPort.kill(process) }

    var endpoint: String { "http://127.0.0.1:\(port)" }
}

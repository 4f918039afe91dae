import Foundation
import Glibc
import GifPackHTTP
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// Publishing to moto's S3 server (`.venv-test`, made by `make test-venv`): a missing venv fails
/// these tests, it does not skip them.
@Suite("Publish: S3 target against moto", .tags(.s3), .timeLimit(.minutes(5)))
struct PublishS3Tests {
    static let bucket = "gifpack-cdn"

    static func publish(
        _ from: String, moto: MotoServer, prefix: String = "gifpack", extra: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> ProcessResult {
        try await gifpackCLI(
            ["publish", "--from", from, "--to", "s3://\(bucket)/\(prefix)", "--endpoint", moto.endpoint] + extra,
            environment: moto.credentials.merging(environment) { $1 })
    }

    /// The served index's problems (``servedIndexProblems(index:pack:)``), its packs fetched first.
    static func problems(_ moto: MotoServer, prefix: String = "gifpack") async throws -> [String] {
        let index = try await moto.get("\(bucket)/\(prefix)/index.json")
        var packs: [String: [UInt8]] = [:]
        for file in (try index.map { try PackIndex.decode(from: Data($0)) }?.packFiles.map(\.file)) ?? [] {
            packs[file] = try await moto.get("\(bucket)/\(prefix)/\(file)")
        }
        return try servedIndexProblems(index: index) { packs[$0] }
    }

    @Test func packsGoUpAndAreConfirmedBeforeTheSignatureAndIndexWithCacheHeadersAndOnlyOnce() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        // moto verifies every signature (SigV4 by libcurl, the streamed bodies' x-amz-content-sha256 included).
        let moto = try await MotoServer.start(strictAuth: true)
        defer { moto.stop() }
        try await moto.createBucket(Self.bucket)
        let result = try await Self.publish(builds.v2, moto: moto, extra: ["--index-max-age", "30"])
        #expect(result.status == 0, "\(result.error)")
        let index = try readIndex("\(builds.v2)/index.json")
        let root = "/\(Self.bucket)/gifpack"

        // Order, from moto's request log: each pack PUT and then HEAD (the confirmation), all of them
        // before the hash-named signature's PUT, which comes before the index's, then index.json.minisig.
        let log = moto.requests
        let hashNamed = SignatureLocation.key(forIndexSHA256: sha256Hex(try fileBytes("\(builds.v2)/index.json")))
        let indexPut = try #require(log.firstIndex(of: "PUT \(root)/index.json"), "\(log)")
        let signaturePut = try #require(log.firstIndex(of: "PUT \(root)/\(hashNamed)"), "\(log)")
        let besidePut = try #require(log.firstIndex(of: "PUT \(root)/index.json.minisig"), "\(log)")
        #expect(signaturePut < indexPut && indexPut < besidePut)
        // Posters packs (format 1.2) go up like packs.
        #expect(index.packFiles.count == 2 * index.packs.count)
        for pack in index.packFiles {
            let put = try #require(log.firstIndex(of: "PUT \(root)/\(pack.file)"), "\(log)")
            let confirm = try #require(log.lastIndex(of: "HEAD \(root)/\(pack.file)"))
            #expect(put < confirm && confirm < signaturePut, "\(pack.file) confirmed before the signature")
        }
        // Nothing but packs, signature and index.
        #expect(
            try await moto.keys(bucket: Self.bucket, prefix: "gifpack/")
                == (index.packFiles.map { "gifpack/\($0.file)" } + [
                    "gifpack/index.json", "gifpack/index.json.minisig", "gifpack/index.json.zst",
                    "gifpack/\(hashNamed)"
                ]).sorted())
        #expect(try await Self.problems(moto).isEmpty)
        #expect(try await moto.get("\(Self.bucket)/gifpack/index.json") == fileBytes("\(builds.v2)/index.json"))

        // Cache headers and types.
        let packHead = try await moto.head("\(Self.bucket)/gifpack/\(index.packs[0].file)")
        #expect(packHead["cache-control"] == "public, max-age=31536000, immutable", "\(packHead)")
        #expect(packHead["x-amz-meta-sha256"] == index.packs[0].sha256)
        let indexHead = try await moto.head("\(Self.bucket)/gifpack/index.json")
        #expect(indexHead["cache-control"] == "public, max-age=30" && indexHead["content-type"] == "application/json", "\(indexHead)")
        let signatureHead = try await moto.head("\(Self.bucket)/gifpack/index.json.minisig")
        #expect(signatureHead["cache-control"] == "public, max-age=30")
        #expect(signatureHead["content-type"]?.hasPrefix("text/plain") == true, "\(signatureHead)")

        // The same build again: no PUT at all.
        let before = moto.requests.count
        let again = try await Self.publish(builds.v2, moto: moto)
        #expect(again.status == 0, "\(again.error)")
        #expect(!moto.requests[before...].contains { $0.hasPrefix("PUT ") }, "\(moto.requests[before...])")
        #expect(again.output.contains("0 pack(s) uploaded"))

        // Credentials appear in no output.
        for text in [result.output, result.error, again.output, again.error] {
            #expect(!text.contains(moto.credentials["AWS_SECRET_ACCESS_KEY"]!) && !text.contains(moto.credentials["AWS_ACCESS_KEY_ID"]!))
        }
    }

    @Test func killedPublishesNeverServeAnIndexWithMissingPacksAndTheNextRunCompletes() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        try await moto.createBucket(Self.bucket)
        let newIndex = try fileBytes("\(builds.v2)/index.json")
        let points: [PublishCrashPoint] = [.afterFirstPack, .beforeIndex, .afterSignature, .beforeRetention]
        for (number, point) in points.enumerated() {
            let prefix = "kill\(number)"
            #expect(try await Self.publish(builds.v1, moto: moto, prefix: prefix).status == 0)
            let oldIndex = try #require(try await moto.get("\(Self.bucket)/\(prefix)/index.json"))
            let crashed = try await Self.publish(builds.v2, moto: moto, prefix: prefix, environment: ["GIFPACK_CRASH_AT": point.rawValue])
            #expect(killedBySIGKILL(crashed), "\(point.rawValue): \(crashed.status) \(crashed.error)")
            let served = try await moto.get("\(Self.bucket)/\(prefix)/index.json")
            #expect(served == oldIndex || served == newIndex)
            #expect((served == newIndex) == (point == .beforeRetention), "\(point.rawValue)")
            #expect(try await Self.problems(moto, prefix: prefix).isEmpty, "\(point.rawValue)")
            let finished = try await Self.publish(builds.v2, moto: moto, prefix: prefix)
            #expect(finished.status == 0, "\(finished.error)")
            #expect(try await moto.get("\(Self.bucket)/\(prefix)/index.json") == newIndex)
            #expect(try await Self.problems(moto, prefix: prefix).isEmpty)
            if point != .afterFirstPack {
                #expect(finished.output.contains("0 pack(s) uploaded"), "packs of the killed run are not sent again: \(finished.output)")
            }
        }
    }

    @Test func anOlderBuildCannotOverwriteANewerIndexAndConditionalWritesGuardTheRace() async throws {
        let builds = try await PublishBuilds.make()
        defer { builds.built.server.stop() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        try await moto.createBucket(Self.bucket)
        #expect(try await Self.publish(builds.v2, moto: moto).status == 0)
        let live = try await moto.get("\(Self.bucket)/gifpack/index.json")
        let before = moto.requests.count
        let older = try await Self.publish(builds.v1, moto: moto)
        #expect(older.status == 7 && older.error.contains("sequence 1"), "\(older.status) \(older.error)")
        #expect(!moto.requests[before...].contains { $0.hasPrefix("PUT ") }, "refused before uploading anything")
        #expect(try await moto.get("\(Self.bucket)/gifpack/index.json") == live)

        // The store's conditional write: If-None-Match: * on an index that appeared after it was read.
        let http = try GifPackHTTP.HTTPClient(maxConnections: 1)
        defer { http.shutdown() }
        let target = try S3Target(bucket: Self.bucket, prefix: "race/", endpoint: moto.endpoint, environment: moto.credentials, client: http)
        try await target.putMetadataFile(
            "index.json", bytes: Array("{}".utf8), contentType: "application/json", maxAge: 60,
            replacing: nil, conditional: true)
        await #expect(throws: PublishError.self) {
            try await target.putMetadataFile(
                "index.json", bytes: Array("{\"x\":1}".utf8), contentType: "application/json", maxAge: 60,
                replacing: nil, conditional: true)
        }
        // If-Match with a stale ETag.
        let current = try #require(try await target.readLiveIndex())
        var stale = current
        stale.etag = "\"0000000000000000\""
        await #expect(throws: PublishError.self) {
            try await target.putMetadataFile(
                "index.json", bytes: Array("{\"y\":2}".utf8), contentType: "application/json", maxAge: 60,
                replacing: stale, conditional: true)
        }
        try await target.putMetadataFile(
            "index.json", bytes: Array("{\"z\":3}".utf8), contentType: "application/json", maxAge: 60,
            replacing: current, conditional: true)
        #expect(try await moto.get("\(Self.bucket)/race/index.json") == Array("{\"z\":3}".utf8))
    }

    @Test func badTargetsFailWithClearMessagesAndNoSecrets() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        // Missing credentials: exit 2, naming the variables.
        let unset = try await gifpackCLI(
            ["publish", "--from", builds.v1, "--to", "s3://b/p", "--endpoint", "http://127.0.0.1:9"],
            environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(unset.status == 2 && unset.error.contains("AWS_ACCESS_KEY_ID") && unset.error.contains("AWS_SECRET_ACCESS_KEY"), "\(unset.error)")
        // Unreachable endpoint: exit 1.
        let port = try LoopbackPort.free()
        let moto = try await MotoServer.start(strictAuth: true)
        defer { moto.stop() }
        let unreachable = try await gifpackCLI(
            ["publish", "--from", builds.v1, "--to", "s3://b/p", "--endpoint", "http://127.0.0.1:\(port)"],
            environment: moto.credentials)
        #expect(unreachable.status == 1 && unreachable.error.contains("127.0.0.1:\(port)"), "\(unreachable.error)")

        // Wrong credentials against a moto that verifies signatures: a wrong secret, an unknown key.
        let wrongSecret = "wrong-secret-\(UUID().uuidString)"
        for wrong in [["AWS_SECRET_ACCESS_KEY": wrongSecret], ["AWS_ACCESS_KEY_ID": "AKIAUNKNOWN000000000"]] {
            let refused = try await Self.publish(builds.v1, moto: moto, environment: wrong)
            #expect(refused.status == 4, "\(refused.status) \(refused.error)")
            #expect(refused.error.contains("AWS_ACCESS_KEY_ID") && refused.error.contains("AWS_SECRET_ACCESS_KEY"), "\(refused.error)")
            for text in [refused.output, refused.error] {
                #expect(
                    !text.contains(wrongSecret) && !text.contains(moto.credentials["AWS_SECRET_ACCESS_KEY"]!)
                        && !text.contains("AKIAUNKNOWN000000000") && !text.contains(moto.credentials["AWS_ACCESS_KEY_ID"]!))
            }
        }
        #expect(!unreachable.error.contains(moto.credentials["AWS_SECRET_ACCESS_KEY"]!))

        // A bucket that does not exist: exit 1, named.
        let noBucket = try await Self.publish(builds.v1, moto: moto)
        #expect(noBucket.status == 1 && noBucket.error.contains("bucket \(Self.bucket) does not exist"), "\(noBucket.error)")
        #expect(!moto.requests.contains { $0.hasPrefix("PUT ") })
    }
}

import Foundation
import GifPackClient
import GifPackHTTP
import GifPackTransport
import GifPackZstd
import Glibc
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures
import GifPackIndexReader

/// An app's daily check costs a 304 and no body (install, `cat --index`,
/// the library), and the index travels compressed (`index.json.zst`, preferred, falling back to
/// `index.json`; a copy that does not decode or verify is an error); the build writes the copy,
/// `publish` writes it after the index and repairs a stale one, on directory and S3 targets.
@Suite("Delivery bytes: conditional and compressed index fetches", .tags(.nginx, .s3), .timeLimit(.minutes(10)))
struct DeliveryBytesTests {
    /// The built `gifpack` with the test's environment plus `extra` (never an inherited crash hook).
    static func gifpack(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "GIFPACK_CRASH_AT")
        environment.merge(extra) { $1 }
        return try await run(productPath("gifpack"), arguments, environment: environment)
    }

    static func now(_ date: Date) -> [String: String] { ["GIFPACK_NOW": String(Int(date.timeIntervalSince1970))] }

    static func bodies(_ lines: [NginxServer.LogLine]) -> Int64 { lines.reduce(0) { $0 + $1.bodyBytes } }

    /// The manifest bytes and the tree of the installed cache: what "changes nothing" compares.
    static func state(_ cache: String) throws -> [String] {
        try treeSnapshot(cache) + [sha256Hex(try fileBytes("\(cache)/\(InstallManifest.fileName)"))]
    }

    // MARK: - Conditional fetches

    @Test func anUnchangedInstallCostsA304AndNoBodyAndChangesNothing() async throws {
        let signed = try SignedDist(count: 12)
        defer { signed.server.stop() }
        try await signed.build()
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let cache = signed.workspace.file("app-cache")
        let env = Self.now(trustT0.addingTimeInterval(3600))
        let install = ["install", "--index", url, "--cache", cache, "--trusted-key", signed.key.publicPath]

        var mark = try await nginx.mark()
        let first = try await Self.gifpack(install, environment: env)
        #expect(first.status == 0, "\(first.error)")
        let firstLines = try await nginx.log(since: mark)
        // The compressed copy, never the plain index, then the signature named by the plain bytes' hash.
        #expect(firstLines.first?.path == "/index.json.zst" && firstLines.first?.status == 200, "\(firstLines)")
        #expect(!firstLines.contains { $0.path == "/index.json" }, "\(firstLines)")
        let manifest = try #require(try InstallManifest.read(cacheDirectory: cache))
        #expect(
            manifest.index?.validators.url == url + ".zst" && manifest.index?.validators.etag != nil
                && manifest.index?.validators.lastModified != nil && manifest.index?.signedBy == signed.key.secret.publicKey.keyIDText,
            "\(String(describing: manifest.index))")
        let before = try Self.state(cache)

        // The daily check: one conditional request, a 304, no body, no signature fetch; nothing written.
        mark = try await nginx.mark()
        let again = try await Self.gifpack(install, environment: env)
        #expect(again.status == 0 && again.output.contains("already installed"), "\(again.output) \(again.error)")
        let lines = try await nginx.log(since: mark)
        #expect(lines.map(\.path) == ["/index.json.zst"] && lines.first?.status == 304, "\(lines)")
        #expect(lines.first?.ifNoneMatch == manifest.index?.validators.etag)
        #expect(Self.bodies(lines) == 0 && Self.bodies(lines) <= 1024)
        #expect(try Self.state(cache) == before, "a 304 changes nothing")

        // A 304 does not outlive the installed index's expiry (a frozen mirror): refused as expired, cache untouched.
        let late = try await Self.gifpack(install, environment: Self.now(trustT0.addingTimeInterval(11 * 86400)))
        #expect(late.status == 1 && late.error.contains("expired"), "\(late.error)")
        #expect(try Self.state(cache) == before)

        // A new index: fetched whole (compressed), installed, and the next check is a 304 again.
        try signed.changeAGIF(seed: 4242)
        try await signed.build(at: trustT0.addingTimeInterval(60))
        // nginx's ETag is mtime and size: the new copy may have the old size and the same second.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: signed.indexPath + ".zst")
        mark = try await nginx.mark()
        let upgrade = try await Self.gifpack(install, environment: env)
        #expect(upgrade.status == 0 && !upgrade.output.contains("already installed"), "\(upgrade.output) \(upgrade.error)")
        let upgradeLines = try await nginx.log(since: mark)
        #expect(upgradeLines.first?.path == "/index.json.zst" && upgradeLines.first?.status == 200, "\(upgradeLines)")
        mark = try await nginx.mark()
        #expect(try await Self.gifpack(install, environment: env).status == 0)
        let recheck = try await nginx.log(since: mark)
        #expect(recheck.map(\.status) == [304] && Self.bodies(recheck) == 0, "\(recheck)")
    }

    @Test func theLibraryLoadsConditionallyWithEitherValidatorAndEitherTransport() async throws {
        let built = try await ClientBuiltDist.make(count: 10)
        defer { built.server.stop() }
        let nginx = try await NginxServer.start(root: built.dist)
        defer { nginx.stop() }
        let source = PackIndexSource(nginx.baseURL + "/index.json")
        let curl = try HTTPClient(maxConnections: 2)
        defer { curl.shutdown() }
        for transport in [URLSessionTransport() as any HTTPTransport, curl] {
            guard case .modified(let fetched) = try await source.load(ifChangedFrom: nil, client: transport) else {
                Issue.record("an unconditional load answered not modified")
                continue
            }
            #expect(fetched.bytes == Data(try fileBytes(built.indexPath)), "the plain bytes, decompressed")
            #expect(fetched.wireBytes == Int64(try fileBytes(built.indexPath + ".zst").count))
            let validators = try #require(fetched.validators)
            #expect(validators.url == nginx.baseURL + "/index.json.zst" && validators.etag != nil && validators.lastModified != nil)
            let mark = try await nginx.mark()
            for condition in [
                validators, IndexValidators(url: validators.url, etag: validators.etag, lastModified: nil),
                IndexValidators(url: validators.url, etag: nil, lastModified: validators.lastModified)
            ] {
                guard case .notModified = try await source.load(ifChangedFrom: condition, client: transport) else {
                    Issue.record("\(transport): not a 304 for \(condition)")
                    continue
                }
            }
            let lines = try await nginx.log(since: mark)
            #expect(lines.map(\.status) == [304, 304, 304] && Self.bodies(lines) == 0, "\(transport): \(lines)")
            #expect(lines.map(\.ifNoneMatch) == [validators.etag, validators.etag, nil])
            // Validators of another file are not sent to this one: a whole load.
            let foreign = IndexValidators(url: nginx.baseURL + "/index.json", etag: validators.etag, lastModified: validators.lastModified)
            guard case .modified = try await source.load(ifChangedFrom: foreign, client: transport) else {
                Issue.record("validators of index.json were sent to index.json.zst")
                continue
            }
        }
        // A changed index (new bytes, new mtime): modified, with new validators.
        guard case .modified(let current) = try await source.load(ifChangedFrom: nil) else {
            Issue.record("an unconditional load answered not modified")
            return
        }
        let old = try #require(current.validators)
        try FileSystem.writeAtomically(try IndexCompression.compress(try fileBytes(built.indexPath) + [0x0A]), to: built.indexPath + ".zst")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(120)], ofItemAtPath: built.indexPath + ".zst")
        guard case .modified(let changed) = try await source.load(ifChangedFrom: old) else {
            Issue.record("a changed index answered not modified")
            return
        }
        let plainCount = try fileBytes(built.indexPath).count
        #expect(changed.validators != old && changed.bytes.count == plainCount + 1)
    }

    @Test func catIndexRevalidatesWithA304AndNoBody() async throws {
        let built = try await ClientBuiltDist.make(count: 10)
        defer { built.server.stop() }
        let nginx = try await NginxServer.start(root: built.dist)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let pack = try #require(try built.index().packs.first)
        let id = try #require(pack.exercises.first { $0.gif != nil }?.id)
        let directory = built.workspace.file("lazy")
        var mark = try await nginx.mark()
        let first = try await runCapturing(productPath("gifpack"), ["cat", "--index", url, "--cache", directory, id])
        #expect(first.status == 0 && first.output == built.served(id), "\(String(decoding: first.error, as: UTF8.self))")
        #expect(try await nginx.log(since: mark).first?.path == "/index.json.zst")
        let slot = try #require(DirectoryListing.names("\(directory)/indexes").first)
        let stored = String(decoding: try fileBytes("\(directory)/indexes/\(slot)").prefix(2048), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false)
        #expect(
            stored.first == "gifpack-lazy-index 4" && stored.count > 7 && !stored[5].isEmpty && stored[6] == "\(url).zst",
            "the Last-Modified date and the file it belongs to are stored: \(stored.prefix(7))")

        // A day later (the stored index older than its max age): one conditional request, a 304, no body.
        let dayAgo = Date().addingTimeInterval(-86400)
        try FileManager.default.setAttributes([.modificationDate: dayAgo], ofItemAtPath: "\(directory)/indexes/\(slot)")
        let before = try fileBytes("\(directory)/indexes/\(slot)")
        mark = try await nginx.mark()
        let again = try await runCapturing(productPath("gifpack"), ["cat", "--index", url, "--cache", directory, id])
        #expect(again.status == 0 && again.output == built.served(id))
        let lines = try await nginx.log(since: mark)
        #expect(lines.map(\.path) == ["/index.json.zst"] && lines.map(\.status) == [304], "\(lines)")
        #expect(lines.first?.ifNoneMatch != nil && Self.bodies(lines) == 0)
        #expect(try fileBytes("\(directory)/indexes/\(slot)") == before, "a 304 changes nothing but the validation time")
    }

    @Test func bothTransportsSendTheConditionsAndHandBackThe304() async throws {
        let built = try await ClientBuiltDist.make(count: 4)
        defer { built.server.stop() }
        let nginx = try await NginxServer.start(root: built.dist)
        defer { nginx.stop() }
        let curl = try HTTPClient(maxConnections: 2)
        defer { curl.shutdown() }
        let url = nginx.baseURL + "/index.json"
        for transport in [URLSessionTransport() as any HTTPTransport, curl] {
            // A first plain GET (which a URL cache would keep), then conditional ones: each 304 is the server's.
            let whole = try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 24)
            #expect(whole.head.status == 200)
            let etag = try #require(whole.head.headers["etag"])
            let date = try #require(whole.head.headers["last-modified"])
            let conditions: [HTTPHeaders] = [["If-None-Match": etag], ["If-Modified-Since": date]]
            for headers in conditions {
                let answer = try await transport.data(HTTPRequest(url: url, headers: headers), maxBytes: 1 << 24)
                #expect(answer.head.status == 304 && answer.body.isEmpty, "\(transport): \(answer.head.status)")
            }
            // A stale ETag: the whole body again, never a cached 304.
            let stale = try await transport.data(HTTPRequest(url: url, headers: ["If-None-Match": "\"stale\""]), maxBytes: 1 << 24)
            #expect(stale.head.status == 200 && stale.body == whole.body)
        }
    }

    // MARK: - The compressed copy

    @Test func theBuildWritesADeterministicCopyThatDecodesToTheIndex() async throws {
        let built = try await ClientBuiltDist.make(count: 12)
        defer { built.server.stop() }
        let plain = try fileBytes(built.indexPath)
        let copy = try fileBytes(built.indexPath + ".zst")
        #expect(try CompressedIndex.decode(copy, maxBytes: PackLimits.standard.maxIndexBytes) == plain)
        #expect(copy.count * 4 < plain.count, "\(copy.count) of \(plain.count)")
        // libzstd agrees, and the frame declares its size.
        let zstd = try await runCapturing("/usr/bin/zstd", ["-d", "-c", built.indexPath + ".zst"])
        #expect(zstd.status == 0 && zstd.output == plain)
        #expect(try copy.withUnsafeBytes { try ZstdDecoder.frameHeader($0)?.contentSize } == plain.count)
        // Byte-identical across runs: compressing again, and a build killed before the copy repaired by the next.
        #expect(try IndexCompression.compress(plain) == copy)
        try FileSystem.writeAtomically(Array(copy.prefix(copy.count / 2)), to: built.indexPath + ".zst")
        try await built.build(fetch: "  refresh_after: 7d")
        let (plainAfter, copyAfter) = (try fileBytes(built.indexPath), try fileBytes(built.indexPath + ".zst"))
        #expect(plainAfter == plain && copyAfter == copy)
    }

    @Test func withoutACopyTheClientReadsIndexJSONAndAnUndecodableOrUnverifiedCopyIsAnError() async throws {
        let signed = try SignedDist(count: 8)
        defer { signed.server.stop() }
        try await signed.build()
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let copyPath = signed.indexPath + ".zst"
        let goodCopy = try fileBytes(copyPath)
        let trust = IndexTrust(keys: [signed.key.secret.publicKey], now: trustT0.addingTimeInterval(3600))

        // An older publisher's target: no copy; index.json is read, and the next check is conditional on it.
        try FileManager.default.removeItem(atPath: copyPath)
        let cache = signed.workspace.file("app-cache")
        var installer = PackInstaller(cacheDirectory: cache)
        installer.trust = trust
        var mark = try await nginx.mark()
        let first = try await installer.install(from: PackIndexSource(url))
        #expect(!first.isUnchanged)
        let lines = try await nginx.log(since: mark)
        #expect(Array(lines.map(\.path).prefix(2)) == ["/index.json.zst", "/index.json"] && lines.first?.status == 404, "\(lines)")
        mark = try await nginx.mark()
        #expect(try await installer.install(from: PackIndexSource(url)).isUnchanged)
        let check = try await nginx.log(since: mark)
        #expect(check.map(\.path) == ["/index.json.zst", "/index.json"] && check.map(\.status) == [404, 304], "\(check)")
        #expect(Self.bodies(check) <= 1024, "nginx's 404 page and no index: \(Self.bodies(check)) bytes")
        let before = try Self.state(cache)

        // A copy that does not decode: an error naming it, not index.json instead; nothing changes.
        try FileSystem.writeAtomically(Array(goodCopy.prefix(goodCopy.count - 9)), to: copyPath)
        await #expect {
            _ = try await installer.install(from: PackIndexSource(url))
        } throws: { error in
            guard case PackClientError.unreadable(let location, let detail) = error else { return false }
            return location.hasSuffix("index.json.zst") && detail.contains("not a compressed copy")
        }
        // A copy of other bytes than the signed ones (a stale or forged copy): refused, never replaced by index.json.
        var tampered = try fileBytes(signed.indexPath)
        tampered[tampered.firstIndex(of: UInt8(ascii: "0"))!] = UInt8(ascii: "9")
        try FileSystem.writeAtomically(try IndexCompression.compress(tampered), to: copyPath)
        await #expect {
            _ = try await installer.install(from: PackIndexSource(url))
        } throws: { error in
            guard case PackClientError.untrusted(let refusal) = error else { return false }
            return refusal.reason == .badSignature || refusal.reason == .unsigned
        }
        #expect(try Self.state(cache) == before)
        // The lazy cache says the same.
        await #expect(throws: PackClientError.self) {
            _ = try await LazyGIFCache(directory: signed.workspace.file("lazy"), indexURL: url, trust: trust).index()
        }
    }

    // MARK: - Publishing the copy

    /// The index a client meets at a directory target, through the copy it prefers: the copy's
    /// plain bytes must have a signature published under their hash that verifies them.
    static func servedIndexVerifies(_ target: String, key: TestSigningKey) throws -> String? {
        let copy = try fileBytes("\(target)/index.json.zst")
        let plain = try CompressedIndex.decode(copy, maxBytes: PackLimits.standard.maxIndexBytes)
        let signaturePath = "\(target)/\(SignatureLocation.key(forIndexSHA256: sha256Hex(plain)))"
        guard FileManager.default.fileExists(atPath: signaturePath) else { return "no signature under the copy's hash" }
        let signature = try MinisignSignature(text: String(decoding: try fileBytes(signaturePath), as: UTF8.self))
        do { try key.secret.publicKey.verify(signature, of: plain) } catch { return "the copy's signature does not verify: \(error)" }
        return nil
    }

    @Test func publishWritesTheCopyAfterTheIndexAndRepairsItAfterAKill() async throws {
        let builds = try await PublishBuilds.make(count: 8)
        defer { builds.built.server.stop() }
        let target = builds.workspace.file("www")
        let published = try await Self.gifpack(["publish", "--from", builds.v2, "--to", target])
        #expect(published.status == 0, "\(published.error)")
        let said = published.output.split(separator: "\n").map(String.init)
        let order = ["write: signatures/", "write: index.json (", "write: index.json.zst", "write: index.json.minisig"].map { prefix in
            said.firstIndex { $0.hasPrefix(prefix) } ?? -1
        }
        #expect(!order.contains(-1) && order == order.sorted(), "\(said)")
        #expect(try CompressedIndex.decode(try fileBytes("\(target)/index.json.zst"), maxBytes: 1 << 26) == (try fileBytes("\(target)/index.json")))
        #expect(try Self.servedIndexVerifies(target, key: builds.key) == nil)

        // Killed between the index and its copy, or right after the copy: whatever the copy holds has
        // its signature; the next publish (of anything) makes the copy decode to the live index.
        var sequence = 10
        for point in [PublishCrashPoint.afterIndex, .afterCompressedIndex] {
            sequence += 1
            let next = try await PublishAttackTests.signedVariant(builds, "variant-\(sequence)", sequence: sequence)
            let killed = try await Self.gifpack(["publish", "--from", next, "--to", target], environment: ["GIFPACK_CRASH_AT": point.rawValue])
            #expect(killedBySIGKILL(killed), "\(point): \(killed.status) \(killed.error)")
            #expect(try Self.servedIndexVerifies(target, key: builds.key) == nil, "\(point)")
            let stale = try CompressedIndex.decode(try fileBytes("\(target)/index.json.zst"), maxBytes: 1 << 26) != (try fileBytes("\(target)/index.json"))
            #expect(stale == (point == .afterIndex), "\(point)")
            let again = try await Self.gifpack(["publish", "--from", next, "--to", target])
            #expect(again.status == 0, "\(again.error)")
            #expect(again.output.contains("write: index.json.zst") == stale, "\(again.output)")
            #expect(try CompressedIndex.decode(try fileBytes("\(target)/index.json.zst"), maxBytes: 1 << 26) == (try fileBytes("\(target)/index.json")))
        }

        // --from without a matching copy (a build killed before writing it): made at publish time.
        let killedBuild = try await PublishAttackTests.signedVariant(builds, "variant-99", sequence: 99)
        #expect(
            try CompressedIndex.decode(try fileBytes("\(killedBuild)/index.json.zst"), maxBytes: 1 << 26) != (try fileBytes("\(killedBuild)/index.json")),
            "the variant's copy is v2's: stale")
        let repaired = try await Self.gifpack(["publish", "--from", killedBuild, "--to", target])
        #expect(repaired.status == 0, "\(repaired.error)")
        #expect(try CompressedIndex.decode(try fileBytes("\(target)/index.json.zst"), maxBytes: 1 << 26) == (try fileBytes("\(killedBuild)/index.json")))

        // --public-url reads the copy back as clients do.
        let nginx = try await NginxServer.start(root: target)
        defer { nginx.stop() }
        let mark = try await nginx.mark()
        let checked = try await Self.gifpack(["publish", "--from", killedBuild, "--to", target, "--public-url", nginx.baseURL + "/"])
        #expect(checked.status == 0, "\(checked.output) \(checked.error)")
        #expect(try await nginx.log(since: mark).contains { $0.path == "/index.json.zst" && $0.status == 200 })
    }

    @Test func aDirectoryTargetNeverKeepsTheValidatorsOfTheFileItReplaces() async throws {
        // nginx's ETag and Last-Modified are the size and the mtime in whole seconds: an index.json
        // (or its copy) replaced by one of the same size within the same second would be answered
        // 304 to a client holding the old one. The replaced file's time here is ahead of the clock.
        let workspace = try TemporaryDirectory()
        let target = DirectoryTarget(root: workspace.path)
        for key in ["index.json", CompressedIndex.key] {
            try FileSystem.writeAtomically(Array("{\"a\": 1}\n".utf8), to: workspace.file(key))
            let ahead = Date().addingTimeInterval(100)
            try FileManager.default.setAttributes([.modificationDate: ahead], ofItemAtPath: workspace.file(key))
            try await target.putMetadataFile(
                key, bytes: Array("{\"a\": 2}\n".utf8), contentType: "application/json", maxAge: 60,
                replacing: nil, conditional: false)
            let after = try #require(try FileManager.default.attributesOfItem(atPath: workspace.file(key))[.modificationDate] as? Date)
            #expect(after.timeIntervalSince1970.rounded(.down) > ahead.timeIntervalSince1970.rounded(.down), "\(key): \(after) after \(ahead)")
        }
    }

    @Test func s3PublishWritesAndRepairsTheCopy() async throws {
        let builds = try await PublishBuilds.make(count: 6)
        defer { builds.built.server.stop() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        try await moto.createBucket(PublishS3Tests.bucket)
        let to = "s3://\(PublishS3Tests.bucket)/gifpack"
        func publish(_ from: String, crash: PublishCrashPoint? = nil) async throws -> ProcessResult {
            try await Self.gifpack(
                ["publish", "--from", from, "--to", to, "--endpoint", moto.endpoint],
                environment: moto.credentials.merging(crash.map { ["GIFPACK_CRASH_AT": $0.rawValue] } ?? [:]) { $1 })
        }
        func served() async throws -> (index: [UInt8]?, copy: [UInt8]?) {
            (try await moto.get("\(PublishS3Tests.bucket)/gifpack/index.json"), try await moto.get("\(PublishS3Tests.bucket)/gifpack/index.json.zst"))
        }
        let first = try await publish(builds.v2)
        #expect(first.status == 0, "\(first.error)")
        var now = try await served()
        #expect(try CompressedIndex.decode(try #require(now.copy), maxBytes: 1 << 26) == now.index)
        let head = try await moto.head("\(PublishS3Tests.bucket)/gifpack/index.json.zst")
        #expect(head["cache-control"] == "public, max-age=60", "\(head)")
        let requests = moto.requests
        let indexPut = requests.lastIndex { $0 == "PUT /\(PublishS3Tests.bucket)/gifpack/index.json" } ?? -1
        let copyPut = requests.lastIndex { $0 == "PUT /\(PublishS3Tests.bucket)/gifpack/index.json.zst" } ?? -1
        #expect(indexPut >= 0 && copyPut > indexPut, "the copy after the index")

        let next = try await PublishAttackTests.signedVariant(builds, "s3-variant", sequence: 50)
        let killed = try await publish(next, crash: .afterIndex)
        #expect(killedBySIGKILL(killed), "\(killed.status) \(killed.error)")
        now = try await served()
        let stalePlain = try CompressedIndex.decode(try #require(now.copy), maxBytes: 1 << 26)
        #expect(stalePlain != now.index, "killed before the copy: it still holds the previous index")
        #expect(
            try await moto.get("\(PublishS3Tests.bucket)/gifpack/\(SignatureLocation.key(forIndexSHA256: sha256Hex(stalePlain)))") != nil,
            "whose signature is still there")
        let again = try await publish(next)
        #expect(again.status == 0 && again.output.contains("write: index.json.zst"), "\(again.output) \(again.error)")
        now = try await served()
        #expect(try CompressedIndex.decode(try #require(now.copy), maxBytes: 1 << 26) == now.index)
    }
}

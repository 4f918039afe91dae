import ExerciseDBFixture
import Foundation
import GifPackClient
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

@Suite("Trusted delivery: verifying clients", .tags(.nginx), .timeLimit(.minutes(5)))
struct TrustedInstallTests {
    func trust(_ keys: [TestSigningKey], at now: Date = trustT0.addingTimeInterval(3600)) -> IndexTrust {
        IndexTrust(keys: keys.map(\.secret.publicKey), now: now)
    }

    func install(_ index: String, cache: String, trust: IndexTrust) async throws(PackClientError) -> InstallReport {
        var installer = PackInstaller(cacheDirectory: cache)
        installer.trust = trust
        do {
            return try await installer.install(from: PackIndexSource(index))
        } catch let error as PackClientError {
            throw error
        } catch {
            throw .unreadable(location: index, detail: "not a PackClientError: \(error)")
        }
    }

    /// Installs and expects the refusal `reason`, with the cache exactly as before.
    func expectRefusal(
        _ reason: IndexRefusal.Reason, index: String, cache: String, trust: IndexTrust,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try treeSnapshot(cache)
        do {
            _ = try await install(index, cache: cache, trust: trust)
            Issue.record("installed an index that should be refused (\(reason.rawValue))", sourceLocation: sourceLocation)
        } catch {
            guard case .untrusted(let refusal) = error else {
                Issue.record("refused for another reason: \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(refusal.reason == reason, "\(refusal)", sourceLocation: sourceLocation)
        }
        #expect(try treeSnapshot(cache) == before, "the cache changed", sourceLocation: sourceLocation)
    }

    @Test func eachRefusalHasItsReasonAndLeavesTheCacheUntouched() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        let cache = signed.workspace.file("app/gifs")
        let trusted = trust([signed.key])

        try await signed.build()
        let first = try await install(signed.indexPath, cache: cache, trust: trusted)
        #expect(try InstallManifest.read(cacheDirectory: cache)?.indexSequence == 1 && first.generation == 1)
        let old = try signed.copyIndex(to: "index-seq1.json")

        try signed.changeAGIF(seed: 71)
        try await signed.build()
        _ = try await install(signed.indexPath, cache: cache, trust: trusted)
        #expect(try InstallManifest.read(cacheDirectory: cache)?.indexSequence == 2)

        // Rollback: a validly signed, unexpired, older index.
        try await expectRefusal(.rollback, index: old, cache: cache, trust: trusted)
        // Freeze: the current index, once expired (10 days after signing).
        try await expectRefusal(.expired, index: signed.indexPath, cache: cache, trust: trust([signed.key], at: trustT0.addingTimeInterval(11 * 86400)))
        // Unsigned.
        try await expectRefusal(.unsigned, index: try signed.copyIndex(to: "index-unsigned.json", signed: false), cache: cache, trust: trusted)
        // The index changed after signing (one byte of the generator).
        let tampered = try signed.copyIndex(to: "index-tampered.json") { bytes in
            let at = bytes.firstIndex(of: UInt8(ascii: "0"))!
            bytes[at] = UInt8(ascii: "9")
        }
        try await expectRefusal(.badSignature, index: tampered, cache: cache, trust: trusted)
        // Signed by a key nobody trusts.
        let stranger = try TestSigningKey(workspace: signed.workspace, name: "stranger")
        try await expectRefusal(.unknownKey, index: signed.indexPath, cache: cache, trust: trust([stranger]))
        // A signature file that is not one.
        let garbled = try signed.copyIndex(to: "index-garbled.json")
        try Data("untrusted comment: x\nnot a signature\n".utf8).write(to: URL(fileURLWithPath: garbled + ".minisig"))
        try await expectRefusal(.malformedSignature, index: garbled, cache: cache, trust: trusted)

        // A pack changed after signing: its hash is inside the signed bytes.
        try signed.changeAGIF(seed: 72)
        try await signed.build()
        let pack = try #require(try readIndex(signed.indexPath).packs.first)
        let packPath = "\(signed.dist)/\(pack.file)"
        var bytes = try fileBytes(packPath)
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: packPath))
        let before = try treeSnapshot(cache)
        await #expect { _ = try await install(signed.indexPath, cache: cache, trust: trusted) } throws: { error in
            guard case PackClientError.rejected(let rejection) = error else { return false }
            return rejection.reason == .packChecksum
        }
        #expect(try treeSnapshot(cache) == before)
        // Without keys nothing about signatures is checked: the old index installs (as before this change),
        // and the rollback floor is carried forward, neither lowered nor erased.
        let unchecked = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(old))
        #expect(unchecked.generation == 3)
        #expect(try InstallManifest.read(cacheDirectory: cache)?.indexSequence == 2)
    }

    /// After a trusted install of sequence 2, installs without keys — of the current
    /// index in another layout, the same again (unchanged), an older index, packs already downloaded —
    /// each carry the rollback floor forward, so the replayed sequence 1 is still refused.
    @Test func installsWithoutKeysCarryTheRollbackFloorForward() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        try await signed.build()
        let v1 = try signed.copyIndex(to: "index-seq1.json")
        try signed.changeAGIF(seed: 74)
        try await signed.build()
        #expect(try readIndex(signed.indexPath).sequence == 2)
        let cdn = try ClientStaticFileServer(root: signed.dist)
        defer { cdn.stop() }
        let url = cdn.baseURL + "/index.json"
        let cache = signed.workspace.file("app/gifs")
        func floor() throws -> Int? { try InstallManifest.read(cacheDirectory: cache)?.indexSequence }
        _ = try await install(url, cache: cache, trust: trust([signed.key]))
        #expect(try floor() == 2)

        let byHash = PackInstaller(cacheDirectory: cache, layout: .byHash)
        let otherLayout = try await byHash.install(from: PackIndexSource(url))
        #expect(!otherLayout.isUnchanged && otherLayout.generation == 2)
        #expect(try floor() == 2, "an install without keys in another layout")
        #expect(try await byHash.install(from: PackIndexSource(url), packs: try readIndex(signed.indexPath).packs.map(\.name)).isUnchanged)
        #expect(try floor() == 2, "an unchanged install without keys")
        #expect(try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(v1)).generation == 3)
        #expect(try floor() == 2, "an install without keys of the older index")
        let pack = try #require(try readIndex(signed.indexPath).packs.first)
        let downloaded = try await PackDownloader(directory: signed.workspace.file("downloads")).fetch(pack, from: PackIndexSource(url))
        #expect(try await PackInstaller(cacheDirectory: cache).install([downloaded]).generation == 4)
        #expect(try floor() == 2, "an install of packs already downloaded")

        // The old signed index replayed at the URL: refused, the cache as it was.
        try signed.replay(v1)
        try await expectRefusal(.rollback, index: url, cache: cache, trust: trust([signed.key]))
    }

    /// A store that hides missing keys (GetObject allowed, ListBucket not)
    /// answers 403 for the hash-named signature a target signed with stock minisign, or published by
    /// an older version, lacks. That is "not there", as for `index.json.zst`: install and the lazy
    /// cache fall back to `index.json.minisig`. Without either, the refusal is `unsigned` and says so.
    @Test func a403ForTheHashNamedSignatureFallsBackToTheSignatureBesideTheIndex() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        try await signed.build()
        // A build signs index.json.minisig alone (hash-named signatures are made by publish).
        #expect(!FileManager.default.fileExists(atPath: "\(signed.dist)/signatures"))
        var options = NginxServer.Options(root: signed.dist)
        options.missingIsForbidden = true
        let nginx = try await NginxServer.start(options)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"
        let cache = signed.workspace.file("app/gifs")
        let trusted = trust([signed.key])

        let mark = try await nginx.mark()
        let report = try await install(url, cache: cache, trust: trusted)
        #expect(!report.isUnchanged)
        #expect(try InstallManifest.read(cacheDirectory: cache)?.indexSequence == 1)
        let signatures = try await nginx.log(since: mark).filter { $0.path.hasSuffix(".minisig") }
            .map { "\($0.path.hasPrefix("/signatures/") ? "hash-named" : $0.path) \($0.status)" }
        #expect(signatures == ["hash-named 403", "/index.json.minisig 200"])
        let lazy = LazyGIFCache(directory: signed.workspace.file("lazy"), indexURL: url, indexMaxAge: .zero, trust: trusted)
        #expect(try await lazy.index().sequence == 1)

        // Neither signature: unsigned, naming both and the statuses that mean "not there".
        try FileManager.default.removeItem(atPath: signed.indexPath + ".minisig")
        await #expect {
            _ = try await PackIndexSource(url).load(trust: trusted)
        } throws: { error in
            guard case PackClientError.untrusted(let refusal) = error else { return false }
            return refusal.reason == .unsigned && refusal.detail.contains("signatures/<its sha256>.minisig")
                && refusal.detail.contains("index.json.minisig") && refusal.detail.contains("403")
        }
    }

    @Test func twoTrustedKeysLetARotatedIndexInstall() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        let next = try TestSigningKey(workspace: signed.workspace, name: "next")
        let cache = signed.workspace.file("app/gifs")
        let both = trust([signed.key, next])

        try await signed.build()
        _ = try await install(signed.indexPath, cache: cache, trust: both)

        // The publisher moves to the next key; the sequence goes on.
        try signed.changeAGIF(seed: 73)
        try await signed.build(with: next)
        #expect(try readIndex(signed.indexPath).sequence == 2)
        let report = try await install(signed.indexPath, cache: cache, trust: both)
        #expect(report.generation == 2 && !report.isUnchanged)
        #expect(try InstallManifest.read(cacheDirectory: cache)?.indexSequence == 2)
        // An app that only knows the old key refuses it.
        try await expectRefusal(.unknownKey, index: signed.indexPath, cache: cache, trust: trust([signed.key]))
    }

    /// A key file named by the operator may be a symbolic link (a Kubernetes secret mount is a chain of
    /// them: `key.pub -> ..data/key.pub`, `..data -> ..2026_11_27…`): it is the operator's own choice of
    /// file, so the link is resolved before the regular-file rule applies; a FIFO behind it is still refused.
    @Test func aTrustedKeyFileMayBeASymbolicLinkButNotAFIFO() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        try await signed.build()
        let secrets = signed.workspace.file("secret-mount")
        let versioned = "\(secrets)/..2026_11_27_08_00_00.1"
        try FileManager.default.createDirectory(atPath: versioned, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: signed.key.publicPath, toPath: "\(versioned)/gifpack.pub")
        try FileManager.default.createSymbolicLink(atPath: "\(secrets)/..data", withDestinationPath: "..2026_11_27_08_00_00.1")
        try FileManager.default.createSymbolicLink(atPath: "\(secrets)/gifpack.pub", withDestinationPath: "..data/gifpack.pub")
        let trust = try IndexTrust(keyFiles: ["\(secrets)/gifpack.pub"], now: trustT0.addingTimeInterval(60))
        #expect(trust.keys == [signed.key.secret.publicKey])
        let report = try await install(signed.indexPath, cache: signed.workspace.file("gifs"), trust: trust)
        #expect(report.exercises > 0)

        let fifo = signed.workspace.file("fifo.pub")
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: signed.workspace.file("link-to-fifo.pub"), withDestinationPath: fifo)
        for path in [fifo, signed.workspace.file("link-to-fifo.pub")] {
            #expect { _ = try IndexTrust(keyFiles: [path]) } throws: { error in
                "\(error)".contains("not a regular file (a FIFO)")
            }
        }
    }

    @Test func installVerifyAndCatTakeTrustedKeysOnTheCommandLine() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        try await signed.build()
        let cdn = try ClientStaticFileServer(root: signed.dist)
        defer { cdn.stop() }
        let gifpack = productPath("gifpack")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_NOW"] = String(Int(trustT0.timeIntervalSince1970) + 60)
        let cache = signed.workspace.file("cli/gifs")

        let installed = try await run(
            gifpack,
            [
                "install", "--index", cdn.baseURL + "/index.json", "--cache", cache,
                "--trusted-key", signed.key.publicPath
            ], environment: environment)
        #expect(installed.status == 0, "\(installed.error)")
        #expect(cdn.requests.map(\.path).contains("/index.json.minisig"))

        let verified = try await run(gifpack, ["verify", signed.dist, "--trusted-key", signed.key.publicPath], environment: environment)
        #expect(verified.status == 0, "\(verified.output)\(verified.error)")
        let id = try #require(try readIndex(signed.indexPath).packs.first?.exercises.first { $0.gif != nil }?.id)
        let cat = try await run(gifpack, ["cat", signed.indexPath, id, "--trusted-key", signed.key.publicPath], environment: environment)
        #expect(cat.status == 0 && cat.output.hasPrefix("GIF"))

        // Expired by the clock: every command refuses with the reason code; the cache stays.
        var later = environment
        later["GIFPACK_NOW"] = "2099-01-01T00:00:00Z"
        let before = try treeSnapshot(cache)
        let refused = try await run(
            gifpack,
            [
                "install", "--index", cdn.baseURL + "/index.json", "--cache", cache,
                "--trusted-key", signed.key.publicPath
            ], environment: later)
        #expect(refused.status == 1 && refused.error.contains("expired"), "\(refused.error)")
        #expect(try treeSnapshot(cache) == before)
        let verifyLater = try await run(gifpack, ["verify", signed.dist, "--trusted-key", signed.key.publicPath], environment: later)
        #expect(verifyLater.status == 1 && verifyLater.error.contains("expired"))
        let catLater = try await run(gifpack, ["cat", signed.indexPath, id, "--trusted-key", signed.key.publicPath], environment: later)
        #expect(catLater.status == 1 && catLater.error.contains("expired") && catLater.output.isEmpty)

        // Unsigned over HTTP: the signature is simply not there.
        try FileManager.default.removeItem(atPath: signed.indexPath + ".minisig")
        let unsigned = try await run(
            gifpack,
            [
                "install", "--index", cdn.baseURL + "/index.json", "--cache", cache,
                "--trusted-key", signed.key.publicPath
            ], environment: environment)
        #expect(unsigned.status == 1 && unsigned.error.contains("unsigned"), "\(unsigned.error)")
        // A bad key file is a usage error.
        let badKey = try await run(
            gifpack,
            [
                "install", "--index", signed.indexPath, "--cache", cache,
                "--trusted-key", signed.key.secretPath
            ], environment: environment)
        #expect(badKey.status == 2 && badKey.error.contains(signed.key.secretPath), "\(badKey.error)")
        #expect(!badKey.error.contains(signed.key.secretText))
    }
}

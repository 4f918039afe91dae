import Foundation
@testable import GifPackClient
@testable import GifPackFormat
import GifPackHTTP
import GifPackSystem
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader
import GifPackSigning

/// Errors an app can show: every error of the client's closure reads as
/// its own message through `localizedDescription` (what alerts and logs use), and a failed load is
/// classified for the cell (``GIFLoadFailure``) from real failures: a refused connection, a 404
/// and a 403 from nginx, an index signed by another key, a full disk, a cancelled call.
@Suite(.tags(.nginx), .ownThread, .timeLimit(.minutes(5))) struct GIFLoadFailureTests {
    /// One value of every error type of the client's closure (an app meets them as a
    /// `GIFLoaderError`'s underlying error, or from a transport of its own).
    static func everyErrorType() throws -> [any Error] {
        var errors: [any Error] = [
            HTTPError.connectFailed("Connection refused"),
            HTTPError.truncated(expected: 10, received: 4),
            PackClientError.cacheLocked(path: "/var/mobile/gifs"),
            PackClientError.transfer(url: "https://cdn.example.com/packs/a.tar.zst", .timedOut("too slow")),
            PackRejection(.parentDirectory, pack: "core", entry: "../x", detail: "a path leaves the cache"),
            IndexRefusal(.badSignature, index: "https://cdn.example.com/index.json", detail: "the signature does not match"),
            GIFLoaderError.cacheFolderRelative("Caches/gifs"),
            IndexError.malformed("packs: expected an array"),
            PackReadError.notRegularFile(path: "/tmp/pack", kind: "a FIFO"),
            CompressedIndex.Refusal("not a zstd frame"),
            PackCatalogStream.Failure(reason: "expected a string", offset: 12),
            MinisignError.malformed("not base64"),
            JSONParseError(.syntax("a value"), at: 3),
            CanonicalJSON.EncodingError.nonFiniteNumber(.infinity),
            FileSystemError.io(operation: "mkdir", path: "/tmp/x", errno: 28)
        ]
        do { _ = try IndexTimestamp.now(environment: ["GIFPACK_NOW": "yesterday-ish"]) } catch { errors.append(error) }
        do { _ = try IndentedJSONEncoder.encode(1.5) } catch { errors.append(error) }
        return errors
    }

    @Test(.computes) func everyPublicErrorReadsAsItsOwnMessageInLocalizedDescription() throws {
        let errors = try Self.everyErrorType()
        #expect(errors.count == 17)
        for error in errors {
            let message = String(describing: error)
            #expect(!message.isEmpty)
            #expect(error.localizedDescription == message, "\(type(of: error))")
            #expect((error as? any LocalizedError)?.errorDescription == message, "\(type(of: error))")
            #expect(!error.localizedDescription.contains("The operation could not be completed"))
        }
        // What an alert showed for a cache locked by another install.
        #expect(PackClientError.cacheLocked(path: "/var/mobile/gifs").localizedDescription == "another install is running on /var/mobile/gifs")
    }

    @Test("a refused connection is offline, for both transports", arguments: TransportTests.Kind.allCases)
    func aRefusedConnectionIsOffline(kind: TransportTests.Kind) async throws {
        let port = try LoopbackPort.free()  // closed again: nothing listens there
        let work = try TemporaryDirectory()
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let loader = try GIFLoader(
            indexURL: URL(string: "http://127.0.0.1:\(port)/index.json")!,
            cacheFolder: URL(fileURLWithPath: work.file("gifs")), transport: transport)
        let error = try await Self.failure { _ = try await loader.gif(for: "0001") }
        #expect(GIFLoadFailure(error) == .offline, "\(error)")
        guard case .transfer(_, .connectFailed)? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(error)"); return }
    }

    @Test func aMissingOrForbiddenIndexIsServerRefused() async throws {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.file("private"), withIntermediateDirectories: true)
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        for (path, status) in [("/index.json", 404), ("/private/", 403)] {
            let loader = try GIFLoader(
                indexURL: URL(string: nginx.baseURL + path)!,
                cacheFolder: URL(fileURLWithPath: root.file("gifs-\(status)")))
            let error = try await Self.failure { _ = try await loader.gif(for: "0001") }
            #expect(GIFLoadFailure(error) == .serverRefused, "\(error)")
            #expect((error as? GIFLoaderError)?.packClientError?.answeredStatus == status, "\(error)")
            let refreshError = try await Self.failure { _ = try await loader.refresh() }
            #expect(GIFLoadFailure(refreshError) == .serverRefused, "\(refreshError)")
        }
    }

    @Test func anIndexSignedByAnotherKeyIsNotTrusted() async throws {
        let signed = try SignedDist(count: 4)
        defer { signed.server.stop() }
        try await signed.build(at: Date())
        let nginx = try await NginxServer.start(root: signed.dist)
        defer { nginx.stop() }
        let other = try TestSigningKey(workspace: signed.workspace, name: "other")
        let loader = try GIFLoader(
            indexURL: URL(string: nginx.baseURL + "/index.json")!,
            cacheFolder: URL(fileURLWithPath: signed.workspace.file("gifs")),
            trustedKeys: [TrustedKey(other.secret.publicKey)])
        let error = try await Self.failure { _ = try await loader.refresh() }
        #expect(GIFLoadFailure(error) == .notTrusted, "\(error)")
        guard case .untrusted(let refusal)? = (error as? GIFLoaderError)?.packClientError else { Issue.record("\(error)"); return }
        #expect(refusal.reason == .unknownKey)
        let id = try #require(signed.server.catalog.exercises.map(\.id).sorted().first)
        let gifError = try await Self.failure { _ = try await loader.gif(for: id) }
        #expect(GIFLoadFailure(gifError) == .notTrusted, "\(gifError)")
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullDiskIsNoSpace() async throws {
        let served = try await GIFLoaderTests.Served.make(count: 20)
        defer { served.stop() }
        try await onASmallTmpfs(served.dists.workspace.file("small"), size: "48k") { mount in
            let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: URL(fileURLWithPath: "\(mount)/gifs"))
            let error = try await Self.failure { _ = try await loader.refresh() }
            #expect(GIFLoadFailure(error) == .noSpace, "\(error)")
            await loader.settle()  // nothing of the loader's left open on the tmpfs
        }
    }

    @Test func aCancelledLoadIsCancelled() async throws {
        let served = try await GIFLoaderTests.Served.make(count: 8, limitRate: 1024)
        defer { served.stop() }
        let curl = try HTTPClient(maxConnections: 2)
        defer { curl.shutdown() }
        let loader = try GIFLoader(indexURL: served.indexURL, cacheFolder: served.folder("gifs"), transport: curl)
        _ = try await loader.lazy.index()
        let id = try #require(served.distinct.first)
        let load = testTask { try await loader.gif(for: id) }
        // The GIF's range request is in curl (nginx drips it at 1 KB/s) when the caller cancels.
        try await waitUntil { curl.statistics.currentlyInFlight == 1 }
        load.cancel()
        let error = try await Self.failure { _ = try await load.value }
        #expect(GIFLoadFailure(error) == .cancelled, "\(error)")
        #expect(error is CancellationError, "\(error)")
    }

    /// The error `body` throws; fails the test when it returns.
    static func failure(_ body: () async throws -> Void) async throws -> any Error {
        do {
            try await body()
        } catch {
            return error
        }
        struct Returned: Error, CustomStringConvertible { var description: String { "the call returned instead of failing" } }
        throw Returned()
    }
}

import ExerciseDBFixture
import Foundation
import GifPackHTTP
import GifPackTransport
import Glibc
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// Both ``HTTPTransport``s — libcurl's `HTTPClient` (the command-line tool's) and
/// ``URLSessionTransport`` (the client library's default) — run the same cases against nginx and
/// the fixture server: a whole body, a range (206), a 304 to `If-None-Match`, error statuses
/// (404, 403, 500), the byte cap, a server ignoring `Range`, a resume, truncation, a reset, the
/// total time limit and bad URLs. Each case expects the same answer from both.
@Suite(.tags(.nginx), .ownThread, .timeLimit(.minutes(5))) struct TransportTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case curl, urlSession

        var testDescription: String { rawValue }

        func make() throws -> any HTTPTransport {
            switch self {
            case .curl: try HTTPClient(maxConnections: 4)
            case .urlSession: URLSessionTransport(maxConnections: 4)
            }
        }

        func finish(_ transport: any HTTPTransport) {
            (transport as? HTTPClient)?.shutdown()
        }
    }

    /// A served directory: `pack.bin` (300 000 pseudo-random bytes), `sub/` (a directory without
    /// an index: nginx answers 403), nothing at `missing.bin` (404).
    static func site() throws -> (TemporaryDirectory, [UInt8]) {
        let directory = try TemporaryDirectory()
        var generator = SplitMix64(seed: 27)
        let bytes = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("pack.bin")))
        try FileManager.default.createDirectory(atPath: directory.file("sub"), withIntermediateDirectories: true)
        return (directory, bytes)
    }

    @Test(arguments: Kind.allCases) func wholeBodyToMemoryAndToAFile(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let url = nginx.baseURL + "/pack.bin"

        let response = try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 20)
        #expect(response.head.status == 200)
        #expect(response.body == bytes)
        #expect(response.head.headers["etag"] != nil)
        #expect(response.head.headers["Content-Length"] == "300000")

        let work = try TemporaryDirectory()
        let path = work.file("whole")
        try Data(repeating: 0xEE, count: 400_000).write(to: URL(fileURLWithPath: path))
        let download = try await transport.download(HTTPRequest(url: url), to: path, maxBytes: 300_000)
        #expect(download.head.status == 200)
        #expect(download.bytesWritten == 300_000)
        #expect(download.sha256 == sha256Hex(bytes))
        #expect(download.prefix == Array(bytes.prefix(HTTPDownload.prefixLength)))
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path))) == bytes, "the file was truncated, then written")
    }

    @Test(arguments: Kind.allCases) func aRangeIs206AndLandsAtItsOffset(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let path = work.file("sparse")
        try Data(repeating: 0xEE, count: 300_000).write(to: URL(fileURLWithPath: path))

        var request = HTTPRequest(url: nginx.baseURL + "/pack.bin")
        request.byteRange = 100_000...149_999
        let download = try await transport.download(request, to: path, atOffset: 100_000, maxBytes: 50_000)
        #expect(download.head.status == 206)
        #expect(HTTPContentRange(download.head.headers["content-range"] ?? "") == HTTPContentRange(range: 100_000...149_999, completeLength: 300_000))
        #expect(download.bytesWritten == 50_000)
        #expect(download.sha256 == sha256Hex(Array(bytes[100_000..<150_000])))
        let file = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(file.count == 300_000, "nothing truncated")
        #expect(Array(file[100_000..<150_000]) == Array(bytes[100_000..<150_000]))
        #expect(file[..<100_000].allSatisfy { $0 == 0xEE } && file[150_000...].allSatisfy { $0 == 0xEE })
        let log = try await nginx.log()
        #expect(log.last?.range == "bytes=100000-149999")
    }

    @Test(arguments: Kind.allCases) func ifNoneMatchGets304FromTheServer(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let url = nginx.baseURL + "/pack.bin"
        let first = try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 20)
        let etag = try #require(first.head.headers["etag"])

        let unchanged = try await transport.data(HTTPRequest(url: url, headers: ["If-None-Match": etag]), maxBytes: 1 << 20)
        #expect(unchanged.head.status == 304)
        #expect(unchanged.body.isEmpty)
        let changed = try await transport.data(HTTPRequest(url: url, headers: ["If-None-Match": "\"other\""]), maxBytes: 1 << 20)
        #expect(changed.head.status == 200)
        #expect(changed.body == bytes)
        let log = try await nginx.log()
        #expect(log.map(\.status) == [200, 304, 200], "every answer came from nginx, none from a cache")
        #expect(log[1].ifNoneMatch == etag)
    }

    @Test(arguments: Kind.allCases) func errorStatusesAreResponsesWithTheirBodies(kind: Kind) async throws {
        let (root, _) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let server = try Self.fixture(count: 4)
        defer { server.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }

        let missing = try await transport.data(HTTPRequest(url: nginx.baseURL + "/missing.bin"), maxBytes: 1 << 16)
        #expect(missing.head.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains("404 Not Found"))
        let forbidden = try await transport.data(HTTPRequest(url: nginx.baseURL + "/sub/"), maxBytes: 1 << 16)
        #expect(forbidden.head.status == 403)
        #expect(String(decoding: forbidden.body, as: UTF8.self).contains("403 Forbidden"))

        let id = server.catalog.exercises[0].id
        server.schedule([.status(500)], forExercise: id)
        let work = try TemporaryDirectory()
        let failed = try await transport.download(HTTPRequest(url: HTTPClientTests.imageURL(server, id)), to: work.file("gif"), maxBytes: 1 << 20)
        #expect(failed.head.status == 500)
        #expect(failed.bytesWritten > 0, "the error body is handed back for the caller to judge")
    }

    /// nginx answers a directory without its slash with a 301 to it: followed only when asked.
    @Test(arguments: Kind.allCases) func aRedirectIsFollowedOnlyWhenAsked(kind: Kind) async throws {
        let (root, _) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }

        let kept = try await transport.data(HTTPRequest(url: nginx.baseURL + "/sub"), maxBytes: 1 << 16)
        #expect(kept.head.status == 301)
        #expect(kept.head.headers["location"]?.hasSuffix("/sub/") == true)
        var following = HTTPRequest(url: nginx.baseURL + "/sub", headers: ["If-None-Match": "\"same-origin\""])
        following.followRedirects = true
        let followed = try await transport.data(following, maxBytes: 1 << 16)
        #expect(followed.head.status == 403, "the redirect's target, a directory without an index")
        let log = try await nginx.log()
        #expect(log.map(\.path) == ["/sub", "/sub", "/sub/"])
        #expect(log.last?.ifNoneMatch == "\"same-origin\"", "headers go along within the origin")
    }

    /// A redirect to another origin (another port) is requested without the request's headers: an
    /// `If-Match` that would make nginx answer 412 never reaches it.
    @Test(arguments: Kind.allCases) func aRedirectToAnotherOriginDropsTheHeaders(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let redirector = try ClientStaticFileServer()
        defer { redirector.stop() }
        redirector.redirect(path: "/elsewhere", to: nginx.baseURL + "/pack.bin")
        let transport = try kind.make()
        defer { kind.finish(transport) }

        var request = HTTPRequest(url: redirector.baseURL + "/elsewhere", headers: ["If-Match": "\"not-the-etag\""])
        request.followRedirects = true
        let answer = try await transport.data(request, maxBytes: 1 << 20)
        #expect(answer.head.status == 200)
        #expect(answer.body == bytes)
        #expect(redirector.requests.map(\.path) == ["/elsewhere"])
        let log = try await nginx.log()
        #expect(log.count == 1 && log.first?.ifMatch == nil, "\(log)")

        // The same header straight to nginx: it is sent, and refused.
        let direct = try await transport.data(
            HTTPRequest(url: nginx.baseURL + "/pack.bin", headers: ["If-Match": "\"not-the-etag\""]),
            maxBytes: 1 << 20)
        #expect(direct.head.status == 412)
    }

    @Test(arguments: Kind.allCases) func aBodyOverTheCapIsRefused(kind: Kind) async throws {
        let (root, _) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let url = nginx.baseURL + "/pack.bin"
        let work = try TemporaryDirectory()

        #expect(await HTTPClientTests.error { try await transport.data(HTTPRequest(url: url), maxBytes: 299_999) } == .bodyTooLarge(limit: 299_999))
        let path = work.file("capped")
        #expect(await HTTPClientTests.error { try await transport.download(HTTPRequest(url: url), to: path, maxBytes: 1000) } == .bodyTooLarge(limit: 1000))
        #expect(Self.fileSize(path) <= 1000, "nothing past the cap reaches the file")

        // A range answer longer than asked for is stopped by the cap too.
        var request = HTTPRequest(url: url)
        request.byteRange = 0...9999
        #expect(await HTTPClientTests.error { try await transport.download(request, to: path, atOffset: 0, maxBytes: 5000) } == .bodyTooLarge(limit: 5000))
    }

    @Test(arguments: Kind.allCases) func aServerIgnoringRangesCostsNoBodyAndCannotResume(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path, ignoreRanges: true)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let url = nginx.baseURL + "/pack.bin"
        let work = try TemporaryDirectory()

        var ranged = HTTPRequest(url: url)
        ranged.byteRange = 1000...1999
        let path = work.file("sparse")
        let answer = try await transport.download(ranged, to: path, atOffset: 1000, maxBytes: 1000)
        #expect(answer.head.status == 200)
        #expect(answer.bytesWritten == 0, "only a 206 delivers a body")

        let partial = work.file("partial")
        try Data(bytes.prefix(10)).write(to: URL(fileURLWithPath: partial))
        var resumed = HTTPRequest(url: url)
        resumed.resumeFrom = 10
        let error = await HTTPClientTests.error { try await transport.download(resumed, to: partial, maxBytes: 1 << 20) }
        guard case .transport(let code, _) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(code == HTTPError.rangeNotHonouredCode)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: partial))) == Array(bytes.prefix(10)), "the partial file keeps its bytes")
    }

    @Test(arguments: Kind.allCases) func aResumeAppends(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let partial = work.file("partial")
        try Data(bytes.prefix(123_456)).write(to: URL(fileURLWithPath: partial))
        var request = HTTPRequest(url: nginx.baseURL + "/pack.bin")
        request.resumeFrom = 123_456
        let download = try await transport.download(request, to: partial, maxBytes: 300_000 - 123_456)
        #expect(download.head.status == 206)
        #expect(download.bytesWritten == 300_000 - 123_456)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: partial))) == bytes)
    }

    @Test(arguments: Kind.allCases) func truncationResetTimeoutAndBadURLsAreErrors(kind: Kind) async throws {
        let server = try Self.fixture(count: 4) { $0.gifDimension = 48 }
        defer { server.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()

        let truncatedID = server.catalog.exercises[1].id
        let size = try #require(server.catalog.gifBytes(id: truncatedID)?.count)
        server.schedule([.truncatedBody], forExercise: truncatedID)
        let truncated = await HTTPClientTests.error {
            try await transport.download(HTTPRequest(url: HTTPClientTests.imageURL(server, truncatedID)), to: work.file("t"), maxBytes: 1 << 20)
        }
        #expect(truncated == .truncated(expected: Int64(size), received: Int64(size / 2)))

        let resetID = server.catalog.exercises[2].id
        server.setDefaultFault(.connectionReset, forExercise: resetID)
        let reset = await HTTPClientTests.error { try await transport.data(HTTPRequest(url: HTTPClientTests.imageURL(server, resetID)), maxBytes: 1 << 20) }
        #expect(reset?.reason == "connection-reset", "got \(String(describing: reset))")

        let slowID = server.catalog.exercises[0].id
        server.schedule([.slowBody(bytesPerSecond: 100)], forExercise: slowID)
        let slow = await HTTPClientTests.error {
            try await transport.data(
                HTTPRequest(
                    url: HTTPClientTests.imageURL(server, slowID),
                    timeouts: HTTPTimeouts(total: .milliseconds(400), lowSpeedBytesPerSecond: 0)),
                maxBytes: 1 << 20)
        }
        // Causes, not durations: the body would take minutes at 100 B/s, so the total limit ends it,
        // and its message says so.
        let total = HTTPTimeouts(total: .milliseconds(400), lowSpeedBytesPerSecond: 0)
        #expect(slow == .timedOut(total.totalMessage(for: HTTPClientTests.imageURL(server, slowID))), "got \(String(describing: slow))")

        // curl's low-speed limit: under 2000 B/s for a whole second (the body would take minutes at 10 B/s).
        server.schedule([.slowBody(bytesPerSecond: 10)], forExercise: slowID)
        let crawl = await HTTPClientTests.error {
            try await transport.data(
                HTTPRequest(
                    url: HTTPClientTests.imageURL(server, slowID),
                    timeouts: HTTPTimeouts(lowSpeedBytesPerSecond: 2000, lowSpeedWindow: .seconds(1))),
                maxBytes: 1 << 20)
        }
        guard case .timedOut(let message) = crawl else {
            Issue.record("expected timedOut, got \(String(describing: crawl))")
            return
        }
        #expect(message.contains("too slow"), "\(message)")

        for url in ["not a url", "ftp://127.0.0.1/file", "http://"] {
            #expect(await HTTPClientTests.error { try await transport.data(HTTPRequest(url: url), maxBytes: 100) } == .invalidURL(url))
        }
        let refusing = try RefusingPort()
        let closedURL = "http://127.0.0.1:\(refusing.port)/exercises"
        let refused = await HTTPClientTests.error { try await transport.data(HTTPRequest(url: closedURL), maxBytes: 100) }
        #expect(refused?.reason == "connect-failed", "got \(String(describing: refused))")
    }

    /// A server compressing on the fly. Both transports ask for a file's own
    /// bytes with `Accept-Encoding: identity`, so such a server sends them as they are; one that
    /// compresses anyway is refused by both with the same error; JSON asked for with
    /// `acceptCompressedBody` comes back decoded from both.
    @Test(arguments: Kind.allCases) func bothAskForAFilesOwnBytesAndRefuseThemCompressedAnyway(kind: Kind) async throws {
        let (root, bytes) = try Self.site()
        let json = Array(String(repeating: "{\"id\": \"0001\"}\n", count: 500).utf8)
        try Data(json).write(to: URL(fileURLWithPath: root.file("index.json")))
        let gzipped = try await run("/usr/bin/gzip", ["-k", "-n", root.file("pack.bin"), root.file("index.json")])
        try #require(gzipped.status == 0, "\(gzipped.error)")
        let server = try ClientStaticFileServer(root: root.path)
        defer { server.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let url = server.baseURL + "/pack.bin"

        server.gzip(.unlessRefused)
        let download = try await transport.download(HTTPRequest(url: url), to: work.file("pack"), maxBytes: 1 << 20)
        #expect(download.head.status == 200 && download.head.headers["content-encoding"] == nil)
        #expect(download.sha256 == sha256Hex(bytes))
        #expect(try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 20).body == bytes)
        #expect(server.requests.map(\.acceptEncoding) == ["identity", "identity"])
        let decoded = try await transport.data(HTTPRequest(url: server.baseURL + "/index.json", acceptCompressedBody: true), maxBytes: 1 << 20)
        #expect(decoded.head.status == 200 && decoded.body == json)
        #expect(server.requests.last?.acceptEncoding?.contains("gzip") == true)

        server.gzip(.always)
        let refused = await HTTPClientTests.error { try await transport.download(HTTPRequest(url: url), to: work.file("again"), maxBytes: 1 << 20) }
        guard case .transport(HTTPError.unrequestedEncodingCode, let message)? = refused else {
            Issue.record("expected the unrequested-encoding refusal, got \(String(describing: refused))")
            return
        }
        #expect(message.contains("Content-Encoding: gzip") && message.contains("turn off on-the-fly compression"), "\(message)")
        #expect(await HTTPClientTests.error { try await transport.data(HTTPRequest(url: url), maxBytes: 1 << 20) } == refused)
        #expect(Self.fileSize(work.file("again")) == 0)
    }

    /// A server that accepts and never answers, and one that drips just above the low-speed rate.
    /// Both transports end the silent request after one low-speed window
    /// counted from the request on — the low-speed limit is the cause, not a session timer — and the
    /// drip at the deadline set for the call; each message says which limit and what to check.
    /// Windows of one second keep this fast; nothing here measures durations.
    @Test(arguments: Kind.allCases) func aSilentServerEndsAfterOneWindowAndADripAtTheDeadline(kind: Kind) async throws {
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let silentServer = try ClientStaticFileServer()
        defer { silentServer.stop() }
        silentServer.neverAnswer(path: "/silent")
        let silentURL = silentServer.baseURL + "/silent"
        let window = HTTPTimeouts(total: .zero, lowSpeedBytesPerSecond: 1024, lowSpeedWindow: .seconds(1))
        let quiet = await HTTPClientTests.error { try await transport.data(HTTPRequest(url: silentURL, timeouts: window), maxBytes: 1 << 20) }
        #expect(quiet == .timedOut(window.lowSpeedMessage(for: silentURL)), "\(String(describing: quiet))")
        #expect(window.lowSpeedMessage(for: silentURL).contains("too slow") && window.lowSpeedMessage(for: silentURL).contains("check that"))

        let server = try Self.fixture(count: 2) {
            $0.gifDimension = 96; $0.framesRange = 4...5
        }
        defer { server.stop() }
        let id = server.catalog.exercises[0].id
        let size = try #require(server.catalog.gifBytes(id: id, resolution: 180)?.count)
        try #require(size > 4000, "a GIF that takes several seconds at 1000 B/s: \(size) bytes")
        server.schedule([.slowBody(bytesPerSecond: 1000)], forExercise: id)
        let url = HTTPClientTests.imageURL(server, id)
        let drip = HTTPTimeouts(total: .zero, lowSpeedBytesPerSecond: 200, lowSpeedWindow: .seconds(1), deadline: .seconds(1))
        let dripped = await HTTPClientTests.error { try await transport.data(HTTPRequest(url: url, timeouts: drip), maxBytes: 1 << 20) }
        #expect(dripped == .timedOut(drip.deadlineMessage(for: url)), "\(String(describing: dripped))")
        #expect(drip.deadlineMessage(for: url).contains("deadline of 1 s passed") && drip.deadlineMessage(for: url).contains("check that"))

        // A call whose deadline has passed sends nothing more. The server records the dripped
        // answer when its write fails, after the client gave up: waited for, so it is not counted
        // as the late call's. A sentinel request for another GIF, sent after the late call, is
        // recorded before anything is concluded.
        try await waitUntil { server.stats.requestsByExercise[id] == 1 }
        let spent = drip.startingCall()
        try await waitUntil(every: .milliseconds(50)) { TimeSpan.now() > spent.callEnds! }
        let late = await HTTPClientTests.error { try await transport.data(HTTPRequest(url: url, timeouts: spent), maxBytes: 1 << 20) }
        #expect(late == .timedOut(drip.deadlineMessage(for: url)))
        let other = server.catalog.exercises[1].id
        _ = try await transport.data(HTTPRequest(url: HTTPClientTests.imageURL(server, other)), maxBytes: 1 << 20)
        try await waitUntil { server.stats.requestsByExercise[other] == 1 }
        #expect(server.stats.requestsByExercise[id] == 1, "the late call sent a request")
    }

    @Test(arguments: Kind.allCases) func aCancelledTaskEndsItsTransfer(kind: Kind) async throws {
        let server = try Self.fixture(count: 2) { $0.gifDimension = 64 }
        defer { server.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let id = server.catalog.exercises[0].id
        server.schedule([.slowBody(bytesPerSecond: 50)], forExercise: id)
        let task = testTask { () -> HTTPError? in
            await HTTPClientTests.error { try await transport.data(HTTPRequest(url: HTTPClientTests.imageURL(server, id)), maxBytes: 1 << 20) }
        }
        try await waitUntil { server.stats.inFlight == 1 }
        task.cancel()
        // The cause, not a duration: the body would take minutes at 50 B/s, so `.cancelled` is the
        // cancellation ending it.
        #expect(await task.value == .cancelled)
    }

    // MARK: Support

    /// The fixture server without an API key (image requests then need no header).
    static func fixture(count: Int, _ configure: (inout FixtureConfiguration) -> Void = { _ in }) throws -> FixtureServer {
        try startFixture(count: count, apiKey: nil) { configuration in
            configuration.gifDimension = 24
            configuration.framesRange = 2...3
            configure(&configuration)
        }
    }


    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

}

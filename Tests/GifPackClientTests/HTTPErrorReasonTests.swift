import ExerciseDBFixture
import Foundation
@testable import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

/// What a failed transfer says: the true reason, and every header value but the secret ones.
@Suite(.timeLimit(.minutes(3))) struct HTTPErrorReasonTests {
    @Test func hugeResponseHeadersAreReportedAsSuchNotAsOutOfMemory() async throws {
        let (server, client) = try HTTPClientTests.start()
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[0].id
        server.setDefaultFault(.hugeHeader(bytes: 400_000), forExercise: id)
        let error = await HTTPClientTests.error {
            try await client.download(
                HTTPRequest(url: HTTPClientTests.imageURL(server, id)), to: directory.file("gif"),
                maxBytes: 1 << 20)
        }
        let failure = try #require(error)
        #expect(failure.reason == "headers-too-large", "\(failure)")
        #expect(String(describing: failure).contains("response headers too large"), "\(failure)")
        #expect(!String(describing: failure).lowercased().contains("out of memory"), "\(failure)")
    }

    @Test func theHostHeaderIsShownOnlyTheKeyIsRedacted() async throws {
        let client = try HTTPClient()
        defer { client.shutdown() }
        // Nothing listens on port 1: curl's message names the host, which is also the Host header's value.
        let request = HTTPRequest(
            url: "http://127.0.0.1:1/exercises",
            headers: ["X-RapidAPI-Key": "127.0.0.1-secret", "X-RapidAPI-Host": "127.0.0.1"])
        let error = await HTTPClientTests.error { try await client.data(request, maxBytes: 1 << 16) }
        let failure = try #require(error)
        #expect(failure.reason == "connect-failed", "\(failure)")
        #expect(String(describing: failure).contains("127.0.0.1"), "the host is shown: \(failure)")
        #expect(!String(describing: failure).contains("127.0.0.1-secret"))
    }

    /// The one rule for credentials in URLs: every URL in a text loses its
    /// `user:password@`, an `@` elsewhere (a path, an e-mail address without a scheme) stays, and a
    /// connection refused for a URL with credentials is described without them.
    @Test func urlCredentialsAreDroppedFromEveryURLInAText() async throws {
        let cases: [(String, String)] = [
            (
                "cannot read http://me:s3cret@cdn.example.com/g/index.json: HTTP status 404",
                "cannot read http://cdn.example.com/g/index.json: HTTP status 404"
            ),
            ("https://token@host:8443?x=1 and HTTP://u:p@w@Host/a@b#c", "https://host:8443?x=1 and HTTP://Host/a@b#c"),
            ("\"http://a:b@h\" (http://c@h2)", "\"http://h\" (http://h2)"),
            ("mail me@example.com, see http://example.com/@user", "mail me@example.com, see http://example.com/@user"),
            ("no url at all: a:b@c", "no url at all: a:b@c")
        ]
        for (text, expected) in cases { #expect(URLCredentials.redacted(text) == expected, "\(text)") }
        let client = try HTTPClient(maxConnections: 1)
        defer { client.shutdown() }
        // Nothing listens on port 1.
        let failed = await HTTPClientTests.error {
            _ = try await client.data(HTTPRequest(url: "http://reader:s3cret@127.0.0.1:1/index.json"), maxBytes: 1024)
        }
        let failure = try #require(failed)
        #expect(!String(describing: failure).contains("s3cret") && !String(describing: failure).contains("reader"), "\(failure)")
    }
}

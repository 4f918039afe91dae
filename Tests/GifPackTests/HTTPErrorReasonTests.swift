import ExerciseDBFixture
import Foundation
@testable import GifPackHTTP
import Testing

/// What a failed transfer says: the true reason, and every header value but the secret ones.
@Suite(.timeLimit(.minutes(3))) struct HTTPErrorReasonTests {
    @Test func hugeResponseHeadersAreReportedAsSuchNotAsOutOfMemory() async throws {
        let (server, client) = try HTTPClientTests.start()
        defer { client.shutdown(); server.stop() }
        let directory = try TemporaryDirectory()
        let id = server.catalog.exercises[0].id
        server.setDefaultFault(.hugeHeader(bytes: 400_000), forExercise: id)
        let error = await HTTPClientTests.error {
            try await client.download(HTTPRequest(url: HTTPClientTests.imageURL(server, id)), to: directory.file("gif"),
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
        let request = HTTPRequest(url: "http://127.0.0.1:1/exercises",
                                  headers: ["X-RapidAPI-Key": "127.0.0.1-secret", "X-RapidAPI-Host": "127.0.0.1"])
        let error = await HTTPClientTests.error { try await client.data(request, maxBytes: 1 << 16) }
        let failure = try #require(error)
        #expect(failure.reason == "connect-failed", "\(failure)")
        #expect(String(describing: failure).contains("127.0.0.1"), "the host is shown: \(failure)")
        #expect(!String(describing: failure).contains("127.0.0.1-secret"))
    }
}

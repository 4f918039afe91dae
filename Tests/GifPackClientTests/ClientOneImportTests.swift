// An app's one import. This file imports GifPackClient and nothing else of the
// package, and names the transport's types an app uses: it compiles only while GifPackClient
// re-exports GifPackTransport (Exports.swift). The trusted key is the
// client's own TrustedKey, so the signing and format modules are not re-exported.
import Foundation
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

@Suite("Client: one import", .computes, .timeLimit(.minutes(1)))
struct ClientOneImportTests {
    @Test("import GifPackClient alone gives the transport, its limits and errors, the trusted key and the rendition choice")
    func oneImportGivesTheTransport() {
        let transport: any HTTPTransport = URLSessionTransport()
        var timeouts = HTTPTimeouts(total: .seconds(60), lowSpeedWindow: .milliseconds(20_000))
        timeouts.connect = .seconds(5)
        let request = HTTPRequest(url: "https://example.invalid/index.json", timeouts: timeouts)
        let failure: HTTPError = .cancelled
        #expect(transport is URLSessionTransport)
        #expect(request.timeouts.lowSpeedWindow == .seconds(20))
        #expect(TimeSpan.seconds(1.5) == .milliseconds(1500))
        #expect("\(failure)".isEmpty == false)
        #expect(throws: GIFLoaderError.self) { try TrustedKey(text: "not a key") }
        #expect(RenditionChoice.pixelSize(points: 120, scale: 3) == 360)
    }
}

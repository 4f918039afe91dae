import Foundation
import GifPackHTTP
import GifPackSystem
import GifPackTransport
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers

/// A transfer's buffers go when it ends: both transports free the transfer —
/// and so everything it holds, its request and its body bytes — once the call returned, whatever
/// its low-speed window (30 s by default) still has to run. Before, `URLSessionTransport`'s
/// low-speed timer held each transfer strongly until its window ran out: loading 500 GIFs by range
/// kept 500 transfers' buffers, 126–180 MB, for 30 s.
///
/// The transfer is private to its transport; what it holds is seen through the request's
/// ``HTTPBodyProgress``, an object only the transfer keeps once the caller dropped its request:
/// it is freed exactly when the transfer is.
@Suite(.tags(.nginx), .ownThread, .timeLimit(.minutes(3))) struct TransferReleaseTests {
    /// A weak reference, read from the polling wait.
    final class Weak: @unchecked Sendable {  // @unchecked: written once before it is shared, then only read.
        weak var object: HTTPBodyProgress?
        init(_ object: HTTPBodyProgress) { self.object = object }
    }

    enum Call: String, CaseIterable, Sendable {
        /// A range into memory (`data`).
        case rangeToMemory
        /// A range into a file at its offset (`download(_:to:atOffset:maxBytes:)`, the loader's frame fetch).
        case rangeToFile
    }

    /// Runs one range request with a progress object the test keeps only weakly.
    static func rangeRequest(_ call: Call, transport: any HTTPTransport, url: String, file: String) async throws -> (status: Int, bytes: Int64, progress: Weak) {
        let chunks = Locked<Int64>(0)
        let progress = HTTPBodyProgress(chunks: { bytes in chunks.withLock { $0 += bytes } })
        let kept = Weak(progress)
        var request = HTTPRequest(url: url)  // the default limits: a 30 s low-speed window
        request.byteRange = 10_000...209_999
        request.bodyProgress = progress
        switch call {
        case .rangeToMemory:
            let response = try await transport.data(request, maxBytes: 1 << 20)
            return (response.head.status, Int64(response.body.count), kept)
        case .rangeToFile:
            let download = try await transport.download(request, to: file, atOffset: 10_000, maxBytes: 200_000)
            #expect(chunks.withLock { $0 } == download.bytesWritten)
            return (download.head.status, download.bytesWritten, kept)
        }
    }

    @Test(
        "a range transfer is freed when it ends, long before its 30 s low-speed window runs out",
        arguments: TransportTests.Kind.allCases, Call.allCases)
    func aTransferIsFreedWhenItEnds(kind: TransportTests.Kind, call: Call) async throws {
        let (root, _) = try TransportTests.site()
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let answer = try await Self.rangeRequest(call, transport: transport, url: nginx.baseURL + "/pack.bin", file: work.file("frame"))
        #expect(answer.status == 206)
        #expect(answer.bytes == 200_000)
        // The request ended: nothing of it may outlive it (its window has 30 s to run). Freed at once
        // here; the bound leaves room for a loaded machine's scheduling, a third of the window.
        try await waitUntil(deadline: .seconds(10)) { answer.progress.object == nil }
    }
}

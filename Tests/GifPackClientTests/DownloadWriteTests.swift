import ExerciseDBFixture
import Foundation
import GifPackHTTP
import Testing
@testable import GifPackDistFixtures
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackTransport

/// `URLSessionTransport` writes a download in pieces of up to 256 KiB (the
/// 16 KiB chunks FoundationNetworking hands its delegate, held and written together), and what it
/// reports stays true: every `wrote` is in the file when it is reported, the `chunks` add up to
/// the body, and a download that ends early — cancelled, or cut by the server — has every byte it
/// took in its file, so a resume starts after them. Both transports, against nginx and the fixture
/// server.
@Suite("Transport: a download's writes, progress and early ends, against nginx", .tags(.nginx), .serialized, .ownThread, .timeLimit(.minutes(3)))
struct DownloadWriteTests {
    /// What a request's `HTTPBodyProgress` was told, and whether each `wrote` was in the file then.
    final class Reports: @unchecked Sendable {  // @unchecked: the fields are guarded by `lock`.
        private let lock = NSLock()
        private let path: String
        private var wrote: [Int64] = []
        private var chunks: [Int64] = []
        private var notInFile: [String] = []

        init(path: String) { self.path = path }

        var progress: HTTPBodyProgress {
            HTTPBodyProgress(
                written: { [self] bytes in
                    let size = Int64(TransportTests.fileSize(path))
                    lock.withLock {
                        wrote.append(bytes)
                        if size < bytes { notInFile.append("wrote(\(bytes)) with \(size) bytes in the file") }
                    }
                }, chunks: { [self] bytes in lock.withLock { chunks.append(bytes) } })
        }

        var written: [Int64] { lock.withLock { wrote } }
        var chunkSizes: [Int64] { lock.withLock { chunks } }
        var missing: [String] { lock.withLock { notInFile } }
    }

    /// A served directory holding `big.bin`: `size` pseudo-random bytes.
    static func site(size: Int) throws -> (TemporaryDirectory, [UInt8]) {
        let directory = try TemporaryDirectory()
        var generator = SplitMix64(seed: 34)
        let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("big.bin")))
        return (directory, bytes)
    }

    @Test(
        "a whole download: each wrote is in the file, the chunks add up to the body; URLSession writes 16 KiB chunks together",
        arguments: TransportTests.Kind.allCases)
    func progressOfAWholeDownload(kind: TransportTests.Kind) async throws {
        let (root, bytes) = try Self.site(size: 8 << 20)
        let nginx = try await NginxServer.start(root: root.path)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let path = work.file("big")
        let reports = Reports(path: path)
        var request = HTTPRequest(url: nginx.baseURL + "/big.bin")
        request.bodyProgress = reports.progress
        let download = try await transport.download(request, to: path, maxBytes: Int64(bytes.count))

        #expect(download.bytesWritten == Int64(bytes.count))
        #expect(download.sha256 == sha256Hex(bytes))
        #expect(try fileBytes(path) == bytes)
        let wrote = reports.written
        #expect(reports.missing.isEmpty, "\(reports.missing.prefix(5))")
        #expect(wrote.last == Int64(bytes.count))
        #expect(zip(wrote, wrote.dropFirst()).allSatisfy { $0 < $1 }, "wrote went back: \(wrote)")
        #expect(reports.chunkSizes.reduce(0, +) == Int64(bytes.count))
        if kind == .urlSession {
            // One write per 16 KiB chunk would report as often as the chunks; held and written
            // together, at most a quarter as often (a pause of the receiving thread writes early).
            #expect(wrote.count * 4 <= reports.chunkSizes.count, "\(wrote.count) writes for \(reports.chunkSizes.count) chunks")
            #expect(wrote.count >= bytes.count / SessionTransfer.writeSize)
        }
    }

    @Test(
        "a download cancelled while it drips keeps every byte it took in its file, and its last wrote is the file's size",
        arguments: TransportTests.Kind.allCases)
    func aCancelledDownloadKeepsWhatItTook(kind: TransportTests.Kind) async throws {
        let (root, bytes) = try Self.site(size: 4 << 20)
        var options = NginxServer.Options(root: root.path)
        options.limitRate = 400_000  // about 10 s for the whole body
        let nginx = try await NginxServer.start(options)
        defer { nginx.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let path = work.file("big")
        let reports = Reports(path: path)
        var request = HTTPRequest(url: nginx.baseURL + "/big.bin")
        request.bodyProgress = reports.progress
        let task = testTask { () -> HTTPError? in
            await HTTPClientTests.error { try await transport.download(request, to: path, maxBytes: Int64(bytes.count)) }
        }
        try await waitUntil { (reports.written.last ?? 0) >= Int64(SessionTransfer.writeSize) }
        task.cancel()
        #expect(await task.value == .cancelled)

        let kept = try fileBytes(path)
        #expect(kept.count < bytes.count, "the cancellation came after the whole body")
        #expect(kept == Array(bytes.prefix(kept.count)))
        #expect(reports.written.last == Int64(kept.count))
        #expect(reports.chunkSizes.reduce(0, +) == Int64(kept.count))
        #expect(reports.missing.isEmpty, "\(reports.missing.prefix(5))")
    }

    @Test(
        "a body the server cuts short: the bytes that came are in the file when the error is reported",
        arguments: TransportTests.Kind.allCases)
    func aTruncatedDownloadKeepsWhatCame(kind: TransportTests.Kind) async throws {
        let server = try TransportTests.fixture(count: 2) { $0.gifDimension = 64 }
        defer { server.stop() }
        let transport = try kind.make()
        defer { kind.finish(transport) }
        let work = try TemporaryDirectory()
        let path = work.file("cut")
        let id = server.catalog.exercises[1].id
        let gif = try #require(server.catalog.gifBytes(id: id))
        server.schedule([.truncatedBody], forExercise: id)
        let error = await HTTPClientTests.error {
            try await transport.download(HTTPRequest(url: HTTPClientTests.imageURL(server, id)), to: path, maxBytes: 1 << 20)
        }
        #expect(error == .truncated(expected: Int64(gif.count), received: Int64(gif.count / 2)))
        #expect(try fileBytes(path) == Array(gif.prefix(gif.count / 2)))
    }
}

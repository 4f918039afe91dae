import Foundation
@testable import GifPackClient
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// The deadline of one client call, against nginx dripping the packs at
/// 1,100 bytes a second — just above the default low-speed rate of 1 KB/s, so no request is ever
/// "too slow" and, without a deadline, a pack of this size would hold an install for minutes per
/// attempt. With `gifpack install --deadline` (curl) and ``PackInstaller/timeouts`` (URLSession)
/// the install ends at the deadline with a message that names it and what to check, and the
/// attempts left after it are not sent. Causes and order are asserted, not durations.
@Suite("Client: one deadline for a whole call, against a dripping nginx", .tags(.nginx), .ownThread, .serialized, .timeLimit(.minutes(5)))
struct CallDeadlineTests {
    @Test func aDrippingServerEndsAnInstallAtItsDeadlineWithEitherTransportAndNoRetryIsSent() async throws {
        let dists = try await UpgradeDist.make(count: 30)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        try #require(pack.bytes > 20 * 1100, "a pack that takes far longer than the deadline at 1,100 B/s: \(pack.bytes) bytes")
        let nginx = try await NginxServer.start(.init(root: dists.site, packsLimitRate: 1100))
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"

        // The command line (curl): --deadline 2.
        var mark = try await nginx.mark()
        let cli = try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", dists.workspace.file("cli/gifs"), "--deadline", "2"])
        var lines = try await Self.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(cli.status == 1, "\(cli.error)")
        #expect(cli.error.contains("timed out: the call's deadline of 2 s passed") && cli.error.contains("check that it answers"), "\(cli.error)")
        #expect(lines.filter { $0.path == "/\(pack.file)" }.count == 1, "the attempts after the deadline are not sent: \(lines)")

        // An app (URLSessionTransport, the default): PackInstaller.timeouts.deadline.
        var installer = PackInstaller(cacheDirectory: dists.workspace.file("app/gifs"))
        installer.timeouts.deadline = .seconds(2)
        mark = try await nginx.mark()
        await #expect {
            _ = try await installer.install(from: PackIndexSource(url))
        } throws: { error in
            guard case PackClientError.transfer(let failed, .timedOut(let message)) = error else { return false }
            return failed.hasSuffix(pack.file) && message.contains("the call's deadline of 2 s passed")
        }
        lines = try await Self.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(lines.filter { $0.path == "/\(pack.file)" }.count == 1, "\(lines)")
        #expect(!DirectoryListing.names(dists.workspace.file("app")).contains("gifs"), "nothing installed")
    }

    @Test func aDrippingServerEndsOneGIFOnDemandAtItsDeadlineWithEitherTransport() async throws {
        let dists = try await UpgradeDist.make(count: 20)
        defer { dists.server.stop() }
        try dists.publish()
        let pack = try #require(try dists.index().packs.first)
        let entry = try #require(pack.gifs.max { $0.location.frameLength < $1.location.frameLength })
        let id = try #require(pack.exercises.first { $0.gif == entry.sha256 }?.id)
        try #require(entry.location.frameLength > 3 * 1100, "a frame that takes seconds at 1,100 B/s: \(entry.location)")
        let nginx = try await NginxServer.start(.init(root: dists.site, packsLimitRate: 1100))
        defer { nginx.stop() }
        let url = nginx.baseURL + "/index.json"

        // gifpack cat (curl): --deadline 1.
        var mark = try await nginx.mark()
        let cat = try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", dists.workspace.file("cli"), "--deadline", "1", id])
        var lines = try await Self.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(cat.status == 1 && cat.output.isEmpty, "\(cat.error)")
        #expect(cat.error.contains("the call's deadline of 1 s passed") && cat.error.contains("check that it answers"), "\(cat.error)")
        #expect(lines.filter { $0.path == "/\(pack.file)" }.count == 1, "the attempts after the deadline are not sent: \(lines)")

        // An app (URLSessionTransport): LazyGIFCache(timeouts:) with a deadline.
        let cache = LazyGIFCache(directory: dists.workspace.file("app"), indexURL: url, timeouts: HTTPTimeouts(deadline: .seconds(1)))
        mark = try await nginx.mark()
        await #expect {
            _ = try await cache.gif(forExercise: id)
        } throws: { error in
            guard case PackClientError.transfer(_, .timedOut(let message)) = error else { return false }
            return message.contains("the call's deadline of 1 s passed")
        }
        lines = try await Self.linesOnceLogged(nginx, since: mark, path: "/\(pack.file)")
        #expect(lines.filter { $0.path == "/\(pack.file)" }.count == 1, "\(lines)")
        #expect(try await cache.storedBytes() == 0)
    }

    /// nginx's log lines since `mark` once `path` is among them: nginx logs a dripped answer the
    /// client gave up on only when it next writes to the closed connection, which on a busy machine
    /// can come after the sentinel request that settles the log.
    static func linesOnceLogged(_ nginx: NginxServer, since mark: Int, path: String) async throws -> [NginxServer.LogLine] {
        var lines: [NginxServer.LogLine] = []
        try await waitUntil(every: .milliseconds(50)) {
            lines = try await nginx.log(since: mark)
            return lines.contains { $0.path == path }
        }
        return lines
    }

    @Test func theDeadlineOptionIsCheckedAndNeedsAPositiveNumber() async throws {
        for bad in ["0", "-3", "soon"] {
            let result = try await ClientCommandTests.gifpack([
                "install", "--index", "http://127.0.0.1:9/index.json", "--cache", "/nonexistent/gifs",
                "--deadline", bad
            ])
            #expect(result.status != 0 && result.error.contains("--deadline"), "\(bad): \(result.error)")
        }
    }
}

import Foundation
import GifPackClient
import GifPackSystem
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackFormat

/// A password holding a raw `#`, `?` or `/` (which a strict URL parser
/// takes for the fragment, query or path) is still a password: never printed, never recorded, and
/// `.zst` is never spliced into it (nor into the query or fragment).
@Suite("Client: credentials in an index URL however they are spelled", .tags(.nginx), .timeLimit(.minutes(3)))
struct URLPasswordSpellingTests {
    @Test(.computes) func redactionAndTheCompressedCopysURLReadTheAuthorityAsOne() {
        let redactions = [
            ("cannot read https://me:pa#ss@cdn.example.com/g/index.json: 404", "cannot read https://cdn.example.com/g/index.json: 404"),
            ("https://me:pa?ss@cdn.example.com/index.json?v=2", "https://cdn.example.com/index.json?v=2"),
            ("https://me:pa?s#s@cdn.example.com:8443/index.json#f", "https://cdn.example.com:8443/index.json#f"),
            ("(https://me:pa/ss@cdn.example.com/index.json)", "(https://cdn.example.com/index.json)"),
            ("https://me:pa%23ss@cdn.example.com/index.json", "https://cdn.example.com/index.json"),
            ("https://me:p@ss@cdn.example.com/index.json", "https://cdn.example.com/index.json"),
            // Without credentials nothing changes: a port, IPv6, an @ in the path or query.
            ("https://cdn.example.com:8443/a@b/index.json?x=1#y", "https://cdn.example.com:8443/a@b/index.json?x=1#y"),
            ("http://[::1]:8080/index.json and http://[::1]/x@y", "http://[::1]:8080/index.json and http://[::1]/x@y")
        ]
        for (text, expected) in redactions { #expect(URLCredentials.redacted(text) == expected, "\(text)") }

        let copies = [
            ("https://me:pa#ss@cdn.example.com/index.json", "https://me:pa#ss@cdn.example.com/index.json.zst"),
            ("https://me:pa?ss@cdn.example.com/index.json?v=2#f", "https://me:pa?ss@cdn.example.com/index.json.zst?v=2#f"),
            ("https://cdn.example.com/g/index.json?v=2", "https://cdn.example.com/g/index.json.zst?v=2"),
            ("https://cdn.example.com/g/index.json#f?x", "https://cdn.example.com/g/index.json.zst#f?x"),
            ("dist/index.json", "dist/index.json.zst")
        ]
        for (location, expected) in copies { #expect(CompressedIndex.beside(location) == expected, "\(location)") }
    }

    @Test func installCatAndReviewPrintNoPartOfAPasswordWithARawHashQuestionMarkOrSlash() async throws {
        let built = try await ClientBuiltDist.make(count: 4)
        defer { built.server.stop() }
        let nginx = try await NginxServer.start(root: built.dist)
        defer { nginx.stop() }
        let id = try #require(try built.index().packs.first?.exercises.first?.id)
        for (number, password) in ["opensesame#tail-secret", "opensesame?tail-secret", "opensesame/tail-secret", "open#sesame?tail-secret"].enumerated() {
            let url = nginx.baseURL.replacingOccurrences(of: "http://", with: "http://uzer-q:\(password)@") + "/index.json"
            func leaks(_ text: String) -> Bool { text.contains("sesame") || text.contains("tail-secret") || text.contains("uzer-q") }
            let html = built.workspace.file("review-\(number)")
            let runs = [
                ("install", try await ClientCommandTests.gifpack(["install", "--index", url, "--cache", built.workspace.file("cache-\(number)")])),
                ("cat", try await ClientCommandTests.gifpack(["cat", "--index", url, "--cache", built.workspace.file("lazy-\(number)"), id])),
                ("review", try await ClientCommandTests.gifpack(["review", url, "--html", html]))
            ]
            for (name, run) in runs {
                let printed = (name == "cat" ? "" : ClientCommandTests.text(run.output)) + run.error
                #expect(!leaks(printed), "\(name) with \(password): \(printed)")
                #expect(!printed.contains(".zst#") && !printed.contains(".zst?"), "\(name) with \(password): \(printed)")
            }
            for file in (FileManager.default.subpaths(atPath: html) ?? []) {
                guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: "\(html)/\(file)")) else { continue }
                #expect(!leaks(String(decoding: bytes, as: UTF8.self)), "\(file) of the review holds the password")
            }
        }
    }
}

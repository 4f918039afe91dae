import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
import GifPackHTTP
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// https through a real nginx TLS reverse proxy whose certificate a private CA signed.
@Suite("TLS: a private certificate authority", .tags(.nginx), .timeLimit(.minutes(5)))
struct TLSTests {
    private func proxiedManifest(_ server: FixtureServer, _ proxy: NginxServer, fetch: String = "") -> String {
        rapidAPIManifest(server: server, fetch: fetch).replacingOccurrences(of: server.rapidAPIBaseURL, with: proxy.baseURL)
    }

    @Test func aBuildTrustsAPrivateCAOnlyThroughFetchCAFile() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let proxy = try await NginxServer.start(.init(root: workspace.file("dist"), tls: true, proxyTo: server.port))
        defer { proxy.stop() }

        let untrusted = try await runBuild(
            manifest: proxiedManifest(server, proxy), workspace: workspace, out: "untrusted",
            cache: "cache-untrusted")
        #expect(untrusted.exitStatus == .failed)
        #expect(untrusted.message.lowercased().contains("certificate"), "\(untrusted.message)")
        #expect(!FileSystem.exists(workspace.file("untrusted/index.json")))

        let trusted = try await runBuild(
            manifest: proxiedManifest(server, proxy, fetch: "  ca_file: \(proxy.caPath)"),
            workspace: workspace)
        #expect(trusted.exitStatus == .success, "\(trusted.message)")
        #expect(trusted.gifs.downloaded == 6)
        #expect(FileSystem.exists(workspace.file("dist/index.json")))
    }

    @Test func theCommandLineHonoursSSLCertFileAndCurlCABundle() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let proxy = try await NginxServer.start(.init(root: workspace.file("dist"), tls: true, proxyTo: server.port))
        defer { proxy.stop() }
        let manifest = try workspace.write(proxiedManifest(server, proxy), to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment.removeValue(forKey: "CURL_CA_BUNDLE")
        environment.removeValue(forKey: "SSL_CERT_FILE")
        let build = ["build", "-m", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "-q"]

        let refused = try await run(productPath("gifpack"), build, environment: environment)
        #expect(refused.status == 1)
        #expect(refused.error.lowercased().contains("certificate"), "\(refused.error)")

        var withCertFile = environment
        withCertFile["SSL_CERT_FILE"] = proxy.caPath
        let built = try await run(productPath("gifpack"), build, environment: withCertFile)
        #expect(built.status == 0, "\(built.error)")

        // The client side: an index served over https by the same proxy.
        let install = ["install", "--index", proxy.baseURL + "/files/index.json", "--cache", workspace.file("gifs")]
        let untrusted = try await run(productPath("gifpack"), install, environment: environment)
        #expect(untrusted.status == 1)
        #expect(untrusted.error.lowercased().contains("certificate"), "\(untrusted.error)")
        var withBundle = environment
        withBundle["CURL_CA_BUNDLE"] = proxy.caPath
        let installed = try await run(productPath("gifpack"), install, environment: withBundle)
        #expect(installed.status == 0, "\(installed.error)")
        #expect(FileSystem.exists(workspace.file("gifs/gifpack-manifest.json")))
    }

    @Test(.computes) func caFileComesFromTheEnvironmentAsCurlReadsIt() {
        #expect(HTTPClient.caFile(environment: [:]) == nil)
        #expect(HTTPClient.caFile(environment: ["SSL_CERT_FILE": "/a.pem"]) == "/a.pem")
        #expect(HTTPClient.caFile(environment: ["SSL_CERT_FILE": "/a.pem", "CURL_CA_BUNDLE": "/b.pem"]) == "/b.pem")
        #expect(HTTPClient.caFile(environment: ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "/a.pem"]) == "/a.pem")
    }

    @Test(.computes) func anUnreadableCAFileIsRefusedWithItsKeyPath() throws {
        let workspace = try TemporaryDirectory()
        let text = "version: 1\nsource:\n  kind: exercisedb-v1\nfetch:\n  ca_file: certs/missing.pem\n"
        let manifest = try workspace.write(text, to: "m.yaml")
        #expect(
            throws: ManifestError.invalidValue(
                path: "fetch.ca_file",
                reason: "cannot read \(workspace.file("certs/missing.pem")): No such file or directory")
        ) {
            try ManifestLoader().load(path: manifest, environment: [:])
        }
        try FileManager.default.createDirectory(atPath: workspace.file("certs"), withIntermediateDirectories: true)
        _ = try workspace.write("-----BEGIN CERTIFICATE-----\n", to: "certs/missing.pem")
        #expect(try ManifestLoader().load(path: manifest, environment: [:]).fetch.caFile == workspace.file("certs/missing.pem"))
    }

    /// curl's own proxy variables: `http_proxy` carries a build to a host only the proxy can reach,
    /// `no_proxy` exempts it.
    @Test func httpProxyAndNoProxyAreHonoured() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let proxy = try await NginxServer.start(.init(root: workspace.file("dist"), tls: true, proxyTo: server.port, forwardProxy: true))
        defer { proxy.stop() }
        // A host name that resolves nowhere (.invalid, RFC 2606): only the proxy can answer for it.
        let manifest = try workspace.write(
            rapidAPIManifest(server: server)
                .replacingOccurrences(of: server.rapidAPIBaseURL, with: "http://exercisedb.invalid:8080"), to: "manifest.yaml")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment.removeValue(forKey: name)
        }
        func build(_ out: String, _ extra: [String: String]) async throws -> ProcessResult {
            try await run(
                productPath("gifpack"), ["build", "-m", manifest, "--out", workspace.file(out), "--cache", workspace.file("cache-\(out)"), "-q"],
                environment: environment.merging(extra) { $1 })
        }
        let direct = try await build("direct", [:])
        #expect(direct.status == 1, "\(direct.error)")
        let proxied = try await build("proxied", ["http_proxy": "http://127.0.0.1:\(proxy.plainPort)"])
        #expect(proxied.status == 0, "\(proxied.error)")
        #expect(FileSystem.exists(workspace.file("proxied/index.json")))
        let exempt = try await build("exempt", ["http_proxy": "http://127.0.0.1:\(proxy.plainPort)", "no_proxy": "localhost,.invalid"])
        #expect(exempt.status == 1, "no_proxy sends the request direct: \(exempt.error)")
    }
}

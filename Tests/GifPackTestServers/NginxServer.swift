import Foundation
import GifPackHTTP
import GifPackSystem
import Glibc
@testable import GifPackTestSupport

/// The tests' one nginx (Debian's nginx-light) on free loopback ports: a static root with or
/// without range support, a publish target's cache headers, https with a private CA, a reverse
/// proxy in front of the fixture server, and an access log with the bytes of every answer.
///
/// The configuration (``Options``) is generated into a temporary directory: one process
/// (`master_process off`, `daemon off`, so stopping it is one SIGKILL to the child the test started),
/// pid, error log and temp paths inside the temporary directory, `user root;` only when running as
/// root, and an access log with one tab-separated line per request: the request line, status,
/// `$bytes_sent` (headers included), `$body_bytes_sent`, `Range`, `If-Match` and `If-None-Match`.
/// Ports are picked, nginx started, and its readiness (pid file written, every port accepting)
/// polled for in one place, ``start(_:)``; ``stop()`` (also run
/// by `deinit`) kills and reaps it.
///
/// ```swift
/// let nginx = try await NginxServer.start(root: site)                       // ranges, access log
/// let proxy = try await NginxServer.start(.init(root: dist, tls: true, proxyTo: fixture.port))
/// defer { nginx.stop(); proxy.stop() }
/// let mark = try await nginx.mark()
/// … requests …
/// let lines = try await nginx.log(since: mark)
/// ```
final class NginxServer: @unchecked Sendable {
    /// What the generated configuration serves.
    struct Options: Sendable {
        /// The directory served: at `/`, or at `/files/` when ``proxyTo`` takes `/`.
        var root: String
        /// false: `max_ranges 0;`, so every range request is answered `200` with the whole file, as some
        /// CDNs and object stores do.
        var ranges = true
        /// A publish target's headers: `Cache-Control: public, max-age=31536000, immutable` under
        /// `/packs/`, `public, max-age=60` on `/index.json`.
        var publishCacheHeaders = false
        /// https, with a certificate for IP 127.0.0.1 signed by a fresh CA that no system bundle
        /// trusts (``caPath``).
        var tls = false
        /// Forward `/` to this loopback port (HTTP/1.1, unbuffered); the root is then at `/files/`.
        var proxyTo: Int?
        /// A second, plain-http listener (``plainPort``) that forwards every request to ``proxyTo``
        /// whatever host it names, so it serves as an `http_proxy` for made-up host names.
        var forwardProxy = false
        /// Every path answers with this file of the root (its name, e.g. `list.xml`): a canned answer
        /// for clients whose URLs carry queries.
        var everyPathServes: String?
        /// Bytes per second each answer's body is sent at (`limit_rate`), to hold transfers open.
        var limitRate: Int?
        /// `limit_rate` (bytes per second, per connection) under `packs/`: a server that drips the packs.
        var packsLimitRate: Int?
        /// `limit_rate` (bytes per second) on `index.json` and `index.json.zst`: a slow index.
        var indexLimitRate: Int?
        /// A missing file is answered `403`, as a bucket that allows GetObject but not ListBucket
        /// answers for a missing key.
        var missingIsForbidden = false

        init(
            root: String, ranges: Bool = true, publishCacheHeaders: Bool = false, tls: Bool = false, proxyTo: Int? = nil,
            forwardProxy: Bool = false, everyPathServes: String? = nil, packsLimitRate: Int? = nil
        ) {
            precondition(packsLimitRate == nil || !publishCacheHeaders, "one location for packs/")
            self.packsLimitRate = packsLimitRate
            self.root = root
            self.ranges = ranges
            self.publishCacheHeaders = publishCacheHeaders
            self.tls = tls
            self.proxyTo = proxyTo
            self.forwardProxy = forwardProxy
            self.everyPathServes = everyPathServes
        }
    }

    struct LogLine: Sendable, Equatable, CustomStringConvertible {
        var method: String
        var path: String
        var status: Int
        /// Everything sent, headers included.
        var bytesSent: Int64
        /// The body alone.
        var bodyBytes: Int64
        var range: String?
        var ifMatch: String?
        var ifNoneMatch: String?

        var description: String { "\(method) \(path) \(status) \(bodyBytes)B range=\(range ?? "-")" }
    }

    static let executable = "/usr/sbin/nginx"

    let options: Options
    private(set) var port = 0
    /// The plain-http forwarding listener (``Options/forwardProxy``), 0 without one.
    private(set) var plainPort = 0
    private let workspace: TemporaryDirectory
    private var process: ChildProcess?
    private var sentinels = 0
    private let lock = NSLock()

    var root: String { options.root }
    var baseURL: String { "\(options.tls ? "https" : "http")://127.0.0.1:\(port)" }
    var accessLogPath: String { workspace.file("access.log") }
    /// The private CA's certificate (with ``Options/tls``): a client succeeds only when told about it.
    var caPath: String { workspace.file("ca.pem") }

    /// Starts nginx: certificates made, ports picked, readiness (pid file written, every port
    /// accepting) polled for.
    static func start(_ options: Options) async throws -> NginxServer {
        precondition(!options.forwardProxy || options.proxyTo != nil, "forwardProxy needs proxyTo")
        try ServerTags.require(.nginx, starting: "nginx")
        let server = NginxServer(options, workspace: try TemporaryDirectory())
        try await server.launch()
        return server
    }

    static func start(root: String, ignoreRanges: Bool = false) async throws -> NginxServer {
        try await start(Options(root: root, ranges: !ignoreRanges))
    }

    private init(_ options: Options, workspace: TemporaryDirectory) {
        self.options = options
        self.workspace = workspace
    }

    private func launch() async throws {
        if options.tls { try await Self.makeCertificates(in: workspace.path) }
        var lastError = ""
        // A port found free can be taken by a parallel test before nginx binds it: try a few.
        for _ in 0..<8 {
            let port = try LoopbackPort.free()
            let plainPort = options.forwardProxy ? try LoopbackPort.free() : 0
            try config(port: port, plainPort: plainPort).write(toFile: workspace.file("nginx.conf"), atomically: true, encoding: .utf8)
            unlink(workspace.file("nginx.pid"))
            let process = try ChildProcess(
                Self.executable,
                [
                    "-c", workspace.file("nginx.conf"), "-p", workspace.path,
                    "-e", workspace.file("error.log")
                ])
            // nginx writes its pid file once its ports are bound; it retries a taken port for 2.5 s, then exits.
            let pidFile = workspace.file("nginx.pid")
            if await LoopbackPort.waitUntilListening(
                ports: [port] + (plainPort == 0 ? [] : [plainPort]), process: process, seconds: 10,
                ready: { FileManager.default.fileExists(atPath: pidFile) })
            {
                lock.withLock {
                    self.port = port
                    self.plainPort = plainPort
                    self.process = process
                }
                return
            }
            LoopbackPort.kill(process)
            lastError = (try? String(contentsOfFile: workspace.file("error.log"), encoding: .utf8)) ?? "nginx exited"
        }
        throw ClientTestFailure("nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// Kills nginx and reaps it (see ``LoopbackPort/kill(_:)``). Safe to call twice.
    func stop() {
        let running = lock.withLock { () -> ChildProcess? in
            defer { process = nil }
            return process
        }
        if let running { LoopbackPort.kill(running) }
    }

    /// The number of log lines so far, once every earlier request is logged.
    func mark() async throws -> Int {
        try await settledLines().count
    }

    /// The requests logged after `mark`, sentinel requests left out.
    func log(since mark: Int = 0) async throws -> [LogLine] {
        Array(try await settledLines().dropFirst(mark)).filter { !$0.path.hasPrefix("/__sentinel") }
    }

    /// Asks for a sentinel path and waits until its line is in the log: nginx (one worker) has then
    /// finished and logged the requests before it.
    private func settledLines() async throws -> [LogLine] {
        let name = lock.withLock { () -> String in
            sentinels += 1
            return "/__sentinel-\(sentinels)"
        }
        let client = try HTTPClient(maxConnections: 1, caFile: options.tls ? caPath : nil)
        defer { client.shutdown() }
        _ = try await client.data(HTTPRequest(url: baseURL + name), maxBytes: 1 << 16)
        var lines: [LogLine] = []
        do {
            try await waitUntil(deadline: .seconds(5)) {
                lines = readLog()
                return lines.contains { $0.path == name }
            }
        } catch is WaitTimedOut {
            throw ClientTestFailure("nginx never logged \(name)")
        }
        let at = lines.firstIndex { $0.path == name } ?? lines.endIndex
        return Array(lines[..<at]) + lines[at...].prefix(1)
    }

    private func readLog() -> [LogLine] {
        guard let text = try? String(contentsOfFile: accessLogPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7 else { return nil }
            let request = fields[0].split(separator: " ")
            guard request.count >= 2, let status = Int(fields[1]), let sent = Int64(fields[2]), let body = Int64(fields[3]) else { return nil }
            func optional(_ value: String) -> String? { value == "-" ? nil : value.replacingOccurrences(of: "\\x22", with: "\"") }
            return LogLine(
                method: String(request[0]), path: String(request[1]), status: status, bytesSent: sent, bodyBytes: body,
                range: optional(fields[4]), ifMatch: optional(fields[5]), ifNoneMatch: optional(fields[6]))
        }
    }

    /// The whole configuration for these ports.
    private func config(port: Int, plainPort: Int) -> String {
        let temp = workspace.path
        let root = options.root
        let proxy = options.proxyTo.map { upstream in
            """
            proxy_pass http://127.0.0.1:\(upstream);
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_buffering off;
            """
        }
        // The root is at `/`, or at `/files/` when `/` is proxied; `sub` is a path below it.
        let mount = proxy == nil ? "/" : "/files/"
        func serve(_ sub: String) -> String { mount == "/" ? "root \(root);" : "alias \(root)/\(sub);" }
        var locations: [String] = []
        if let file = options.everyPathServes {
            locations.append("location \(mount) { root \(root); try_files /\(file) =404; }")
        } else {
            locations.append("location \(mount) { \(serve(""))\(options.missingIsForbidden ? " try_files $uri =403;" : "") }")
        }
        if options.publishCacheHeaders {
            locations.append("location \(mount)packs/ { \(serve("packs/")) add_header Cache-Control \"public, max-age=31536000, immutable\"; }")
            locations.append("location = \(mount)index.json { \(serve("index.json")) add_header Cache-Control \"public, max-age=60\"; }")
        }
        if let rate = options.packsLimitRate {
            locations.append("location \(mount)packs/ { \(serve("packs/")) limit_rate \(rate); }")
        }
        if let rate = options.indexLimitRate {
            precondition(!options.publishCacheHeaders, "one location for index.json")
            for name in ["index.json", "index.json.zst"] {
                locations.append("location = \(mount)\(name) { \(serve(name)) limit_rate \(rate); }")
            }
        }
        if let proxy { locations.append("location / {\n            \(proxy)\n        }") }
        let tls = options.tls ? "ssl_certificate \(temp)/server.pem;\n        ssl_certificate_key \(temp)/server.key;" : ""
        let forward =
            plainPort == 0
            ? ""
            : """
            server {
                    listen 127.0.0.1:\(plainPort);
                    location / {
                        \(proxy ?? "")
                    }
                }
            """
        return """
            worker_processes 1;
            daemon off;
            master_process off;
            \(getuid() == 0 ? "user root;" : "")
            pid \(temp)/nginx.pid;
            error_log \(temp)/error.log warn;
            events { worker_connections 256; }
            http {
                log_format gifpack_test "$request\\t$status\\t$bytes_sent\\t$body_bytes_sent\\t$http_range\\t$http_if_match\\t$http_if_none_match";
                access_log \(temp)/access.log gifpack_test;
                client_body_temp_path \(temp)/client_body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                types { application/json json; application/zstd zst; application/xml xml; }
                default_type application/octet-stream;
                sendfile on;
                keepalive_timeout 30s;
                server {
                    listen 127.0.0.1:\(port)\(options.tls ? " ssl" : "");
                    \(tls)
                    \(options.ranges ? "" : "max_ranges 0;")
                    \(options.limitRate.map { "limit_rate \($0);" } ?? "")
                    \(locations.joined(separator: "\n        "))
                }
                \(forward)
            }

            """
    }

    /// A CA (`ca.pem`) and a server key and certificate for IP 127.0.0.1 signed by it, with the
    /// stock `openssl`.
    private static func makeCertificates(in dir: String) async throws {
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=gifpack test CA", "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem"
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", "/CN=127.0.0.1", "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr"
            ],
            [
                "x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", "\(dir)/san.cnf", "-out", "\(dir)/server.pem"
            ]
        ]
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(toFile: "\(dir)/san.cnf", atomically: true, encoding: .utf8)
        for step in steps {
            let result = try await run("/usr/bin/openssl", step)
            guard result.status == 0 else { throw ClientTestFailure("openssl \(step[0]) failed: \(result.error)") }
        }
    }
}

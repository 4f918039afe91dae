import Foundation
import GifPackHTTP
import Glibc

/// A real nginx (Debian's nginx-light) serving a directory on a free loopback port, for the tests
/// of range requests, conditional requests and sparse upgrades.
///
/// The configuration is generated into a temporary directory: one process (`master_process off`,
/// `daemon off`, so stopping it is one signal to the child the test started), the given root,
/// pid, error log and temp paths inside the temporary directory, `user root;` only when running as
/// root, and an access log with one tab-separated line per request: the request line, status,
/// `$bytes_sent` (headers included), `$body_bytes_sent`, `Range`, `If-Match` and `If-None-Match`.
/// ``ignoreRanges`` adds `max_ranges 0;`, which makes nginx answer every range request with `200`
/// and the whole file, as some CDNs and object stores do.
///
/// ```swift
/// let nginx = try NginxServer(root: site)
/// defer { nginx.stop() }
/// let mark = try await nginx.mark()
/// … requests …
/// let lines = try await nginx.log(since: mark)
/// ```
final class NginxServer: @unchecked Sendable {
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

    let root: String
    private(set) var port = 0
    private let workspace: TemporaryDirectory
    private var process: Process?
    private var sentinels = 0
    private let lock = NSLock()

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var accessLogPath: String { workspace.file("access.log") }

    init(root: String, ignoreRanges: Bool = false) throws {
        self.root = root
        workspace = try TemporaryDirectory()
        var lastError = ""
        // A port found free can be taken by a parallel test before nginx binds it: try a few.
        for _ in 0..<8 {
            let port = try Self.freePort()
            try config(port: port, ignoreRanges: ignoreRanges).write(toFile: workspace.file("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.executable)
            process.arguments = ["-c", workspace.file("nginx.conf"), "-p", workspace.path, "-e", workspace.file("error.log")]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitForListener(port: port, process: process, pidFile: workspace.file("nginx.pid")) {
                self.port = port
                self.process = process
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = (try? String(contentsOfFile: workspace.file("error.log"), encoding: .utf8)) ?? ""
        }
        throw ClientTestFailure("nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// Stops nginx (SIGKILL to the process this test started: it inherits the test process's
    /// blocked signals, and in single-process mode never unblocks SIGTERM) and waits for it.
    func stop() {
        let running = lock.withLock { () -> Process? in
            defer { process = nil }
            return process
        }
        guard let running else { return }
        if running.isRunning { kill(running.processIdentifier, SIGKILL) }
        running.waitUntilExit()
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
        let client = try HTTPClient(maxConnections: 1)
        defer { client.shutdown() }
        _ = try await client.data(HTTPRequest(url: baseURL + name), maxBytes: 1 << 16)
        for _ in 0..<500 {
            let lines = readLog()
            if let at = lines.firstIndex(where: { $0.path == name }) {
                return Array(lines[..<at]) + [lines[at]]
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ClientTestFailure("nginx never logged \(name)")
    }

    private func readLog() -> [LogLine] {
        guard let text = try? String(contentsOfFile: accessLogPath, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7 else { return nil }
            let request = fields[0].split(separator: " ")
            guard request.count >= 2, let status = Int(fields[1]), let sent = Int64(fields[2]), let body = Int64(fields[3]) else { return nil }
            func optional(_ value: String) -> String? { value == "-" ? nil : value.replacingOccurrences(of: "\\x22", with: "\"") }
            return LogLine(method: String(request[0]), path: String(request[1]), status: status, bytesSent: sent, bodyBytes: body,
                           range: optional(fields[4]), ifMatch: optional(fields[5]), ifNoneMatch: optional(fields[6]))
        }
    }

    private func config(port: Int, ignoreRanges: Bool) -> String {
        let temp = workspace.path
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
            types { application/json json; application/zstd zst; }
            default_type application/octet-stream;
            sendfile on;
            keepalive_timeout 30s;
            server {
                listen 127.0.0.1:\(port);
                root \(root);
                \(ignoreRanges ? "max_ranges 0;" : "")
            }
        }

        """
    }

    /// A port the kernel just handed out for loopback (free a moment ago).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True once nginx wrote its pid file (it does so after binding its port) and the port
    /// accepts connections while `process` runs. nginx retries a taken port for 2.5 s, then exits.
    private static func waitForListener(port: Int, process: Process, pidFile: String) -> Bool {
        for _ in 0..<600 {
            guard process.isRunning else { return false }
            guard FileManager.default.fileExists(atPath: pidFile) else {
                usleep(10_000)
                continue
            }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port)).bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return process.isRunning }
            usleep(10_000)
        }
        return false
    }
}

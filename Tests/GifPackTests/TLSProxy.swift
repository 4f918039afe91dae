import Foundation
import Glibc

/// A private certificate authority and an nginx TLS reverse proxy on loopback, made with the
/// stock `openssl` and `nginx` binaries: `https://127.0.0.1:<port>/` forwards to `upstream`
/// (the fixture server), `https://127.0.0.1:<port>/files/` serves `filesRoot`. The server
/// certificate (for IP 127.0.0.1) is signed by a fresh CA that no system bundle trusts, so a
/// client succeeds only when it is told about `caPath`. `http://127.0.0.1:<plainPort>` is a plain
/// http listener that forwards every request to `upstream` whatever host it names, so it serves as
/// an `http_proxy` for made-up host names.
///
/// ```swift
/// let proxy = try TLSProxy(upstreamPort: server.port, filesRoot: workspace.file("dist"), workspace: workspace)
/// defer { proxy.stop() }
/// let url = proxy.baseURL + "/files/index.json"   // needs caPath
/// ```
final class TLSProxy: @unchecked Sendable {
    let caPath: String
    let port: Int
    let plainPort: Int
    private let process: Process
    private let errorLog: String

    var baseURL: String { "https://127.0.0.1:\(port)" }

    init(upstreamPort: Int, filesRoot: String, workspace: TemporaryDirectory) throws {
        let dir = workspace.file("tls")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        caPath = "\(dir)/ca.pem"
        try TLSProxy.makeCertificates(in: dir)
        for name in ["body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            try FileManager.default.createDirectory(atPath: "\(dir)/tmp-\(name)", withIntermediateDirectories: true)
        }
        errorLog = "\(dir)/error.log"
        var lastError = ""
        for _ in 0..<5 {
            let port = try TLSProxy.freePort()
            let plainPort = try TLSProxy.freePort()
            let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(dir)/nginx.pid;
            error_log \(errorLog) warn;
            events { worker_connections 64; }
            http {
              access_log off;
              client_body_temp_path \(dir)/tmp-body;
              proxy_temp_path \(dir)/tmp-proxy;
              fastcgi_temp_path \(dir)/tmp-fastcgi;
              uwsgi_temp_path \(dir)/tmp-uwsgi;
              scgi_temp_path \(dir)/tmp-scgi;
              server {
                listen 127.0.0.1:\(port) ssl;
                ssl_certificate \(dir)/server.pem;
                ssl_certificate_key \(dir)/server.key;
                location /files/ { alias \(filesRoot)/; }
                location / {
                  proxy_pass http://127.0.0.1:\(upstreamPort);
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_buffering off;
                }
              }
              server {
                listen 127.0.0.1:\(plainPort);
                location / {
                  proxy_pass http://127.0.0.1:\(upstreamPort);
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_buffering off;
                }
              }
            }
            """
            try config.write(toFile: "\(dir)/nginx.conf", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-p", dir, "-e", errorLog, "-c", "\(dir)/nginx.conf"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if TLSProxy.waitUntilListening(port: port, process: process),
               TLSProxy.waitUntilListening(port: plainPort, process: process) {
                self.port = port
                self.plainPort = plainPort
                self.process = process
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            lastError = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "nginx exited"
        }
        throw TLSProxyError(description: "nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// Kills nginx. SIGKILL, not SIGTERM: a child spawned from a test thread inherits that thread's
    /// blocked signals, and a single-process nginx never sees a blocked SIGTERM.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A CA (`ca.pem`) and a server key and certificate for IP 127.0.0.1 signed by it.
    private static func makeCertificates(in dir: String) throws {
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=gifpack test CA", "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", "/CN=127.0.0.1", "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr"],
            ["x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", "\(dir)/san.cnf", "-out", "\(dir)/server.pem"],
        ]
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(toFile: "\(dir)/san.cnf", atomically: true, encoding: .utf8)
        for step in steps {
            let result = try run("/usr/bin/openssl", step)
            guard result.status == 0 else { throw TLSProxyError(description: "openssl \(step[0]) failed: \(result.error)") }
        }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TLSProxyError(description: "socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { throw TLSProxyError(description: "bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func waitUntilListening(port: Int, process: Process) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port)).bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 { return true }
            usleep(25_000)
        }
        return false
    }
}

struct TLSProxyError: Error, CustomStringConvertible {
    let description: String
}

import ExerciseDBFixture
import Foundation
import GifPackSystem
import Glibc
@testable import GifPackTestSupport

/// The examples of `docs/running-unattended.md`, read from the Markdown: each is a fenced block
/// whose info string carries `title=NAME` (```` ```crontab title=cron ````).
enum UnattendedDoc {
    static var path: String { "\(PublishServers.repositoryRoot)/docs/running-unattended.md" }

    /// The text of the block titled `title` (without its fences), exactly as written.
    static func block(_ title: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines: [Substring]? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if var collected = lines {
                if line.hasPrefix("```") { return collected.joined(separator: "\n") }
                collected.append(line)
                lines = collected
            } else if line.hasPrefix("```"), line.split(separator: " ").contains(Substring("title=\(title)")) {
                lines = []
            }
        }
        throw PublishTestFailure("\(path) has no block titled \(title)")
    }

    /// The command of a one-entry crontab: the line's five time fields dropped, as cron does.
    static func cronCommand(_ crontab: String) throws -> (schedule: [String], command: String) {
        let entries = crontab.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard entries.count == 1, let entry = entries.first else {
            throw PublishTestFailure("the cron block must hold one entry line (crontab has no continuation lines): \(entries)")
        }
        var rest = Substring(entry)
        var schedule: [String] = []
        for _ in 0..<5 {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            let field = rest.prefix { $0 != " " && $0 != "\t" }
            schedule.append(String(field))
            rest = rest.dropFirst(field.count)
        }
        return (schedule, rest.trimmingCharacters(in: .whitespaces))
    }

    /// A unit file's `[Service]` (or any section's) keys: continuation lines (`\` at the end)
    /// joined, as systemd reads them.
    static func unitKeys(_ unit: String, section: String) -> [String: String] {
        var keys: [String: String] = [:]
        var current = ""
        var pending = ""
        for raw in unit.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = pending.isEmpty ? raw.trimmingCharacters(in: .whitespaces) : pending + " " + raw.trimmingCharacters(in: .whitespaces)
            if line.hasSuffix("\\") {
                pending = String(line.dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            pending = ""
            if line.hasPrefix("[") { current = line; continue }
            guard current == "[\(section)]", !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            keys[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return keys
    }

    /// `ExecStart=`'s words with `${NAME}` replaced by one word each from `environment`, as systemd
    /// does; a quote or a `$NAME` without braces is refused (the test would have to guess).
    static func execWords(_ line: String, environment: [String: String]) throws -> [String] {
        guard !line.contains("\""), !line.contains("'") else { throw PublishTestFailure("ExecStart with quotes: \(line)") }
        return try line.split(separator: " ").map { word in
            var out = ""
            var rest = Substring(word)
            while let dollar = rest.firstIndex(of: "$") {
                out += rest[..<dollar]
                rest = rest[dollar...]
                guard rest.hasPrefix("${"), let close = rest.firstIndex(of: "}") else { throw PublishTestFailure("unbraced $ in \(word)") }
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                guard let value = environment[name] else { throw PublishTestFailure("\(name) is not in the EnvironmentFile") }
                out += value
                rest = rest[rest.index(after: close)...]
            }
            return out + rest
        }
    }

    /// `EnvironmentFile=`'s `NAME=value` lines.
    static func environmentFile(_ text: String) -> [String: String] {
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return environment
    }
}

/// Runs commands as an operator's machine would, without touching it: inside a private mount
/// namespace (`unshare --mount`, root only) where `/usr/local/bin` is a folder holding the freshly
/// built `gifpack` (a hard link, else a copy), `/etc` is an overlay whose upper layer holds
/// `/etc/gifpack` (``conf``), and `/var/www` is ``www``. Outside the namespace nothing changes.
final class OperatorMachine: @unchecked Sendable {
    let workspace: TemporaryDirectory
    /// What the namespace sees as `/etc/gifpack`.
    var conf: String { workspace.file("etc-upper/gifpack") }
    /// What the namespace sees as `/var/www`.
    let www: String

    init(www: String? = nil) throws {
        workspace = try TemporaryDirectory()
        for folder in ["bin", "etc-upper/gifpack", "etc-work", "www"] {
            try FileManager.default.createDirectory(atPath: workspace.file(folder), withIntermediateDirectories: true)
        }
        self.www = www ?? workspace.file("www")
        let binary = productPath("gifpack")
        if link(binary, workspace.file("bin/gifpack")) != 0 {
            try FileManager.default.copyItem(atPath: binary, toPath: workspace.file("bin/gifpack"))
        }
        guard getuid() == 0 else { throw PublishTestFailure("the operator's-kit tests mount in a namespace of their own: run them as root") }
        guard FileManager.default.fileExists(atPath: "/var/www") else { throw PublishTestFailure("/var/www is missing (nginx-light makes it)") }
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The mounts, as one shell line.
    var mounts: String {
        "mount -t overlay overlay -o lowerdir=/etc,upperdir=\(Self.quoted(workspace.file("etc-upper"))),workdir=\(Self.quoted(workspace.file("etc-work"))) /etc"
            + " && mount --bind \(Self.quoted(workspace.file("bin"))) /usr/local/bin && mount --bind \(Self.quoted(www)) /var/www"
    }

    /// Runs `argv` under `env -i` with exactly `environment`, in the namespace.
    func run(_ argv: [String], environment: [String: String], currentDirectory: String? = nil) async throws -> ProcessResult {
        let script = mounts + " && exec env -i \"$@\""
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try await GifPackTestSupport.run(
            "/usr/bin/unshare",
            ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"]
                + assignments + argv, environment: [:], currentDirectory: currentDirectory)
    }

    /// Runs `command` the way cron does: `/bin/sh -c` with cron's bare environment.
    func cron(_ command: String) async throws -> ProcessResult {
        try await run(["/bin/sh", "-c", command], environment: ["PATH": "/usr/bin:/bin", "HOME": "/root", "LOGNAME": "root", "SHELL": "/bin/sh"])
    }
}

/// nginx with a location block of the documentation, as written, in a server of its own, started
/// in a mount namespace where `/var/www` is `www`: `gzip on` for text/plain, JSON and zstd at the
/// server level, so only the block's own `gzip off` keeps packs uncompressed.
final class DocumentedNginx: @unchecked Sendable {
    let port: Int
    private let process: ChildProcess
    private let directory: TemporaryDirectory

    var baseURL: String { "http://127.0.0.1:\(port)" }

    static func start(location: String, www: String) async throws -> DocumentedNginx {
        try await DocumentedNginx(location: location, www: www)
    }

    private init(location: String, www: String) async throws {
        try ServerTags.require(.nginx, starting: "nginx")
        directory = try TemporaryDirectory()
        var lastError = ""
        for _ in 0..<5 {
            let port = try LoopbackPort.free()
            let temp = directory.path
            let config = """
                worker_processes 1;
                daemon off;
                master_process off;
                user root;
                pid \(temp)/nginx.pid;
                error_log \(temp)/error.log warn;
                events { worker_connections 64; }
                http {
                    access_log off;
                    client_body_temp_path \(temp)/client_body;
                    proxy_temp_path \(temp)/proxy;
                    fastcgi_temp_path \(temp)/fastcgi;
                    uwsgi_temp_path \(temp)/uwsgi;
                    scgi_temp_path \(temp)/scgi;
                    include /etc/nginx/mime.types;
                    default_type text/plain;
                    gzip on;
                    gzip_min_length 1;
                    gzip_types text/plain application/json application/zstd application/octet-stream;
                    server {
                        listen 127.0.0.1:\(port);
                \(location)
                    }
                }

                """
            try config.write(toFile: "\(temp)/nginx.conf", atomically: true, encoding: .utf8)
            let script = "mount --bind \(OperatorMachine.quoted(www)) /var/www && exec /usr/sbin/nginx -c \(temp)/nginx.conf -p \(temp) -e \(temp)/error.log"
            let process = try ChildProcess(
                "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script],
                stderr: .file("\(temp)/stderr.log"))
            if await LoopbackPort.waitUntilListening(port: port, process: process, seconds: 10) {
                self.port = port
                self.process = process
                return
            }
            LoopbackPort.kill(process)
            lastError =
                ((try? String(contentsOfFile: "\(temp)/error.log", encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: "\(temp)/stderr.log", encoding: .utf8)) ?? "")
        }
        throw PublishTestFailure("nginx with the documented location did not start: \(lastError)")
    }

    deinit { stop() }

    func stop() { LoopbackPort.kill(process) }
}

/// `curl -sS -I` with `Accept-Encoding: gzip`: the status and the headers (names lowercased).
func headWithGzip(_ url: String) async throws -> [String: String] {
    let result = try await run("/usr/bin/curl", ["-sS", "-I", "-H", "Accept-Encoding: gzip", url])
    var headers: [String: String] = [:]
    for line in result.output.split(separator: "\r\n") {
        guard let colon = line.firstIndex(of: ":") else {
            headers[":status"] = line.split(separator: " ").dropFirst().first.map(String.init)
            continue
        }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return headers
}

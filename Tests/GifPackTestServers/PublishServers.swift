import Foundation
import GifPackSystem
import Glibc
@testable import GifPackTestSupport

// moto's S3 server from the Makefile's `.venv-test`, for the publish tests (nginx is NginxServer).
// Ports, readiness and SIGKILL on `stop()` come from LoopbackPort.

/// moto's standalone S3 server on a free loopback port, its request log in a file.
final class MotoServer: @unchecked Sendable {
    let port: Int
    let process: ChildProcess
    let logPath: String
    private let directory: TemporaryDirectory

    static var binary: String { "\(PublishServers.repositoryRoot)/.venv-test/bin/moto_server" }

    /// The credentials requests are signed with: fixed test values, or with `strictAuth` an access
    /// key moto's IAM made, whose signatures moto then verifies.
    private(set) var credentials = [
        "AWS_ACCESS_KEY_ID": "AKIAGIFPACKTEST00001", "AWS_SECRET_ACCESS_KEY": "gifpack-test-secret-0123456789abcdef",
        "AWS_REGION": "us-east-1", "AWS_SESSION_TOKEN": ""
    ]

    /// Starts moto and polls until it listens; throws (the test fails) when `.venv-test` lacks it:
    /// `make test-venv` installs it. `strictAuth`: moto checks every request's signature and the
    /// key's IAM policy (the first three requests, which make the IAM user, its key and its policy,
    /// excepted).
    static func start(strictAuth: Bool = false) async throws -> MotoServer {
        let server = try await start(environment: strictAuth ? ["INITIAL_NO_AUTH_ACTION_COUNT": "3"] : [:])
        if strictAuth { try await server.makeIAMCredentials() }
        return server
    }

    /// Starts moto with `extra` in its environment and polls until it listens.
    static func start(environment extra: [String: String]) async throws -> MotoServer {
        try ServerTags.require(.s3, starting: "moto's S3 server")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw PublishTestFailure("\(binary) is missing: run `make test-venv` (creates .venv-test from Tests/requirements.txt)")
        }
        let directory = try TemporaryDirectory()
        let logPath = directory.file("moto.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        var lastError = ""
        for _ in 0..<3 {
            let port = try LoopbackPort.free()
            var environment = ProcessInfo.processInfo.environment
            environment.merge(extra) { $1 }
            let process = try ChildProcess(
                binary, ["-H", "127.0.0.1", "-p", "\(port)"], environment: environment,
                stdout: .file(logPath, append: true), stderr: .file(logPath, append: true))
            if await LoopbackPort.waitUntilListening(port: port, process: process, seconds: 60) {
                return MotoServer(port: port, process: process, logPath: logPath, directory: directory)
            }
            LoopbackPort.kill(process)
            lastError = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        }
        throw PublishTestFailure("moto did not start: \(lastError.suffix(2000))")
    }

    private init(port: Int, process: ChildProcess, logPath: String, directory: TemporaryDirectory) {
        self.port = port
        self.process = process
        self.logPath = logPath
        self.directory = directory
    }

    private func makeIAMCredentials() async throws {
        let iam = ["--aws-sigv4", "aws:amz:us-east-1:iam", "--user", "AKIAGIFPACKTEST00001:unused", "-sS", "-f", "-X", "POST"]
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        let calls: [[String]] = [
            ["--data-urlencode", "Action=CreateUser", "--data-urlencode", "UserName=publisher", "--data-urlencode", "Version=2010-05-08"],
            ["--data-urlencode", "Action=CreateAccessKey", "--data-urlencode", "UserName=publisher", "--data-urlencode", "Version=2010-05-08"],
            [
                "--data-urlencode", "Action=PutUserPolicy", "--data-urlencode", "UserName=publisher", "--data-urlencode", "PolicyName=s3",
                "--data-urlencode", "PolicyDocument=\(policy)", "--data-urlencode", "Version=2010-05-08"
            ]
        ]
        for (number, call) in calls.enumerated() {
            let result = try await run("/usr/bin/curl", iam + call + ["\(endpoint)/"])
            guard result.status == 0 else { throw PublishTestFailure("IAM call \(number) failed: \(result.error) \(result.output)") }
            if number == 1 {
                func element(_ name: String) -> String? {
                    result.output.components(separatedBy: "<\(name)>").dropFirst().first?.components(separatedBy: "</\(name)>").first
                }
                guard let id = element("AccessKeyId"), let secret = element("SecretAccessKey") else {
                    throw PublishTestFailure("no access key in \(result.output)")
                }
                credentials["AWS_ACCESS_KEY_ID"] = id
                credentials["AWS_SECRET_ACCESS_KEY"] = secret
            }
        }
    }

    deinit { stop() }

    func stop() { LoopbackPort.kill(process) }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// curl's options for a request signed with ``credentials`` (moto refuses anonymous reads).
    var signing: [String] {
        [
            "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(credentials["AWS_ACCESS_KEY_ID"]!):\(credentials["AWS_SECRET_ACCESS_KEY"]!)",
            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"
        ]
    }

    func createBucket(_ name: String) async throws {
        let result = try await run("/usr/bin/curl", ["-sS", "-f", "-X", "PUT"] + signing + ["\(endpoint)/\(name)"])
        guard result.status == 0 else { throw PublishTestFailure("cannot create bucket \(name): \(result.error)") }
    }

    /// The request lines moto logged so far, in order: `"PUT /bucket/key"`.
    var requests: [String] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        // Werkzeug colours the request line with ANSI escapes, even into a file.
        let plain = text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        return plain.split(separator: "\n").compactMap { line in
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\"") else { return nil }
            let parts = line[line.index(after: open)..<close].split(separator: " ")
            guard parts.count >= 2, ["GET", "PUT", "HEAD", "DELETE", "POST"].contains(String(parts[0])) else { return nil }
            return "\(parts[0]) \(parts[1])"
        }
    }

    /// The response head of an object (`curl -I`), names lowercased.
    func head(_ path: String) async throws -> [String: String] {
        let result = try await run("/usr/bin/curl", ["-sS", "-I"] + signing + ["\(endpoint)/\(path)"])
        var headers: [String: String] = [:]
        for line in result.output.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        headers[":status"] = result.output.split(separator: " ").dropFirst().first.map(String.init)
        return headers
    }

    /// The bytes of an object, nil when it is not there.
    func get(_ path: String) async throws -> [UInt8]? {
        let out = directory.file("get-\(UUID().uuidString)")
        let result = try await run("/usr/bin/curl", ["-sS", "-f", "-o", out] + signing + ["\(endpoint)/\(path)"])
        defer { unlink(out) }
        return result.status == 0 ? try fileBytes(out) : nil
    }

    /// Keys under a prefix (ListObjectsV2, unsigned).
    func keys(bucket: String, prefix: String) async throws -> [String] {
        let result = try await run("/usr/bin/curl", ["-sS", "-f"] + signing + ["\(endpoint)/\(bucket)?list-type=2&prefix=\(prefix)"])
        return result.output.components(separatedBy: "<Key>").dropFirst().compactMap { $0.components(separatedBy: "</Key>").first }.sorted()
    }
}

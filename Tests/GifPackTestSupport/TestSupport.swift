import Foundation
import GifPackSystem
import Testing
import GifPackFormat

/// A temporary directory that removes itself, with helpers shared by the build tests.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gifpack-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func write(_ text: String, to name: String) throws -> String {
        let target = file(name)
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }
}

/// The real ExerciseDB sample beside the project (`../shared/realdata/exercisedb-sample`, see its
/// README; never copied into the project), found relative to this source file. A test that reads it
/// skips visibly when it is not on the machine: `@Test(.enabled(if: RealSample.has("gifs"), RealSample.missing))`.
enum RealSample {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/realdata/exercisedb-sample").path
    static var gifs: String { "\(directory)/gifs" }
    /// The skip's comment.
    static let missing: Comment = "the real sample (../shared/realdata/exercisedb-sample) is not on this machine"

    /// True when `relative` (a file or folder of the sample) is there.
    static func has(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: "\(directory)/\(relative)") }
}

/// Runs an external program and captures its output.
struct ProcessResult {
    var status: Int32
    var output: String
    var error: String
}

/// Runs an external program (a ``ChildProcess``) to its end, waiting off the cooperative pool.
func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: String? = nil
) async throws -> ProcessResult {
    let (status, output, error) = try await runCapturing(executable, arguments, environment: environment, currentDirectory: currentDirectory)
    return ProcessResult(status: status, output: String(decoding: output, as: UTF8.self), error: String(decoding: error, as: UTF8.self))
}

/// Runs an external program (a ``ChildProcess``) to its end; its standard output and error go to
/// files in a temporary directory and come back as bytes.
func runCapturing(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: String? = nil
) async throws -> (status: Int32, output: [UInt8], error: [UInt8]) {
    let streams = try TemporaryDirectory()
    let (outPath, errPath) = (streams.file("stdout"), streams.file("stderr"))
    let child = try ChildProcess(
        executable, arguments, environment: environment, currentDirectory: currentDirectory,
        stdout: .file(outPath), stderr: .file(errPath))
    let status = await child.exitStatus()
    return (status, try fileBytes(outPath), try fileBytes(errPath))
}

/// The test key; tests check it never leaks into any output.
let testAPIKey = "sk-test-1f2e3d4c5b6a"

func readIndex(_ path: String) throws -> PackIndex {
    try PackIndex.decode(from: Data(contentsOf: URL(fileURLWithPath: path)))
}

func sha256Hex(_ bytes: [UInt8]) -> String {
    var hasher = SHA256Hasher()
    hasher.update(bytes)
    return hasher.finalize()
}

import Crypto

struct SHA256Hasher {
    private var inner = SHA256()
    mutating func update(_ bytes: [UInt8]) { inner.update(data: bytes) }
    func finalize() -> String { inner.finalize().map { String(format: "%02x", $0) }.joined() }
}

/// Path of a built product (the test bundle sits in the same folder).
func productPath(_ name: String) -> String {
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent().path
    for candidate in [bundle, CommandLine.arguments.first.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } ?? ""] {
        let path = "\(candidate)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return "\(#filePath.replacingOccurrences(of: "Tests/GifPackTestSupport/TestSupport.swift", with: ".build/debug"))/\(name)"
}

/// Whether this test process (and so the gifpack it starts, built alongside) runs under
/// AddressSanitizer (`make sanitize`): its runtime is linked in then.
let underAddressSanitizer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil

/// A publish test's failure to set up.
struct PublishTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum PublishServers {
    /// The repository's root, from this file's path.
    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }
}

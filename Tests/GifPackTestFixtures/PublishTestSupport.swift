import ExerciseDBFixture
import Foundation
import GifPackGIF
import Glibc
@testable import GifPack
@testable import GifPackTestSupport

/// Two builds of one fixture, kept side by side for publishing: `v1` (unsigned, one pack "all")
/// and `v2` (signed, sequence 1, two packs "first" and "second", one GIF changed).
struct PublishBuilds {
    let built: ClientBuiltDist
    let key: TestSigningKey
    var workspace: TemporaryDirectory { built.workspace }
    var v1: String { workspace.file("v1") }
    var v2: String { workspace.file("v2") }

    static func make(count: Int = 10) async throws -> PublishBuilds {
        let built = try await ClientBuiltDist.make(count: count)
        let key = try TestSigningKey(workspace: built.workspace)
        let builds = PublishBuilds(built: built, key: key)
        try await copyTree(built.dist, to: builds.v1)
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        built.server.replaceGIF(id: ids[0], with: try GIFSynthesizer.animatedGIF(width: 30, height: 30, frames: 2, colors: 4, seed: 77))
        let half = ids.count / 2
        try await built.build(
            packs: """
                packs:
                  - name: first
                    selector:
                      ids: [\(ids[..<half].map { "\"\($0)\"" }.joined(separator: ", "))]
                  - name: second
                    selector:
                      ids: [\(ids[half...].map { "\"\($0)\"" }.joined(separator: ", "))]
                \(key.block())
                """, fetch: "  refresh_after: 0")
        try await copyTree(built.dist, to: builds.v2)
        return builds
    }

    /// A build of the same fixture with one more GIF changed, pack "all" only, copied to `name`.
    func nextAllVersion(_ name: String, seed: UInt64) async throws -> String {
        let ids = built.server.catalog.exercises.map(\.id).sorted()
        built.server.replaceGIF(id: ids[1], with: try GIFSynthesizer.animatedGIF(width: 28, height: 28, frames: 2, colors: 4, seed: seed))
        try await built.build(fetch: "  refresh_after: 0")
        try await copyTree(built.dist, to: workspace.file(name))
        return workspace.file(name)
    }
}

/// `cp -a`.
func copyTree(_ source: String, to destination: String) async throws {
    try? FileManager.default.removeItem(atPath: destination)
    let result = try await run("/bin/cp", ["-a", source, destination])
    guard result.status == 0 else { throw PublishTestFailure("cp -a \(source) \(destination): \(result.error)") }
}

/// Runs the built `gifpack` with the test's environment plus `extra` (never an inherited crash hook).
func gifpackCLI(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProcessResult {
    var environment = ProcessInfo.processInfo.environment
    environment.removeValue(forKey: "GIFPACK_CRASH_AT")
    environment.merge(extra) { $1 }
    return try await run(productPath("gifpack"), arguments, environment: environment)
}

/// The index a directory serves, checked: every pack (and posters pack) it names is there with its
/// size and SHA-256. Returns the problems (empty: complete).
func servedIndexProblems(index bytes: [UInt8]?, pack: (String) throws -> [UInt8]?) throws -> [String] {
    guard let bytes else { return ["no index.json"] }
    let index = try PackIndex.decode(from: Data(bytes))
    var problems: [String] = []
    for description in index.packFiles {
        guard let data = try pack(description.file) else { problems.append("\(description.file) missing"); continue }
        if Int64(data.count) != description.bytes || sha256Hex(data) != description.sha256 {
            problems.append("\(description.file) differs from the index")
        }
    }
    return problems
}

func directoryIndexProblems(_ root: String) throws -> [String] {
    try servedIndexProblems(index: try FileSystem.readAll("\(root)/index.json")) { try? FileSystem.readAll("\(root)/\($0)") ?? nil }
}

/// Every file below `root`, relative, sorted.
func relativeFiles(_ root: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var files: [String] = []
    while let path = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "\(root)/\(path)", isDirectory: &isDirectory), !isDirectory.boolValue { files.append(path) }
    }
    return files.sorted()
}

/// The status change time of a file (a rename sets it), in nanoseconds.
func changeTime(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0 }
    return info.st_ctim.tv_sec * 1_000_000_000 + info.st_ctim.tv_nsec
}

/// Killed by SIGKILL (Foundation reports the signal number; a shell would say 128 + 9).
func killedBySIGKILL(_ result: ProcessResult) -> Bool { result.status == 9 || result.status == 128 + 9 }

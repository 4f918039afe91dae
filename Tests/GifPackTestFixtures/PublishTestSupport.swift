import Foundation
import Glibc
@testable import GifPack
@testable import GifPackTestSupport

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

import Foundation
import GifPackSystem
import GifPackIndexReader

/// The client's view of the package's one set of file helpers (``FileSystem``, ``NewFile`` in
/// GifPackSystem): the same operations, failing with ``PackClientError/fileSystem(path:operation:errno:)``.
///
/// ```swift
/// try FileOps.makeDirectories("/cache.d/downloads")
/// if let size = FileOps.regularFileSize("/cache.d/downloads/all.part") { … }
/// ```
enum FileOps {
    static func regularFileSize(_ path: String) -> Int64? { FileSystem.regularFileSize(path) }

    static func status(_ path: String) throws(PackClientError) -> FileStatus? { try client { () throws(FileSystemError) in try FileSystem.status(path) } }

    static func makeDirectories(_ path: String) throws(PackClientError) { try client { () throws(FileSystemError) in try FileSystem.createDirectory(path) } }

    static func makeDirectory(_ path: String) throws(PackClientError) { try client { () throws(FileSystemError) in try FileSystem.makeDirectory(path) } }

    static func remove(_ path: String) { FileSystem.removeTree(path) }

    static func move(_ from: String, to: String) throws(PackClientError) { try client { () throws(FileSystemError) in try FileSystem.move(from, to: to) } }

    static func sync(_ path: String) throws(PackClientError) { try client { () throws(FileSystemError) in try FileSystem.fsync(path: path) } }

    /// A descriptor of the regular file at `path` (never through a symbolic link, never blocking: ``RegularFile``).
    static func openRegular(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0o644) throws(PackClientError) -> Int32 {
        try client { () throws(FileSystemError) in try RegularFile.open(path, flags, mode: mode) }
    }

    /// Writes `bytes` to a new file (failing if it exists), without fsync but with its pages handed
    /// to the disk as it is closed, for the install's one sync (see ``Durability``).
    static func writeNew(_ path: String, _ bytes: [UInt8]) throws(PackClientError) {
        try client { () throws(FileSystemError) in
            let file = try NewFile(path: path)
            try file.append(bytes)
            try file.finish(sync: false, writeBack: true)
        }
    }

    /// Directory entries (names only), sorted; an empty list only when the directory does not
    /// exist. A directory that cannot be read throws (operation "could not read the directory"):
    /// what a listing decides (what is deleted, whether a directory is gifpack's) is never decided on
    /// a listing that failed.
    static func list(_ path: String) throws(PackClientError) -> [String] {
        do { return try FileSystem.list(path) } catch {
            throw .fileSystem(path: path, operation: "could not read the directory", errno: error.errno)
        }
    }

    /// Runs file-system work, reporting its failure as a client error.
    static func client<T>(_ body: () throws(FileSystemError) -> T) throws(PackClientError) -> T {
        do { return try body() } catch { throw PackClientError(error) }
    }
}

extension PackClientError {
    /// A file-system failure, with its path, operation and errno.
    init(_ error: FileSystemError) {
        switch error {
        case .io(let operation, let path, let code): self = .fileSystem(path: path, operation: operation, errno: code)
        case .notRegularFile(let path, let kind): self = .notRegularFile(path: path, kind: kind)
        }
    }
}

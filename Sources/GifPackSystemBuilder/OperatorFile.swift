import GifPackSystem

/// The builder's one way to read a file its operator names (the manifest, `signing.secret_key_file`),
/// unlike the files gifpack writes and reads back (``RegularFile``, never through a link):
/// followed through symbolic links, since mounted secrets and config maps are links to their
/// current version; read from a regular file, a pipe or a character device such as `/dev/stdin`;
/// and never more than a limit, so a wrong path (a log
/// file, `/dev/zero`) is refused with its size instead of filling memory.
///
/// ```swift
/// let bytes = try OperatorFile.read("manifests/exercisedb.yaml", limit: OperatorFile.manifestLimit)
/// ```
package enum OperatorFile {
    /// A manifest larger than this is not one (the bundled ones are under 4 KiB).
    package static let manifestLimit = 4 << 20
    /// A minisign secret key file is about 200 bytes.
    package static let secretKeyLimit = 64 << 10

    /// Why a named file could not be read.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// The open or a read failed: `errno` says why (`ENOENT`, `EACCES`, …).
        case system(FileSystemError)
        /// A directory, a socket or a block device is there (`kind`: "a directory", …).
        case notAFile(kind: String)
        /// More than `limit` bytes.
        case tooLarge(limit: Int)

        package var description: String {
            switch self {
            case .system(let error): SystemCalls.errorText(error.errno)
            case .notAFile(let kind): "it is \(kind), not a file"
            case .tooLarge(let limit): "it is larger than \(limit) bytes"
            }
        }

        /// True when nothing is at the path (or a link there leads nowhere).
        package var isMissing: Bool {
            if case .system(let error) = self { return error.errno == Errno.noSuchFileOrDirectory.code }
            return false
        }
    }

    /// The whole of what `path` (links followed) holds, at most `limit` bytes.
    package static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        var fd: Int32
        repeat { fd = SystemCalls.open(path, [.readOnly, .closeOnExec, .noControllingTerminal]) } while fd < 0 && Errno.current == .interrupted
        guard fd >= 0 else { throw .system(.io(operation: "open", path: path, errno: Errno.current.code)) }
        defer { _ = SystemCalls.close(fd) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw .system(.io(operation: "fstat", path: path, errno: Errno.current.code))
        }
        let type = SystemCalls.fileType(info)
        guard type == .regular || type == .fifo || type == .characterDevice else { throw .notAFile(kind: type.words) }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(descriptor: fd, path: path, limit: limit) } catch { throw .system(error) }
        guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
        return bytes
    }
}

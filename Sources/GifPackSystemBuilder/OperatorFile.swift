import GifPackSystem

/// The builder's one way to read a file its operator names (the manifest, `signing.secret_key_file`):
/// as ``RegularFile`` opens every file (a regular file only, never blocking: a FIFO or a device is
/// refused, so the read is bounded in time), except that symbolic links are followed, since mounted
/// secrets and config maps are links to their current version; and never more than a limit, so a
/// wrong path (a log file) is refused with its size instead of filling memory.
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
        /// Something other than a regular file is there (`kind`: "a directory", "a FIFO", …).
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
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly, followingLinks: true) } catch {
            if case .notRegularFile(_, let kind) = error { throw .notAFile(kind: kind) }
            throw .system(error)
        }
        defer { SystemCalls.close(fd) }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(descriptor: fd, path: path, limit: limit) } catch { throw .system(error) }
        guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
        return bytes
    }
}

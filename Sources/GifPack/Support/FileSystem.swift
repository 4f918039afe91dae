import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Failures of the few file operations the builder makes, with the path and errno to act on.
public enum FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    case io(operation: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .io(let operation, let path, let code): "\(operation) \(path) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// Thin wrappers over POSIX calls with crash-safe publishing: write to a temporary name in the same
/// directory, fsync, rename over the final name, fsync the directory. A reader (or a crash) sees the
/// old file or the new one, never a partial one.
///
/// ```swift
/// try FileSystem.writeAtomically(Array("hello".utf8), to: "dist/index.json")
/// ```
public enum FileSystem {
    /// `mkdir -p`: creates `path` and its missing parents (mode 0755 before the umask). A failure
    /// names the path that could not be made and the system's own errno (`File exists` when a
    /// file is in the way, `Permission denied`, `No space left on device`, …).
    public static func createDirectory(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o755) == 0 { return }
        let code = errno
        switch code {
        case EEXIST:
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw .io(operation: "mkdir", path: path, errno: EEXIST)
        case ENOENT:
            let parent = PathText.parent(path)
            guard !parent.isEmpty, parent != path else { throw .io(operation: "mkdir", path: path, errno: code) }
            try createDirectory(parent)
            if mkdir(path, 0o755) == 0 { return }
            let again = errno
            var info = stat()
            if again == EEXIST, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw .io(operation: "mkdir", path: path, errno: again)
        default:
            throw .io(operation: "mkdir", path: path, errno: code)
        }
    }

    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    public static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    public static func remove(_ path: String) {
        unlink(path)
    }

    public static func fsync(path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    public static func fsyncDirectory(_ path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        _ = Glibc.fsync(fd)
    }

    /// Renames `source` over `destination` and makes the rename durable.
    public static func publish(_ source: String, as destination: String) throws(FileSystemError) {
        guard rename(source, destination) == 0 else { throw .io(operation: "rename", path: destination, errno: errno) }
        try fsyncDirectory(PathText.parent(destination))
    }

    /// A temporary name beside `path`, unique to this process and call.
    public static func temporaryPath(beside path: String) -> String {
        let unique = "\(getpid())-\(UUID().uuidString.prefix(8))"
        return "\(PathText.parent(path))/.\(PathText.lastComponent(path)).tmp-\(unique)"
    }

    /// Writes `bytes` to `path` atomically and durably; `beforeRename` runs once the temporary file
    /// is complete (crash-safety tests stop the process there).
    public static func writeAtomically(_ bytes: [UInt8], to path: String, beforeRename: () -> Void = {}) throws(FileSystemError) {
        let temporary = temporaryPath(beside: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(operation: "create", path: temporary, errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw .io(operation: "write", path: temporary, errno: code)
            }
            offset += written
        }
        guard Glibc.fsync(fd) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw .io(operation: "fsync", path: temporary, errno: code)
        }
        close(fd)
        beforeRename()
        do { try publish(temporary, as: path) } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Lowercase hex SHA-256 of a file, read in 1 MiB pieces; nil when it cannot be read.
    public static func sha256Hex(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let chunk, !chunk.isEmpty else { break } // nil or empty: end of file
            hasher.update(data: chunk)
        }
        return hasher.finalize().hexString
    }

    public static func readAll(_ path: String) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }
}

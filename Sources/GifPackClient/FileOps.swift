import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX file operations the client needs, each throwing ``PackClientError/fileSystem(path:operation:errno:)``.
///
/// ```swift
/// try FileOps.makeDirectories("/cache.d/downloads")
/// if let size = FileOps.regularFileSize("/cache.d/downloads/all.part") { … }
/// ```
enum FileOps {
    /// The size of a regular file (not following a final symbolic link), or nil when there is none.
    static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// `lstat`, or nil when the path does not exist.
    static func status(_ path: String) throws(PackClientError) -> stat? {
        var info = stat()
        if lstat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw .posix(path, "lstat")
    }

    static func makeDirectories(_ path: String) throws(PackClientError) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw .posix(path, "mkdir", (error as NSError).code == NSFileWriteNoPermissionError ? EACCES : EIO)
        }
    }

    static func makeDirectory(_ path: String) throws(PackClientError) {
        guard mkdir(path, 0o755) == 0 else { throw .posix(path, "mkdir") }
    }

    /// Removes a file or a whole tree; a missing path is fine.
    static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            try? FileManager.default.removeItem(atPath: path)
        } else {
            unlink(path)
        }
    }

    /// `rename(2)`: atomic within one file system, replacing `to` if it is a file or symbolic link.
    static func move(_ from: String, to: String) throws(PackClientError) {
        guard rename(from, to) == 0 else { throw .posix(to, "rename \(from) to") }
    }

    /// `fsync` of a file or directory, so a rename or new entries survive a crash.
    static func sync(_ path: String) throws(PackClientError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(path, "open") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .posix(path, "fsync") }
    }

    /// Writes `bytes` to a new file (failing if it exists), without fsync (see ``Durability``).
    static func writeNew(_ path: String, _ bytes: [UInt8]) throws(PackClientError) {
        let file = try NewFile(path: path)
        let result: Result<Void, PackClientError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(PackClientError) in try file.append(buffer) }
        }
        try result.get()
        try file.finish(sync: false)
    }

    /// Directory entries (names only), or an empty list when the directory does not exist.
    static func list(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }
}

/// A file created with `O_EXCL` (mode 0644), written sequentially and closed by ``finish(sync:)``
/// (fsynced first when asked). Dropped without `finish` it is closed, leaving the partial file for
/// the caller to remove.
///
/// ```swift
/// let file = try NewFile(path: "/cache.d/.staging/0001.gif")
/// try file.append(chunk)
/// try file.finish(sync: false)
/// ```
final class NewFile {
    let path: String
    private var fd: Int32
    private(set) var bytesWritten: Int64 = 0

    init(path: String) throws(PackClientError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .posix(path, "create") }
        self.path = path
        self.fd = fd
    }

    deinit { if fd >= 0 { close(fd) } }

    func append(_ bytes: UnsafeRawBufferPointer) throws(PackClientError) {
        var done = 0
        while done < bytes.count {
            let wrote = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                throw .posix(path, "write")
            }
            done += wrote
        }
        bytesWritten += Int64(bytes.count)
    }

    /// Closes the file, fsyncing it first when `sync` is true.
    func finish(sync: Bool) throws(PackClientError) {
        if sync, fsync(fd) != 0 { throw .posix(path, "fsync") }
        let result = close(fd)
        fd = -1
        guard result == 0 else { throw .posix(path, "close") }
    }
}

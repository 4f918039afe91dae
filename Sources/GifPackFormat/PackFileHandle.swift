import GifPackSystem
import Foundation

/// A read-only file descriptor closed when the last reference goes away.
///
/// Only positional reads (`pread`) are used, which do not share a file offset, so one handle can
/// serve concurrent readers.
final class PackFileHandle: Sendable {
    let path: String
    private let fd: Int32

    /// Opens a regular file: `O_NONBLOCK` keeps a FIFO without a writer from blocking the open, and
    /// `fstat` refuses anything that is not a regular file before a read could block.
    init(path: String) throws(PackReadError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .io(path: path, operation: "fstat", errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notRegularFile(path: path, kind: FileKind.name(info.st_mode))
        }
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    /// The file's current size.
    func size() throws(PackReadError) -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(path: path, operation: "fstat", errno: errno) }
        return Int64(info.st_size)
    }

    /// Reads up to `destination.count` bytes at `offset`, retrying short reads; returns the count
    /// read, which is smaller only at end of file.
    func read(into destination: UnsafeMutableRawBufferPointer, at offset: Int64) throws(PackReadError) -> Int {
        do { return try POSIXIO.read(fd, into: destination, at: offset) } catch {
            throw .io(path: path, operation: "pread", errno: error.code)
        }
    }
}

/// Words for file types, for messages about paths that are not regular files.
///
/// ```swift
/// FileKind.name(S_IFIFO)   // "a FIFO"
/// ```
public enum FileKind {
    public static func name(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFLNK: "a symbolic link"
        default: "an unknown file type"
        }
    }
}

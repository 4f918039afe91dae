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
        let fd = SystemCalls.open(path, [.readOnly, .closeOnExec, .nonBlocking, .noControllingTerminal])
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: Errno.current.code) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            let code = Errno.current.code
            SystemCalls.close(fd)
            throw .io(path: path, operation: "fstat", errno: code)
        }
        guard SystemCalls.fileType(info) == .regular else {
            SystemCalls.close(fd)
            throw .notRegularFile(path: path, kind: FileKind.name(info.st_mode))
        }
        self.path = path
        self.fd = fd
    }

    deinit { SystemCalls.close(fd) }

    /// The file's current size.
    func size() throws(PackReadError) -> Int64 {
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw .io(path: path, operation: "fstat", errno: Errno.current.code)
        }
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
/// FileKind.name(info.st_mode)   // "a FIFO"
/// ```
public enum FileKind {
    public static func name(_ mode: mode_t) -> String {
        switch SystemCalls.fileType(mode: UInt32(mode)) {
        case .regular: "a regular file"
        case .directory: "a directory"
        case .fifo: "a FIFO"
        case .socket: "a socket"
        case .characterDevice: "a character device"
        case .blockDevice: "a block device"
        case .symbolicLink: "a symbolic link"
        case .unknown: "an unknown file type"
        }
    }
}

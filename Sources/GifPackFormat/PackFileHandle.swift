import GifPackSystem
import Foundation

/// A read-only file descriptor closed when the last reference goes away.
///
/// Only positional reads (`pread`) are used, which do not share a file offset, so one handle can
/// serve concurrent readers.
final class PackFileHandle: Sendable {
    let path: String
    private let fd: Int32

    /// Opens a regular file, never through a symbolic link, without blocking (``RegularFile``).
    init(path: String) throws(PackReadError) {
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            switch error {
            case .io(let operation, _, let code): throw .io(path: path, operation: operation, errno: code)
            case .notRegularFile(_, let kind): throw .notRegularFile(path: path, kind: kind)
            }
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
        SystemCalls.fileType(mode: UInt32(mode)).words
    }
}

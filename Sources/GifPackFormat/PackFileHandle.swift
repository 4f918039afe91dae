import GifPackSystem
import Foundation

/// A read-only file descriptor closed when the last reference goes away, or bytes held in memory
/// (a range answer of a few KB checked before it touches the disk).
///
/// Only positional reads (`pread`) are used, which do not share a file offset, so one handle can
/// serve concurrent readers.
final class PackFileHandle: Sendable {
    let path: String
    private let fd: Int32
    /// The bytes read instead of a file (``init(bytes:name:)``); nil for a file.
    private let bytes: [UInt8]?
    /// Bytes read through this handle so far (``bytesRead``).
    private let readCount = Locked<Int64>(0)

    /// Bytes ``read(into:at:)`` has returned so far, by every reader sharing the handle.
    var bytesRead: Int64 { readCount.withLock { $0 } }

    /// Bytes in memory, read like a file of exactly them; `name` stands for the path in messages.
    init(bytes: [UInt8], name: String) {
        self.path = name
        self.fd = -1
        self.bytes = bytes
    }

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
        self.bytes = nil
    }

    deinit { if bytes == nil { SystemCalls.close(fd) } }

    /// The file's current size.
    func size() throws(PackReadError) -> Int64 {
        if let bytes { return Int64(bytes.count) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw .io(path: path, operation: "fstat", errno: Errno.current.code)
        }
        return Int64(info.st_size)
    }

    /// Reads up to `destination.count` bytes at `offset`, retrying short reads; returns the count
    /// read, which is smaller only at end of file.
    func read(into destination: UnsafeMutableRawBufferPointer, at offset: Int64) throws(PackReadError) -> Int {
        if let bytes {
            guard offset >= 0 else { throw .io(path: path, operation: "pread", errno: Errno.invalidArgument.code) }
            guard offset < Int64(bytes.count) else { return 0 }
            let count = min(destination.count, bytes.count - Int(offset))
            bytes.withUnsafeBytes { source in
                destination.baseAddress?.copyMemory(from: source.baseAddress! + Int(offset), byteCount: count)
            }
            readCount.withLock { $0 += Int64(count) }
            return count
        }
        let count: Int
        do { count = try POSIXIO.read(fd, into: destination, at: offset) } catch {
            throw .io(path: path, operation: "pread", errno: error.code)
        }
        readCount.withLock { $0 += Int64(count) }
        return count
    }
}

/// Words for file types, for messages about paths that are not regular files.
///
/// ```swift
/// FileKind.name(info.st_mode)   // "a FIFO"
/// ```
package enum FileKind {
    package static func name(_ mode: mode_t) -> String {
        SystemCalls.fileType(mode: UInt32(mode)).words
    }
}

import GifPackSystem
import Foundation
import Glibc

/// A whole file mapped read-only into memory: read like a buffer, its pages loaded as they are
/// touched, and let go again with ``release(before:)`` once read, so reading a large file through
/// it keeps only a little of it resident.
///
/// ```swift
/// guard let file = try MappedFile(path: "dist/index.json") else { return }  // nil: no such file
/// let value = try file.withBytes { try JSONParser.parse($0) }
/// ```
package final class MappedFile {
    private let base: UnsafeMutableRawPointer?
    /// The file's length in bytes.
    package let count: Int
    package let path: String

    /// Maps `path`; nil when it does not exist. An empty file maps to an empty buffer.
    package init?(path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .io(operation: "stat", path: path, errno: errno) }
        self.path = path
        count = Int(status.st_size)
        guard count > 0 else {
            base = nil
            return
        }
        let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let mapped, mapped != MAP_FAILED else { throw .io(operation: "mmap", path: path, errno: errno) }
        base = mapped
    }

    deinit {
        if let base { munmap(base, count) }
    }

    /// Calls `body` with the file's bytes (valid only during the call).
    package func withBytes<T, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> T) throws(E) -> T {
        try body(UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: count))
    }

    /// Lets go of the whole pages before `offset`: they are read from the file again if touched.
    package func release(before offset: Int) {
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = min(offset, count) / page * page
        guard end > 0 else { return }
        _ = madvise(base, end, MADV_DONTNEED)
    }
}

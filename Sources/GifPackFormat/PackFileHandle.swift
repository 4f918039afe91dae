#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only file descriptor closed when the last reference goes away.
///
/// Only positional reads (`pread`) are used, which do not share a file offset, so one handle can
/// serve concurrent readers.
final class PackFileHandle: Sendable {
    let path: String
    private let fd: Int32

    init(path: String) throws(PackReadError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
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
        var done = 0
        while done < destination.count {
            let got = pread(fd, destination.baseAddress! + done, destination.count - done, off_t(offset) + off_t(done))
            if got < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "pread", errno: errno)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }
}

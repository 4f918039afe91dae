import Foundation

/// An `errno` value, thrown by ``POSIXIO``'s loops for the caller to wrap with its path and operation.
package struct Errno: Error, Sendable, Equatable {
    package var code: Int32

    package init(_ code: Int32) { self.code = code }
}

/// The read and write loops every file, pipe and socket user needs: complete writes (short writes
/// continued), `EINTR` retried, other failures thrown as ``Errno``.
///
/// ```swift
/// try POSIXIO.writeAll(fd, bytes)                       // every byte, or throws
/// let got = try POSIXIO.read(fd, into: chunk)           // 0 at end of file
/// let filled = try POSIXIO.read(fd, into: chunk, at: 4096)  // pread until full or end of file
/// ```
package enum POSIXIO {
    /// Writes all of `bytes` with `write(2)`.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try writeAll(bytes) { pointer, count in SystemCalls.write(fd, pointer, count) }
    }

    /// Writes all of `bytes` with `write(2)`.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        let result: Result<Void, Errno> = bytes.withUnsafeBytes { buffer in
            Result { () throws(Errno) in try writeAll(fd, buffer) }
        }
        try result.get()
    }

    /// Hands `bytes` to `send` (a `write(2)`- or `send(2)`-like call returning the count written or
    /// -1 with `errno`) until all are written.
    package static func writeAll(
        _ bytes: UnsafeRawBufferPointer,
        with send: (UnsafeRawPointer, Int) -> Int
    ) throws(Errno) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let written = send(base + done, bytes.count - done)
            if written < 0 {
                if Errno.current == .interrupted { continue }
                throw .current
            }
            done += written
        }
    }

    /// One `read(2)` into `buffer`, retried on `EINTR`; returns the count read, 0 at end of file.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        while true {
            let got = SystemCalls.read(fd, buffer.baseAddress, buffer.count)
            if got >= 0 { return got }
            if Errno.current != .interrupted { throw .current }
        }
    }

    /// `pread(2)` at `offset` until `buffer` is full or the file ends; returns the count read.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let got = SystemCalls.read(fd, base + done, buffer.count - done, at: offset + Int64(done))
            if got < 0 {
                if Errno.current == .interrupted { continue }
                throw .current
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// `count` bytes of `fd` from `offset`, in a new array; throws `EIO` when the file ends first.
    package static func read(_ fd: Int32, count: Int, at offset: Int64) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { buffer in Result { () throws(Errno) in try read(fd, into: buffer, at: offset) } }
        guard try got.get() == count else { throw Errno.ioError }
        return bytes
    }
}

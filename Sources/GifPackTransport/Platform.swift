// GifPackTransport's one platform file: the few C library calls it makes (open, write, pwrite,
// close, strerror), behind thin typed wrappers the other files call. Glibc on Linux, Darwin on
// Apple platforms; anything else fails the build here with a clear message.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#else
    #error("GifPackTransport supports Linux (Glibc) and Apple platforms (Darwin) only")
#endif
import GifPackSystem

enum TransportSystem {
    /// The C library's text for an errno value.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

/// A file a response body is written to: created if missing, then truncated, appended to, or
/// written in place from an offset; only a regular file, never through a symbolic link
/// (``RegularFile``). Errors carry the errno; the descriptor is closed by ``close()`` (or when the
/// object goes). Used by one transfer at a time, on the session's delegate queue.
final class BodyFile {
    enum Mode: Sendable, Equatable {
        case truncate
        case append
        /// Write from this offset on, truncating nothing.
        case at(Int64)
    }

    private var descriptor: Int32
    private var position: Int64?

    init(path: String, mode: Mode) throws(BodyFileError) {
        let extra: OpenFlags =
            switch mode {
            case .truncate: .truncate
            case .append: .append
            case .at: []
            }
        do { descriptor = try RegularFile.open(path, [.writeOnly, .create, extra]) } catch {
            switch error {
            case .io(_, _, let code): throw BodyFileError(code: code)
            case .notRegularFile(_, let kind): throw BodyFileError(code: 0, notRegular: kind)
            }
        }
        if case .at(let offset) = mode { position = offset } else { position = nil }
    }

    /// Writes every byte (at the running offset in `.at` mode, else at the end of what was written).
    func write(_ bytes: UnsafeRawBufferPointer) throws(BodyFileError) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written: Int
            if let at = position {
                written = pwrite(descriptor, base, left, off_t(at))
            } else {
                written = writeDescriptor(descriptor, base, left)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw BodyFileError(code: errno)
            }
            if written == 0 { throw BodyFileError(code: EIO) }
            base += written
            left -= written
            if let at = position { position = at + Int64(written) }
        }
    }

    /// Closes the file (once; later calls do nothing); nil or the failure's errno.
    func close() -> BodyFileError? {
        guard descriptor >= 0 else { return nil }
        let result = closeDescriptor(descriptor)
        descriptor = -1
        return result == 0 || errno == EINTR ? nil : BodyFileError(code: errno)
    }

    deinit { _ = close() }
}

private func writeDescriptor(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, pointer, count)
}

private func closeDescriptor(_ fd: Int32) -> Int32 {
    close(fd)
}

/// A file error: the errno, or what was found where a regular file was expected.
struct BodyFileError: Error, Sendable {
    let code: Int32
    /// "a FIFO", "a symbolic link", …: the path is not a regular file (`code` is then 0).
    var notRegular: String?

    /// The transfer's error for this failure at `path`.
    func httpError(path: String) -> HTTPError {
        if let notRegular { return .notRegularFile(path: path, kind: notRegular) }
        return .fileError(path: path, errno: code)
    }
}

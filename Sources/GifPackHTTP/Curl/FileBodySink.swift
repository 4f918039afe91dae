import Crypto
import Glibc

/// Streams a body into a file as it arrives, hashing it (SHA-256) and keeping its first bytes.
///
/// The file is created or truncated, or appended to when `append` is set (resumed downloads), or
/// written in place from `offset` on without truncating anything (range requests filling a
/// sparse file).
/// The cap is checked before each chunk is written: the chunk that would cross it is not written,
/// so the file never holds more than `maxBytes` bytes of this request.
final class FileBodySink: BodySink, @unchecked Sendable {
    let path: String
    let maxBytes: Int64
    let append: Bool
    /// Where the body goes in the file when it is written in place; nil: truncate or append.
    let offset: Int64?
    private var descriptor: Int32 = -1
    private var hasher = SHA256()
    private(set) var bytesWritten: Int64 = 0
    private(set) var prefix: [UInt8] = []

    init(path: String, maxBytes: Int64, append: Bool, offset: Int64? = nil) {
        self.path = path
        self.maxBytes = maxBytes
        self.append = append
        self.offset = offset
    }

    func open() throws(HTTPError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (offset != nil ? 0 : append ? O_APPEND : O_TRUNC)
        var fd: Int32
        repeat { fd = Glibc.open(path, flags, 0o644) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw .fileError(path: path, errno: errno) }
        descriptor = fd
    }

    func write(_ chunk: UnsafeRawBufferPointer) -> HTTPError? {
        guard bytesWritten + Int64(chunk.count) <= maxBytes else { return .bodyTooLarge(limit: maxBytes) }
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return nil }
        var offset = 0
        while offset < chunk.count {
            let written = if let start = self.offset {
                Glibc.pwrite(descriptor, base + offset, chunk.count - offset, off_t(start + bytesWritten) + off_t(offset))
            } else {
                Glibc.write(descriptor, base + offset, chunk.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return .fileError(path: path, errno: errno)
            }
            offset += written
        }
        hasher.update(bufferPointer: chunk)
        if prefix.count < HTTPDownload.prefixLength {
            prefix.append(contentsOf: chunk.prefix(HTTPDownload.prefixLength - prefix.count))
        }
        bytesWritten += Int64(chunk.count)
        return nil
    }

    func close() -> HTTPError? {
        guard descriptor >= 0 else { return nil }
        let result = Glibc.close(descriptor)
        descriptor = -1
        return result == 0 || errno == EINTR ? nil : .fileError(path: path, errno: errno)
    }

    /// Lowercase hex SHA-256 of the bytes written so far.
    var sha256Hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in hasher.finalize() {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

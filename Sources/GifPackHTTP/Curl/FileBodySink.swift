import Crypto
import Glibc
import GifPackSystem

/// Streams a body into a file as it arrives, hashing it (SHA-256) and keeping its first bytes.
///
/// The file (only a regular file, never through a symbolic link) is created or truncated, or appended to when `append` is set (resumed downloads), or
/// written in place from `offset` on without truncating anything (range requests filling a
/// sparse file).
/// The cap is checked before each chunk is written: the chunk that would cross it is not written,
/// so the file never holds more than `maxBytes` bytes of this request.
final class FileBodySink: BodySink, @unchecked Sendable {  // @unchecked: one thread at a time: the loop thread while the transfer runs, the awaiting task once it ended.
    let path: String
    let maxBytes: Int64
    let append: Bool
    /// Where the body goes in the file when it is written in place; nil: truncate or append.
    let offset: Int64?
    /// Told the bytes written after each chunk (``HTTPRequest/bodyProgress``).
    let progress: HTTPBodyProgress?
    private var descriptor: Int32 = -1
    private var hasher = SHA256()
    private(set) var bytesWritten: Int64 = 0
    private(set) var prefix: [UInt8] = []
    var bodyPrefix: [UInt8] { prefix }
    var bodyBytes: Int64 { bytesWritten }

    init(path: String, maxBytes: Int64, append: Bool, offset: Int64? = nil, progress: HTTPBodyProgress? = nil) {
        self.path = path
        self.maxBytes = maxBytes
        self.append = append
        self.offset = offset
        self.progress = progress
    }

    /// Opens the file: only a regular file, never through a symbolic link (``RegularFile``).
    func open() throws(HTTPError) {
        let mode: OpenFlags = offset != nil ? [] : append ? .append : .truncate
        do { descriptor = try RegularFile.open(path, [.writeOnly, .create, mode]) } catch { throw HTTPError(error) }
    }

    func write(_ chunk: UnsafeRawBufferPointer) -> HTTPError? {
        guard bytesWritten + Int64(chunk.count) <= maxBytes else { return .bodyTooLarge(limit: maxBytes) }
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return nil }
        do {
            if let start = self.offset {
                // A range of a sparse file: each piece lands at its own place.
                let origin = off_t(start + bytesWritten)
                try POSIXIO.writeAll(chunk) { pointer, count in pwrite(descriptor, pointer, count, origin + off_t(pointer - base)) }
            } else {
                try POSIXIO.writeAll(descriptor, chunk)
            }
        } catch { return .fileError(path: path, errno: error.code) }
        hasher.update(bufferPointer: chunk)
        if prefix.count < HTTPDownload.prefixLength {
            prefix.append(contentsOf: chunk.prefix(HTTPDownload.prefixLength - prefix.count))
        }
        bytesWritten += Int64(chunk.count)
        progress?.wrote(bytesWritten)
        return nil
    }

    func close() -> HTTPError? {
        guard descriptor >= 0 else { return nil }
        let result = Glibc.close(descriptor)
        descriptor = -1
        return result == 0 || errno == EINTR ? nil : .fileError(path: path, errno: errno)
    }

    /// Lowercase hex SHA-256 of the bytes written so far.
    var sha256Hex: String { Hex.lowercase(hasher.finalize()) }
}

extension HTTPError {
    /// A body file that could not be opened: the errno, or what is there instead of a regular file.
    init(_ error: FileSystemError) {
        switch error {
        case .io(_, let path, let code): self = .fileError(path: path, errno: code)
        case .notRegularFile(let path, let kind): self = .notRegularFile(path: path, kind: kind)
        }
    }
}

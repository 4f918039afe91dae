import GifPackSystem

/// Why a pack (or one of its zstd frames) could not be read.
///
/// Every case carries what a user needs to locate the problem: the file and operation for I/O
/// errors, the frame offset for frame-level problems, and the limit that was hit for bombs.
///
/// ```swift
/// do { _ = try reader.readEntry(frameOffset: 0, frameLength: 1234, maxSize: 1 << 20) }
/// catch { print(error) }   // "frame at offset 0 would decompress to more than 1049599 bytes"
/// ```
package enum PackReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed (`operation` is e.g. "open", "pread").
    case io(path: String, operation: String, errno: Int32)
    /// The path is a FIFO, socket, device or directory: only regular files are read (a FIFO would
    /// block forever).
    case notRegularFile(path: String, kind: String)
    /// The bytes at `offset` do not start a zstd frame.
    case notZstd(offset: Int64)
    /// The frame header lacks something the pack format requires (content size, checksum).
    case badFrameHeader(offset: Int64, reason: String)
    /// Decompressing would produce more than `limit` bytes (a decompression bomb or a wrong limit).
    case frameTooLarge(offset: Int64, limit: Int64)
    /// The decompressed content does not match the frame's xxHash64 content checksum.
    case checksumMismatch(offset: Int64)
    /// zstd rejected the compressed data.
    case corruptFrame(offset: Int64, reason: String)
    /// The frame ended before its last block: the compressed bytes were cut short.
    case truncatedFrame(offset: Int64)
    /// Bytes (or another frame) follow the frame inside the requested range.
    case trailingData(offset: Int64, bytes: Int64)
    /// The frame's content is not exactly one tar entry (header, data, padding).
    case badTarHeader(String)

    package var description: String {
        switch self {
        case let .io(path, operation, code):
            "\(operation) \(path): \(SystemCalls.errorText(code)) (errno \(code))"
        case let .notRegularFile(path, kind):
            "\(path) is not a regular file (\(kind))"
        case let .notZstd(offset):
            "no zstd frame at offset \(offset)"
        case let .badFrameHeader(offset, reason):
            "zstd frame at offset \(offset): \(reason)"
        case let .frameTooLarge(offset, limit):
            "frame at offset \(offset) would decompress to more than \(limit) bytes"
        case let .checksumMismatch(offset):
            "frame at offset \(offset) fails its content checksum"
        case let .corruptFrame(offset, reason):
            "frame at offset \(offset) is corrupt: \(reason)"
        case let .truncatedFrame(offset):
            "frame at offset \(offset) is truncated"
        case let .trailingData(offset, bytes):
            "\(bytes) unexpected bytes follow the frame at offset \(offset)"
        case let .badTarHeader(reason):
            "bad tar entry: \(reason)"
        }
    }
}

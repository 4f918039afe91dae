import Foundation

/// Why a pack or an entry frame could not be written.
///
/// ```swift
/// do { _ = try encoder.encodeBytes(name: "../x", bytes: [], to: sink) }
/// catch { print(error) }   // invalid entry name "../x": contains a "." or ".." component
/// ```
package enum PackWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call on `path` failed (`operation` is e.g. "open", "write", "fsync").
    case io(path: String, operation: String, errno: Int32)
    /// libarchive refused to produce the tar header or padding.
    case archive(String)
    /// zstd refused a parameter or failed to compress.
    case zstd(String)
    /// The entry name cannot be stored as a plain ustar name.
    case invalidName(String, reason: String)
    /// The source file's size changed while it was being packed.
    case sourceChanged(path: String, expectedSize: Int64, actualSize: Int64)
    /// A precompressed entry frame file is not one valid tar entry frame.
    case invalidFrame(path: String, reason: String)
    /// The bytes read from `path` do not hash to the SHA-256 that names them (a damaged cache).
    case contentMismatch(path: String, expected: String, actual: String)
    /// A digest was asked of a sink that was not hashing what it wrote.
    case notHashed(path: String)

    package var description: String {
        switch self {
        case let .io(path, operation, code):
            "\(operation) \(path): \(SystemCalls.errorText(code)) (errno \(code))"
        case let .archive(message):
            "libarchive: \(message)"
        case let .zstd(message):
            "zstd: \(message)"
        case let .invalidName(name, reason):
            "invalid entry name \"\(name)\": \(reason)"
        case let .sourceChanged(path, expected, actual):
            "\(path) changed while packing: expected \(expected) bytes, found \(actual)"
        case let .invalidFrame(path, reason):
            "\(path) is not a valid entry frame: \(reason)"
        case let .contentMismatch(path, expected, actual):
            "\(path) should hash to \(expected) but its bytes hash to \(actual)"
        case let .notHashed(path):
            "no SHA-256 of \(path): its sink was not hashing"
        }
    }
}

import Crypto
import GifPackSystem
import Foundation

/// Incremental SHA-256 with lowercase hex output, and whole-file hashing with `pread`.
///
/// ```swift
/// var digest = StreamingSHA256()
/// digest.update(bytes)
/// digest.hex               // "9f86d081…"
/// try StreamingSHA256.file(at: "/tmp/pack.tar.zst").hex
/// ```
package struct StreamingSHA256 {
    private var hasher = SHA256()

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    package mutating func update(_ bytes: [UInt8]) { hasher.update(data: bytes) }

    package var hex: String { Hex.lowercase(hasher.finalize()) }

    package static func of(_ bytes: [UInt8]) -> String {
        var digest = StreamingSHA256()
        digest.update(bytes)
        return digest.hex
    }

    /// Hashes a whole regular file (``RegularFile``), reading it in 256 KiB chunks; returns its size and digest.
    package static func file(at path: String) throws(FileSystemError) -> (size: Int64, sha256: String) {
        let fd = try RegularFile.open(path, .readOnly)
        defer { SystemCalls.close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        var digest = StreamingSHA256()
        var size: Int64 = 0
        while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch { throw .io(operation: "read", path: path, errno: error.code) }
            if got == 0 { break }
            digest.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
            size += Int64(got)
        }
        return (size, digest.hex)
    }
}

import Crypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Incremental SHA-256 with lowercase hex output, and whole-file hashing with `pread`.
///
/// ```swift
/// var digest = SHA256Digest()
/// digest.update(bytes)
/// digest.hex               // "9f86d081…"
/// try SHA256Digest.file(at: "/tmp/pack.tar.zst").hex
/// ```
struct SHA256Digest {
    private var hasher = SHA256()

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    mutating func update(_ bytes: [UInt8]) { hasher.update(data: bytes) }

    var hex: String { Self.hex(hasher.finalize()) }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func of(_ bytes: [UInt8]) -> String {
        var digest = SHA256Digest()
        digest.update(bytes)
        return digest.hex
    }

    /// Hashes a whole file, reading it in 256 KiB chunks; returns its size and digest.
    static func file(at path: String) throws(PackClientError) -> (size: Int64, sha256: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(path, "open") }
        defer { close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        var digest = SHA256Digest()
        var size: Int64 = 0
        while true {
            let got = read(fd, chunk.baseAddress, chunk.count)
            if got < 0 {
                if errno == EINTR { continue }
                throw .posix(path, "read")
            }
            if got == 0 { break }
            digest.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
            size += Int64(got)
        }
        return (size, digest.hex)
    }
}

import Crypto
import GifPackSystem

/// GIF bytes as served, with the validators computed once: the `ETag` (a SHA-256 prefix) and
/// the `Last-Modified` time.
///
/// ```swift
/// let gif = ServedGIF(bytes: bytes, lastModified: ServedGIF.originalLastModified)
/// gif.etag   // "\"3f2a9c0d1e2b4a59\""
/// ```
struct ServedGIF: Sendable {
    /// `Last-Modified` of every GIF the catalog started with: 2025-01-01T00:00:00Z.
    static let originalLastModified = 1_735_689_600

    let bytes: [UInt8]
    /// Quoted strong entity tag: the first 16 hex digits of the bytes' SHA-256.
    let etag: String
    /// Seconds since 1970.
    let lastModified: Int

    init(bytes: [UInt8], lastModified: Int) {
        self.bytes = bytes
        self.lastModified = lastModified
        let digest = SHA256.hash(data: bytes)
        etag = "\"" + Hex.lowercase(digest.prefix(8)) + "\""
    }
}

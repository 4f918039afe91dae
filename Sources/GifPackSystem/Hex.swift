/// Lowercase hexadecimal text of bytes: digests in packs, indexes, reports and file names.
///
/// ```swift
/// Hex.lowercase([0xAB, 0x01])            // "ab01"
/// Hex.lowercase(SHA256.hash(data: bytes)) // 64 characters
/// ```
package enum Hex {
    package static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    package static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes { appendByte(byte, to: &text) }
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the two lowercase hex digits of `byte`.
    package static func appendByte(_ byte: UInt8, to text: inout [UInt8]) {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
}

import GifPackSystem
import GifPackZstd

/// The compressed copy of `index.json` a build writes beside it (and `gifpack publish` uploads),
/// `index.json.zst` (docs/FORMAT.md, "`index.json.zst`: the index on the wire").
///
/// One zstd frame that declares its content size and carries a content checksum, made by the
/// builder at a pinned level (``level``), so the same index gives the same bytes run after run
/// with one libzstd. It decompresses to exactly the bytes of `index.json`: the signature, the
/// SHA-256 that names `signatures/<sha256>.minisig` and every check apply to those plain bytes.
/// Clients fetch the copy first and `index.json` only when there is no copy.
///
/// ```swift
/// CompressedIndex.beside("https://cdn.example.com/g/index.json?v=2")   // ".../index.json.zst?v=2"
/// let plain = try CompressedIndex.decode(body, maxBytes: 64 << 20)
/// ```
package enum CompressedIndex {
    /// Appended to the index's name.
    package static let suffix = ".zst"
    /// The key of the copy beside `index.json` at a publish target.
    package static let key = "index.json.zst"
    /// The zstd level the builder compresses at (pinned: the bytes depend only on the index and
    /// libzstd), with the window and tables the builder pins (`IndexCompression`: 2 MiB window).
    /// 13: with those tables it gives what 15 gave in about half the time, and the compression is
    /// on the build's path after the last pack. Measured with libzstd, medians of 9 alternating
    /// pairs: 1,324 exercises (1.17 MB), 120,670 bytes in 12.9 ms (12.7-14.8) against 120,612 in
    /// 23.6 ms (23.4-26.1); 100,000 exercises (14 MB), 540,338 bytes in 76.5 ms (74.5-79.6) against
    /// 540,425 in 108.1 ms (106.3-110.0); the same beside a busy core. Level 19 gives 495 KB for the
    /// 14 MB index in 22 s and 100 MB of memory; 9 gives 565 KB, 10-12 more still. A copy an older
    /// builder made at 15 is kept while it decodes to the index.
    package static let level: Int32 = 13

    /// The copy's location beside an index at `location` (a path, or an http(s) URL whose query and
    /// fragment stay at the end): `.zst` goes at the end of the path, never into the user
    /// information (a password may hold a raw `#` or `?`: `URLAuthority` (GifPackSystem)), the query or the fragment.
    package static func beside(_ location: String) -> String {
        let bytes = Array(location.utf8)
        guard location.lowercased().hasPrefix("http"), let authority = URLAuthority.schemeSeparatorEnd(bytes, from: 0) else {
            return location + suffix
        }
        let pathStart = URLAuthority.span(in: bytes, from: authority).end
        guard let query = bytes[pathStart...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else {
            return location + suffix
        }
        return String(decoding: bytes[..<query], as: UTF8.self) + suffix + String(decoding: bytes[query...], as: UTF8.self)
    }

    /// Why a compressed copy was refused.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        package let reason: String
        package init(_ reason: String) { self.reason = reason }
        package var description: String { reason }
    }

    /// The plain index bytes of a compressed copy: exactly one zstd frame that declares a content
    /// size of at most `maxBytes` (checked before anything is decoded) and decodes to that many
    /// bytes, its checksum (when present) matching. Anything else is refused with the reason.
    package static func decode(_ bytes: [UInt8], maxBytes: Int64) throws(Refusal) -> [UInt8] {
        guard !bytes.isEmpty else { throw Refusal("it is empty") }
        let header: ZstdFrameHeader?
        do { header = try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(ZstdDecodingError) in try ZstdDecoder.frameHeader(raw) } } catch {
            throw Refusal("it is not a zstd frame (\(error))")
        }
        guard let header else { throw Refusal("it starts with a skippable frame, not the index's frame") }
        guard let size = header.contentSize else { throw Refusal("its zstd frame does not declare its content size") }
        guard Int64(size) <= maxBytes else {
            throw Refusal("it declares \(size) bytes, more than the \(maxBytes)-byte index limit")
        }
        let plain: [UInt8]
        do { plain = try ZstdDecoder.decompress(bytes, maxOutput: size, maxWindow: max(size, 1 << 10)) } catch {
            throw Refusal("it does not decode (\(error))")
        }
        guard plain.count == size else {
            throw Refusal("it decodes to \(plain.count) bytes, its frame declares \(size)")
        }
        return plain
    }
}

/// What ``PackAssembler/finish()`` wrote: the pack file's size and SHA-256, the size of the tar
/// stream inside it, and where each entry's frame lies, in pack order.
///
/// ```swift
/// let summary = try assembler.finish()
/// for entry in summary.entries { print(entry.name, entry.frameOffset, entry.frameLength) }
/// ```
package struct PackFileSummary: Sendable, Equatable, Codable {
    /// Size of the pack file.
    package var bytes: Int64
    /// Lowercase hex SHA-256 of the pack file.
    package var sha256: String
    /// Size of the decompressed tar stream, end-of-archive blocks included.
    package var uncompressedBytes: Int64
    package var entries: [PackedEntry]

    package init(bytes: Int64, sha256: String, uncompressedBytes: Int64, entries: [PackedEntry]) {
        self.bytes = bytes
        self.sha256 = sha256
        self.uncompressedBytes = uncompressedBytes
        self.entries = entries
    }
}

/// One tar entry of a pack: its name and data size, and its zstd frame's byte range in the pack.
package struct PackedEntry: Sendable, Equatable, Codable {
    package var name: String
    package var size: Int64
    package var frameOffset: Int64
    package var frameLength: Int64

    package init(name: String, size: Int64, frameOffset: Int64, frameLength: Int64) {
        self.name = name
        self.size = size
        self.frameOffset = frameOffset
        self.frameLength = frameLength
    }
}

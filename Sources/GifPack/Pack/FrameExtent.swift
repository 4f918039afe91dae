/// Where an encoded zstd frame landed in a ``FileDescriptorSink`` and how much tar data it holds.
///
/// `offset` is the sink's offset when the frame began, `compressedLength` the frame's size in the
/// file, and `uncompressedLength` the tar bytes inside it (512-byte header + data + padding, or
/// 1024 for the end-of-archive frame). Offset and compressed length are what a pack index stores
/// so a reader can `pread` the frame alone.
///
/// ```swift
/// let extent = try encoder.encodeBytes(name: "catalog.json", bytes: json, to: sink)
/// // extent.uncompressedLength == TarHeader.entryLength(dataSize: Int64(json.count))
/// ```
package struct FrameExtent: Sendable, Equatable, Codable {
    package var offset: Int64
    package var compressedLength: Int64
    package var uncompressedLength: Int64

    package init(offset: Int64, compressedLength: Int64, uncompressedLength: Int64) {
        self.offset = offset
        self.compressedLength = compressedLength
        self.uncompressedLength = uncompressedLength
    }
}

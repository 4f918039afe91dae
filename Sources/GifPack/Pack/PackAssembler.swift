import Foundation
import Crypto
import GifPackFormat

/// Writes a pack file: tar entry frames in order, then the end-of-archive frame.
///
/// Entries are either encoded directly (``appendEntry(name:bytes:)``,
/// ``appendEntry(name:sourcePath:)``) or copied from precompressed entry frame files
/// (``appendFrame(copyingFrom:uncompressedLength:)``), which is how a builder reuses the frame it
/// made for a GIF as soon as the GIF was validated: the entry `gifs/<sha256>.gif` depends only on
/// the GIF, the level and the mtime, so a pack is mostly a concatenation of cached frames. A copied
/// frame is first decoded and checked (one tar entry, zstd checksum, expected length) so a damaged
/// cache file cannot slip into a pack. Everything written is hashed on the way out.
///
/// ``finish()`` appends the end-of-archive frame, fsyncs and closes the file and returns its
/// ``PackFileSummary``. The assembler writes `path` in place: write to a temporary name and rename
/// after `finish()`. It is noncopyable because it owns the open file; an assembler dropped
/// without `finish()` closes the file, leaving an incomplete pack for the caller to delete.
///
/// ```swift
/// var assembler = try PackAssembler(path: "dist/.chest.tmp", level: 12, mtime: 1_700_000_000)
/// try assembler.appendEntry(name: "catalog.json", bytes: catalogJSON)
/// try assembler.appendFrame(copyingFrom: "cache/frames/ab12.zst", uncompressedLength: 95_232)
/// let summary = try assembler.finish()
/// ```
package struct PackAssembler: ~Copyable {
    /// Bytes copied per `read(2)` when appending a frame file.
    package static let copyChunkSize = 128 * 1024

    private let sink: FileDescriptorSink
    private let encoder: TarEntryFrameEncoder
    private var entries: [PackedEntry] = []
    private var uncompressedBytes: Int64 = 0

    /// Creates (truncating) the pack file at `path`.
    package init(path: String, level: Int32, mtime: Int64) throws(PackWriteError) {
        // Flushed as it grows: the final fsync of a 107 MB pack took 0.18-0.25 s, now 0.02 s.
        // Hashed on another thread as it grows: the copy of 107 MB of frames took 0.15 s with the
        // hash in the writer's loop.
        sink = try FileDescriptorSink(creating: path, flushingBehind: true, hashingBehind: true)
        encoder = TarEntryFrameEncoder(level: level, mtime: mtime)
    }

    /// Encodes `bytes` as the next entry.
    @discardableResult
    package mutating func appendEntry(name: String, bytes: [UInt8]) throws(PackWriteError) -> PackedEntry {
        let extent = try encoder.encodeBytes(name: name, bytes: bytes, to: sink)
        return record(name: name, size: Int64(bytes.count), extent: extent)
    }

    /// Encodes the file at `sourcePath` as the next entry, streaming it; with `expectedSHA256`, data
    /// that does not hash to it throws ``PackWriteError/contentMismatch(path:expected:actual:)``.
    @discardableResult
    package mutating func appendEntry(name: String, sourcePath: String, expectedSHA256: String? = nil) throws(PackWriteError) -> PackedEntry {
        let (extent, size) = try encoder.encodeFileReportingSize(name: name, sourcePath: sourcePath, to: sink, expectedSHA256: expectedSHA256)
        return record(name: name, size: size, extent: extent)
    }

    /// Copies the precompressed entry frame file at `framePath` (as made by
    /// ``TarEntryFrameEncoder``) as the next entry. `uncompressedLength` is the tar bytes the
    /// frame must hold (header + data + padding); the frame is verified before it is copied, unless
    /// the caller made it in this process and passes its `trustedEntry` name and size. With
    /// `expectedSHA256` the verification also hashes the entry's data: a frame whose content does
    /// not hash to the name it is stored under is an ``PackWriteError/invalidFrame(path:reason:)``.
    @discardableResult
    package mutating func appendFrame(
        copyingFrom framePath: String, uncompressedLength: Int64,
        trustedEntry: (name: String, size: Int64)? = nil,
        expectedSHA256: String? = nil
    ) throws(PackWriteError) -> PackedEntry {
        let header: (name: String, size: Int64)
        if let trustedEntry {
            header = trustedEntry
        } else {
            let verified = try Self.verifyFrame(framePath, uncompressedLength: uncompressedLength, expectedSHA256: expectedSHA256)
            header = (verified.name, verified.size)
        }
        let fd = SystemCalls.open(framePath, [.readOnly, .closeOnExec])
        guard fd >= 0 else { throw .io(path: framePath, operation: "open", errno: Errno.current.code) }
        defer { SystemCalls.close(fd) }
        let start = sink.offset
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.copyChunkSize, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let got: Int
            do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch { throw .io(path: framePath, operation: "read", errno: error.code) }
            if got == 0 { break }
            try sink.write(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
        }
        let extent = FrameExtent(
            offset: start, compressedLength: sink.offset - start,
            uncompressedLength: uncompressedLength)
        return record(name: header.name, size: header.size, extent: extent)
    }

    /// Appends the end-of-archive frame, fsyncs and closes the file, and describes it.
    package consuming func finish() throws(PackWriteError) -> PackFileSummary {
        let end = try encoder.encodeEndOfArchive(to: sink)
        uncompressedBytes += end.uncompressedLength
        try sink.syncAndClose()
        return PackFileSummary(
            bytes: sink.offset, sha256: try sink.sha256Hex(),
            uncompressedBytes: uncompressedBytes, entries: entries)
    }

    private mutating func record(name: String, size: Int64, extent: FrameExtent) -> PackedEntry {
        let entry = PackedEntry(
            name: name, size: size, frameOffset: extent.offset,
            frameLength: extent.compressedLength)
        entries.append(entry)
        uncompressedBytes += extent.uncompressedLength
        return entry
    }

    /// Decodes the whole frame file and returns its header if it is one regular-file tar entry of
    /// exactly `uncompressedLength` bytes (whose data hashes to `expectedSHA256`, when given).
    static func verifyFrame(
        _ framePath: String, uncompressedLength: Int64,
        expectedSHA256: String?
    ) throws(PackWriteError) -> TarHeader {
        let maxSize = uncompressedLength - Int64(TarHeader.blockSize)
        guard maxSize >= 0 else {
            throw .invalidFrame(path: framePath, reason: "uncompressed length \(uncompressedLength) is below one block")
        }
        do throws(PackReadError) {
            let reader = try PackFrameReader(path: framePath)
            var hasher = SHA256()
            let header = try reader.streamEntry(
                frameOffset: 0, frameLength: try reader.fileSize(),
                maxSize: maxSize, into: { hasher.update(bufferPointer: $0) })
            if let expectedSHA256, case let actual = Hex.lowercase(hasher.finalize()), actual != expectedSHA256 {
                throw .badTarHeader("its data hashes to \(actual), not \(expectedSHA256)")
            }
            guard header.entryLength == uncompressedLength else {
                throw .badTarHeader("entry is \(header.entryLength) bytes, expected \(uncompressedLength)")
            }
            guard header.isRegularFile else { throw .badTarHeader("entry \(header.name) is not a regular file") }
            return header
        } catch {
            throw .invalidFrame(path: framePath, reason: error.description)
        }
    }
}

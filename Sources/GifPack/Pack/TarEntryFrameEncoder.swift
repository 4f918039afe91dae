import Foundation
import Crypto
import GifPackFormat

/// Encodes one tar entry (or the end-of-archive blocks) as one standalone zstd frame.
///
/// The ustar header and padding come from libarchive (``TarArchiveWriter``); the entry is a
/// regular file with mode 0644, uid/gid 0, no user/group names and the encoder's fixed `mtime`,
/// so the frame depends only on the name, the data, `level` and `mtime`. The frame is compressed
/// with pinned zstd parameters (``ZstdFrameCompressor``): content checksum and content size in the
/// header, no worker threads. Concatenating entry frames and a final ``encodeEndOfArchive(to:)``
/// frame gives a valid `.tar.zst` that stock `tar --zstd` extracts, while each entry's frame can
/// also be decompressed on its own (``PackFrameReader``).
///
/// Files are streamed in 64 KiB chunks, so memory does not depend on their size. Names must be
/// printable ASCII, at most 99 bytes (they fit the ustar name field alone), relative, and free of
/// empty, "." and ".." components. The encoder is a value holding only settings; each call uses
/// its own zstd context and is safe to make from any thread (calls block on I/O). When a call
/// throws, the sink may hold part of a frame: discard that output file.
///
/// ```swift
/// let encoder = TarEntryFrameEncoder(level: 12, mtime: 1_700_000_000)
/// let sink = try FileDescriptorSink(creating: "/tmp/frame.zst")
/// let extent = try encoder.encodeFile(name: "gifs/abc.gif", sourcePath: "/tmp/abc.gif", to: sink)
/// try sink.syncAndClose()
/// ```
package struct TarEntryFrameEncoder: Sendable {
    /// Bytes read from a source file per `read(2)`.
    package static let readChunkSize = 64 * 1024
    /// The largest name stored in the ustar name field without a prefix.
    package static let maxNameLength = 99
    /// The largest mtime an 11-digit octal ustar field holds.
    package static let maxMtime: Int64 = 0o77777777777

    package let level: Int32
    package let mtime: Int64

    package init(level: Int32, mtime: Int64) {
        self.level = level
        self.mtime = mtime
    }

    /// Encodes the file at `sourcePath` as the entry `name`.
    package func encodeFile(
        name: String, sourcePath: String,
        to output: FileDescriptorSink
    ) throws(PackWriteError) -> FrameExtent {
        try encodeFileReportingSize(name: name, sourcePath: sourcePath, to: output).extent
    }

    /// ``encodeFile(name:sourcePath:to:)``, also returning the data size that was stored. With
    /// `expectedSHA256`, the data is hashed as it is framed and a mismatch throws
    /// ``PackWriteError/contentMismatch(path:expected:actual:)`` (the frame is then unusable).
    func encodeFileReportingSize(
        name: String, sourcePath: String, to output: FileDescriptorSink, expectedSHA256: String? = nil
    ) throws(PackWriteError) -> (extent: FrameExtent, size: Int64) {
        try Self.validate(name: name)
        let fd = SystemCalls.open(sourcePath, [.readOnly, .closeOnExec])
        guard fd >= 0 else { throw .io(path: sourcePath, operation: "open", errno: Errno.current.code) }
        defer { SystemCalls.close(fd) }
        guard let info = SystemCalls.status(descriptor: fd) else {
            throw .io(path: sourcePath, operation: "fstat", errno: Errno.current.code)
        }
        guard SystemCalls.fileType(info) == .regular else {
            throw .io(path: sourcePath, operation: "read (not a regular file)", errno: Errno.invalidArgument.code)
        }
        let size = Int64(info.st_size)

        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var hasher = expectedSHA256 == nil ? nil : SHA256()
        let extent = try encode(name: name, size: size, to: output) { tar throws(PackWriteError) in
            var copied: Int64 = 0
            while true {
                let got: Int
                do throws(Errno) { got = try POSIXIO.read(fd, into: chunk) } catch {
                    throw .io(path: sourcePath, operation: "read", errno: error.code)
                }
                if got == 0 { break }
                copied += Int64(got)
                guard copied <= size else { break }
                let data = UnsafeRawBufferPointer(rebasing: chunk[0..<got])
                hasher?.update(bufferPointer: data)
                try tar.writeData(data)
            }
            guard copied == size else {
                throw .sourceChanged(path: sourcePath, expectedSize: size, actualSize: copied)
            }
            if let expectedSHA256, let actual = hasher.map({ Hex.lowercase($0.finalize()) }), actual != expectedSHA256 {
                throw .contentMismatch(path: sourcePath, expected: expectedSHA256, actual: actual)
            }
        }
        return (extent, size)
    }

    /// Encodes `bytes` as the entry `name`.
    package func encodeBytes(
        name: String, bytes: [UInt8],
        to output: FileDescriptorSink
    ) throws(PackWriteError) -> FrameExtent {
        try Self.validate(name: name)
        return try encode(name: name, size: Int64(bytes.count), to: output) { tar throws(PackWriteError) in
            let result: Result<Void, PackWriteError> = bytes.withUnsafeBytes { buffer in
                do throws(PackWriteError) { try tar.writeData(buffer) } catch { return .failure(error) }
                return .success(())
            }
            try result.get()
        }
    }

    /// Encodes the two zero blocks that end a tar archive (1024 bytes uncompressed).
    @discardableResult
    package func encodeEndOfArchive(to output: FileDescriptorSink) throws(PackWriteError) -> FrameExtent {
        let start = output.offset
        let length = Int64(2 * TarHeader.blockSize)
        let compressor = try ZstdFrameCompressor(level: level, pledgedSize: length, sink: output)
        let tar = try TarArchiveWriter { bytes throws(PackWriteError) in try compressor.compress(bytes) }
        try tar.close(emittingEndOfArchive: true)
        try compressor.finish()
        return FrameExtent(offset: start, compressedLength: output.offset - start, uncompressedLength: length)
    }

    /// Throws ``PackWriteError/invalidName(_:reason:)`` unless `name` is a safe plain ustar name.
    package static func validate(name: String) throws(PackWriteError) {
        func reject(_ reason: String) -> PackWriteError { .invalidName(name, reason: reason) }
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { throw reject("empty") }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { throw reject("not printable ASCII") }
        guard bytes.count <= maxNameLength else {
            throw reject("\(bytes.count) bytes, more than \(maxNameLength)")
        }
        guard bytes.first != UInt8(ascii: "/") else { throw reject("absolute path") }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw reject("contains an empty, \".\" or \"..\" component")
        }
    }

    /// Writes the header, lets `body` write exactly `size` data bytes, then the padding, all into
    /// one zstd frame whose pledged size is the entry length.
    private func encode(
        name: String, size: Int64, to output: FileDescriptorSink,
        body: (TarArchiveWriter) throws(PackWriteError) -> Void
    ) throws(PackWriteError) -> FrameExtent {
        guard (0...Self.maxMtime).contains(mtime) else {
            throw .archive("mtime \(mtime) does not fit a ustar header (0...\(Self.maxMtime))")
        }
        let start = output.offset
        let length = TarHeader.entryLength(dataSize: size)
        let compressor = try ZstdFrameCompressor(level: level, pledgedSize: length, sink: output)
        let tar = try TarArchiveWriter { bytes throws(PackWriteError) in try compressor.compress(bytes) }
        try tar.writeRegularFileHeader(name: name, size: size, mtime: mtime)
        try body(tar)
        try tar.finishEntry()
        try tar.close(emittingEndOfArchive: false)
        try compressor.finish()
        return FrameExtent(offset: start, compressedLength: output.offset - start, uncompressedLength: length)
    }
}

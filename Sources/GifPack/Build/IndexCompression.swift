import CZstd
import Foundation
import GifPackSystem
import GifPackZstd

/// The compressed copy of `index.json`, `index.json.zst` (``CompressedIndex``): made by the build
/// beside the index it writes, and by `gifpack publish` when `--from` has none that matches.
///
/// One frame at the pinned level (``CompressedIndex/level``), the content size and a checksum in it,
/// no worker threads, so the bytes depend only on the index and the libzstd version. A copy is
/// kept only when it decodes (with the client's decoder) to exactly the index's bytes; otherwise it
/// is made again, so a copy left stale by a killed build or publish is repaired by the next one.
///
/// ```swift
/// let copy = try IndexCompression.compress(indexBytes)
/// try IndexCompression.ensureCopy(beside: "dist/index.json")   // true: written
/// ```
enum IndexCompression {
    /// Why a copy could not be made.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Pinned parameters besides the level, which bound the compressor's memory whatever the index's
    /// size: a 2 MiB window, 512 Ki-entry chain and 256 Ki-entry hash tables (about 5 MB in all;
    /// level 15's own choice for a 14 MB index takes 73 MB for 2.5% fewer bytes: 527,069 against
    /// 540,425 with these at level 15, 540,338 at the pinned level).
    static let windowLog: Int32 = 21
    static let chainLog: Int32 = 19
    static let hashLog: Int32 = 18

    /// A compression context at the pinned level and parameters; the caller frees it.
    private static func makeContext() throws(Failure) -> OpaquePointer {
        guard let context = ZSTD_createCCtx() else { throw Failure(description: "ZSTD_createCCtx failed (out of memory)") }
        func set(_ parameter: ZSTD_cParameter, _ value: Int32, _ what: String) throws(Failure) {
            let result = ZSTD_CCtx_setParameter(context, parameter, value)
            if ZSTD_isError(result) != 0 { throw Failure(description: "zstd \(what): \(String(cString: ZSTD_getErrorName(result)))") }
        }
        do throws(Failure) {
            try set(ZSTD_c_compressionLevel, CompressedIndex.level, "compression level")
            try set(ZSTD_c_windowLog, windowLog, "window log")
            try set(ZSTD_c_chainLog, chainLog, "chain log")
            try set(ZSTD_c_hashLog, hashLog, "hash log")
            try set(ZSTD_c_checksumFlag, 1, "checksum flag")
            try set(ZSTD_c_contentSizeFlag, 1, "content size flag")
            try set(ZSTD_c_nbWorkers, 0, "worker count")
        } catch {
            ZSTD_freeCCtx(context)
            throw error
        }
        return context
    }

    /// The index's bytes compressed into one frame at the pinned level.
    static func compress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        let context = try makeContext()
        defer { ZSTD_freeCCtx(context) }
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let written = output.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { input in ZSTD_compress2(context, out.baseAddress, out.count, input.baseAddress, input.count) }
        }
        if ZSTD_isError(written) != 0 { throw Failure(description: "zstd compression: \(String(cString: ZSTD_getErrorName(written)))") }
        output.removeSubrange(written...)
        return output
    }

    /// The file at `path` (`size` bytes) compressed into `file` as one frame at the pinned level,
    /// the same bytes ``compress(_:)`` gives, read and written in pieces: memory is the pinned
    /// window and tables, not the index.
    static func compress(file path: String, size: Int64, into file: NewFile) throws {
        let context = try makeContext()
        defer { ZSTD_freeCCtx(context) }
        let pledged = ZSTD_CCtx_setPledgedSrcSize(context, UInt64(size))
        if ZSTD_isError(pledged) != 0 { throw Failure(description: "zstd pledged size: \(String(cString: ZSTD_getErrorName(pledged)))") }
        let fd = SystemCalls.open(path, [.readOnly, .closeOnExec])
        guard fd >= 0 else { throw FileSystemError.io(operation: "open", path: path, errno: Errno.current.code) }
        defer { SystemCalls.close(fd) }
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: ZSTD_CStreamInSize(), alignment: 16)
        defer { input.deallocate() }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 16)
        defer { output.deallocate() }
        var consumed: Int64 = 0
        while true {
            let got: Int
            do { got = try POSIXIO.read(fd, into: input) } catch { throw FileSystemError.io(operation: "read", path: path, errno: error.code) }
            consumed += Int64(got)
            let last = got == 0
            if last, consumed != size { throw Failure(description: "\(path) changed while it was compressed") }
            var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: got, pos: 0)
            while true {
                var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
                let left = ZSTD_compressStream2(context, &outBuffer, &inBuffer, last ? ZSTD_e_end : ZSTD_e_continue)
                if ZSTD_isError(left) != 0 { throw Failure(description: "zstd compression: \(String(cString: ZSTD_getErrorName(left)))") }
                try file.append(UnsafeRawBufferPointer(rebasing: output[0..<outBuffer.pos]))
                if last ? left == 0 : inBuffer.pos == inBuffer.size { break }
            }
            if last { return }
        }
    }

    /// True when `copy` decodes to exactly `index`.
    static func matches(_ copy: [UInt8]?, index: [UInt8]) -> Bool {
        guard let copy, let plain = try? CompressedIndex.decode(copy, maxBytes: Int64(index.count)) else { return false }
        return plain == index
    }

    /// True when `copy` is one frame that declares `size` bytes and decodes to bytes whose SHA-256
    /// is `sha256`: decoded in pieces (memory: the frame's window, at most 2 MiB as this builder
    /// writes it, bounded by the size in any case), never the whole index at once.
    static func matches(_ copy: [UInt8]?, size: Int64, sha256: String) -> Bool {
        guard let copy, !copy.isEmpty, size <= Int64(Int.max) else { return false }
        let header = try? copy.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(ZstdDecodingError) in try ZstdDecoder.frameHeader(raw) }
        guard let header, let declared = header.contentSize, Int64(declared) == size else { return false }
        var digest = StreamingSHA256()
        let decoded = try? copy.withUnsafeBytes { raw in
            try ZstdDecoder().decompressFrame(raw, maxOutput: declared, maxWindow: max(1 << 10, min(declared, 1 << 27))) { digest.update($0) }
        }
        guard let decoded, decoded.inputBytes == copy.count, decoded.outputBytes == declared else { return false }
        return digest.hex == sha256
    }

    /// Makes `index.json.zst` beside the index at `indexPath` match it: kept when it already
    /// decodes to the index's bytes, else written anew (atomically, compressed from the file in
    /// pieces); removed when there is no index. Returns true when it was written. Memory does not
    /// grow with the index: neither the index nor its decoded copy is held whole.
    @discardableResult
    static func ensureCopy(beside indexPath: String, maxIndexBytes: Int64 = PublishFileReader.maxIndexBytes) throws -> Bool {
        let copyPath = CompressedIndex.beside(indexPath)
        guard FileSystem.exists(indexPath) else {
            if FileSystem.exists(copyPath) { FileSystem.remove(copyPath) }
            return false
        }
        guard let size = FileSystem.regularFileSize(indexPath) else {
            throw Failure(description: "\(indexPath) is not a regular file")
        }
        guard size <= maxIndexBytes else {
            throw Failure(description: "\(indexPath) has \(size) bytes, more than the \(maxIndexBytes)-byte index limit")
        }
        let index = try StreamingSHA256.file(at: indexPath)
        if matches(try PublishFileReader.read(copyPath, maxBytes: maxIndexBytes), size: index.size, sha256: index.sha256) { return false }
        let temporary = FileSystem.temporaryPath(beside: copyPath)
        do {
            let file = try NewFile(path: temporary, exclusive: false)
            try compress(file: indexPath, size: index.size, into: file)
            try file.finish(sync: true)
            try FileSystem.moveIntoPlace(temporary, as: copyPath)
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
        return true
    }
}

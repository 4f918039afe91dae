import CZstd
import Foundation

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

    /// The index's bytes compressed into one frame at the pinned level.
    static func compress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        guard let context = ZSTD_createCCtx() else { throw Failure(description: "ZSTD_createCCtx failed (out of memory)") }
        defer { ZSTD_freeCCtx(context) }
        func set(_ parameter: ZSTD_cParameter, _ value: Int32, _ what: String) throws(Failure) {
            let result = ZSTD_CCtx_setParameter(context, parameter, value)
            if ZSTD_isError(result) != 0 { throw Failure(description: "zstd \(what): \(String(cString: ZSTD_getErrorName(result)))") }
        }
        try set(ZSTD_c_compressionLevel, CompressedIndex.level, "compression level")
        try set(ZSTD_c_checksumFlag, 1, "checksum flag")
        try set(ZSTD_c_contentSizeFlag, 1, "content size flag")
        try set(ZSTD_c_nbWorkers, 0, "worker count")
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let written = output.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { input in ZSTD_compress2(context, out.baseAddress, out.count, input.baseAddress, input.count) }
        }
        if ZSTD_isError(written) != 0 { throw Failure(description: "zstd compression: \(String(cString: ZSTD_getErrorName(written)))") }
        output.removeSubrange(written...)
        return output
    }

    /// True when `copy` decodes to exactly `index`.
    static func matches(_ copy: [UInt8]?, index: [UInt8]) -> Bool {
        guard let copy, let plain = try? CompressedIndex.decode(copy, maxBytes: Int64(index.count)) else { return false }
        return plain == index
    }

    /// Makes `index.json.zst` beside the index at `indexPath` match it: kept when it already
    /// decodes to the index's bytes, else written anew (atomically); removed when there is no index.
    /// Returns true when it was written.
    @discardableResult
    static func ensureCopy(beside indexPath: String, maxIndexBytes: Int64 = PublishFileReader.maxIndexBytes) throws -> Bool {
        let copyPath = CompressedIndex.beside(indexPath)
        guard let index = try PublishFileReader.read(indexPath, maxBytes: maxIndexBytes) else {
            if FileSystem.exists(copyPath) { FileSystem.remove(copyPath) }
            return false
        }
        if matches(try PublishFileReader.read(copyPath, maxBytes: maxIndexBytes), index: index) { return false }
        try FileSystem.writeAtomically(try compress(index), to: copyPath)
        return true
    }
}

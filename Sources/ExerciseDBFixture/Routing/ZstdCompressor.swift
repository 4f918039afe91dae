import CZstd

/// One-shot zstd compression of response bodies (`Content-Encoding: zstd`) with libzstd.
///
/// ```swift
/// let compressed = ZstdCompressor.compress(Array(json.utf8))   // nil if libzstd fails
/// ```
enum ZstdCompressor {
    static let level: Int32 = 3

    static func compress(_ input: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let written = output.withUnsafeMutableBytes { destination in
            input.withUnsafeBytes { source in
                ZSTD_compress(destination.baseAddress, destination.count, source.baseAddress, source.count, level)
            }
        }
        guard ZSTD_isError(written) == 0 else { return nil }
        output.removeSubrange(written...)
        return output
    }
}

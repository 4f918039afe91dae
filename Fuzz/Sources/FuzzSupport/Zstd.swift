import CZstd

extension Fuzz {
    /// `content` as one zstd frame the way packs are written: content size and checksum declared.
    public static func zstdFrame(_ content: [UInt8], level: Int32 = 1) -> [UInt8] {
        guard let context = ZSTD_createCCtx() else { fatalError("ZSTD_createCCtx failed") }
        defer { ZSTD_freeCCtx(context) }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1)
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(content.count))
        let written = output.withUnsafeMutableBytes { out in
            content.withUnsafeBytes { input in
                ZSTD_compress2(context, out.baseAddress, out.count, input.baseAddress, input.count)
            }
        }
        guard ZSTD_isError(written) == 0 else { fatalError("ZSTD_compress2: \(String(cString: ZSTD_getErrorName(written)))") }
        return Array(output.prefix(written))
    }
}

import CZstd
import GifPackFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks that a pack's last zstd frame is the tar end-of-archive marker: 1024 zero bytes.
///
/// `PackFrameReader` reads entries, and this frame is not one; an installer never needs it, but
/// `gifpack verify` does, because stock `tar` reads whatever the frame holds. The frame is small
/// (a few dozen bytes), must declare exactly 1024 bytes and is decompressed in one call into a
/// 1024-byte buffer, so it cannot expand beyond that.
///
/// ```swift
/// if let problem = EndOfArchiveCheck.problem(path: path, frame: frames.last!, pack: "all") { … }
/// ```
enum EndOfArchiveCheck {
    /// Compressed frames larger than this are not an honest end-of-archive marker.
    static let maxCompressedLength: Int64 = 64 * 1024

    static func problem(path: String, frame: ZstdFrameExtent, pack: String) -> PackRejection? {
        func fail(_ detail: String) -> PackRejection {
            PackRejection(.badFrame, pack: pack, entry: "frame@\(frame.offset)", detail: "end-of-archive frame: \(detail)")
        }
        let size = FrameLayoutCheck.endOfArchiveSize
        guard frame.contentSize == size else { return fail("declares \(frame.contentSize.map(String.init) ?? "no") content size, not \(size)") }
        guard frame.compressedLength <= maxCompressedLength else { return fail("\(frame.compressedLength) compressed bytes") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return fail("cannot open the pack (errno \(errno))") }
        defer { close(fd) }
        var compressed = [UInt8](repeating: 0, count: Int(frame.compressedLength))
        let got = compressed.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(frame.offset)) }
        guard got == compressed.count else { return fail("cannot read the frame") }
        var output = [UInt8](repeating: 0xFF, count: Int(size))
        let result = output.withUnsafeMutableBytes { out in
            compressed.withUnsafeBytes { input in ZSTD_decompress(out.baseAddress, out.count, input.baseAddress, input.count) }
        }
        if ZSTD_isError(result) != 0 { return fail(String(cString: ZSTD_getErrorName(result))) }
        guard result == Int(size), output.allSatisfy({ $0 == 0 }) else {
            return fail("does not decompress to \(size) zero bytes")
        }
        return nil
    }
}

import GifPackFormat
import GifPackZstd
import GifPackIndexReader

/// Checks that a pack's last zstd frame is the tar end-of-archive marker: 1024 zero bytes.
///
/// `PackFrameReader` reads entries, and this frame is not one; an installer never needs it, but
/// `gifpack verify` does, because stock `tar` reads whatever the frame holds. The frame is small
/// (a few dozen bytes), must declare exactly 1024 bytes and is decompressed in one call with an
/// output limit of 1024 bytes, so it cannot expand beyond that.
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
        let compressed: [UInt8]
        do throws(PackReadError) {
            compressed = try PackFrameReader(path: path).readBytes(at: frame.offset, count: Int(frame.compressedLength))
        } catch {
            return fail("cannot read the frame: \(error)")
        }
        guard compressed.count == Int(frame.compressedLength) else { return fail("cannot read the frame") }
        let output: [UInt8]
        do { output = try ZstdDecoder.decompress(compressed, maxOutput: Int(size)) } catch {
            return fail(error.description)
        }
        guard output.count == Int(size), output.allSatisfy({ $0 == 0 }) else {
            return fail("does not decompress to \(size) zero bytes")
        }
        return nil
    }
}

import CGif
import Glibc

/// Structural validation of a GIF with giflib's record-by-record decoder.
///
/// The inspector checks the signature itself (so an HTML error page is reported as
/// ``GIFRejection/notAGIF`` without involving giflib), then walks the records with `DGifOpen`
/// (custom input function), `DGifGetRecordType`, `DGifGetImageHeader`, `DGifGetLine` and
/// `DGifGetExtension`/`DGifGetExtensionNext`. Every frame's LZW data is read to its last pixel by
/// ``LZWPixelCounter``, which follows giflib's decoder code for code but only counts the pixels each
/// code stands for: a third to a fifth of the cost of decoding them. A frame the counter cannot
/// vouch for (the data ends early, a code that is neither in the table nor the next one) sends the whole GIF
/// through giflib's own decoder (`DGifGetLine`, every row into one reused line buffer), whose
/// verdict and message stand; so a GIF is accepted only when giflib would decode it. The image
/// header is read with `DGifGetImageHeader` rather than `DGifGetImageDesc` so giflib does not keep a
/// record per frame: memory does not grow with the number of frames or the file size (the path
/// variant reads the file in 64 KiB chunks). `DGifSlurp` is never used.
///
/// Bounds (``GIFLimits``) are checked before any pixels are decoded: screen size when the screen
/// descriptor is read, frame count and cumulative pixel count at each image descriptor. Every
/// frame must be non-empty and lie inside the logical screen, and the trailer record (0x3B) must
/// be present; bytes after the trailer are ignored.
///
/// ```swift
/// let info = try GIFInspector.inspect(bytes: gifBytes)   // a 12-frame GIF of 80 ms frames
/// // info.frameCount == 12, info.durationMilliseconds == 960, info.loopCount == 0
/// ```
package enum GIFInspector {
    /// Inspects the GIF file at `path`, reading it sequentially in 64 KiB chunks.
    ///
    /// A file that cannot be opened or read is reported as ``GIFRejection/corrupt(_:)`` with the
    /// OS error text.
    package static func inspect(path: String, limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        try inspect(path: path, limits: limits, check: .counting)
    }

    /// Inspects GIF bytes held in memory.
    package static func inspect(bytes: [UInt8], limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        try inspect(bytes: bytes, limits: limits, check: .counting)
    }

    /// The inspection with a chosen pixel check: ``GIFRecordWalker/PixelCheck/decoding`` is the
    /// reference the counting check is tested against.
    static func inspect(path: String, limits: GIFLimits, check: GIFRecordWalker.PixelCheck) throws(GIFRejection) -> GIFInfo {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .corrupt("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try inspect(limits: limits, check: check) { (again: Bool) throws(GIFRejection) in
            if again, lseek(fd, 0, SEEK_SET) != 0 {
                throw .corrupt("cannot read \(path) again: \(String(cString: strerror(errno)))")
            }
            return GIFByteSource(fileDescriptor: fd)
        }
    }

    static func inspect(bytes: [UInt8], limits: GIFLimits, check: GIFRecordWalker.PixelCheck) throws(GIFRejection) -> GIFInfo {
        try inspect(limits: limits, check: check) { _ in GIFByteSource(bytes: bytes) }
    }

    /// Walks the GIF once with `check`; when counting meets a frame it cannot vouch for, walks it
    /// again from the start (`source(true)`) decoding every frame with giflib, whose verdict stands.
    private static func inspect(
        limits: GIFLimits, check: GIFRecordWalker.PixelCheck,
        source: (_ again: Bool) throws(GIFRejection) -> GIFByteSource
    ) throws(GIFRejection) -> GIFInfo {
        var walk = try inspectOnce(try source(false), limits: limits, check: check)
        if walk.irregularFrame {
            walk = try inspectOnce(try source(true), limits: limits, check: .decoding)
        }
        return try walk.result.get()
    }

    /// One walk; `irregularFrame` says counting met a frame only giflib's decoder can judge.
    static func inspectOnce(_ source: GIFByteSource, limits: GIFLimits, check: GIFRecordWalker.PixelCheck)
        throws(GIFRejection) -> (result: Result<GIFInfo, GIFRejection>, irregularFrame: Bool)
    {
        let version = try signatureVersion(source.peek(6))
        let box = Unmanaged.passRetained(source)
        defer { box.release() }
        var openError: Int32 = 0
        guard let gif = DGifOpen(box.toOpaque(), gifByteSourceRead, &openError) else {
            throw rejection(source: source, code: openError, step: "reading the screen descriptor")
        }
        var walker = GIFRecordWalker(gif: gif, source: source, limits: limits, check: check)
        let result: Result<GIFInfo, GIFRejection>
        do throws(GIFRejection) {
            result = .success(try walker.walk(version: version))
        } catch {
            result = .failure(error)
        }
        var closeError: Int32 = 0
        _ = DGifCloseFile(gif, &closeError)
        return (result, walker.irregularFrame)
    }

    /// "87a" or "89a" for a valid signature; `truncated` for a strict prefix of one, else `notAGIF`.
    private static func signatureVersion(_ head: [UInt8]) throws(GIFRejection) -> String {
        try GIFFrameRules.signatureVersion(head)
    }

    /// Classifies a giflib failure: short reads mean truncation, decode errors inside pixel data
    /// mean a bad frame, everything else is corruption.
    static func rejection(source: GIFByteSource, code: Int32, step: String, inFrame: Bool = false) -> GIFRejection {
        if let readErrno = source.readErrno {
            return .corrupt("read failed while \(step): \(String(cString: strerror(readErrno)))")
        }
        if source.reachedEnd { return .truncated }
        // giflib also reports out-of-range fields (e.g. an LZW code size above 8) as read failures.
        let text =
            code == D_GIF_ERR_READ_FAILED
            ? "invalid field value (giflib error \(code))" : GiflibError.text(code)
        switch code {
        case D_GIF_ERR_NOT_GIF_FILE:
            return .notAGIF
        case D_GIF_ERR_IMAGE_DEFECT, D_GIF_ERR_EOF_TOO_SOON, D_GIF_ERR_DATA_TOO_BIG:
            return .badFrame("\(step): \(text)")
        default:
            return inFrame ? .badFrame("\(step): \(text)") : .corrupt("\(step): \(text)")
        }
    }
}

/// giflib `InputFunc`: pulls bytes from the ``GIFByteSource`` passed to `DGifOpen`.
private let gifByteSourceRead: InputFunc = { gif, destination, count in
    guard let gif, let destination, let userData = gif.pointee.UserData, count > 0 else { return 0 }
    let source = Unmanaged<GIFByteSource>.fromOpaque(userData).takeUnretainedValue()
    return Int32(source.read(into: destination, count: Int(count)))
}

/// giflib's text for an error code.
package enum GiflibError {
    package static func text(_ code: Int32) -> String {
        guard let text = GifErrorString(code) else { return "giflib error \(code)" }
        return "\(String(cString: text)) (giflib error \(code))"
    }
}

import CGif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Structural validation of a GIF with giflib's record-by-record decoder.
///
/// The inspector checks the signature itself (so an HTML error page is reported as
/// ``GIFRejection/notAGIF`` without involving giflib), then walks the records with `DGifOpen`
/// (custom input function), `DGifGetRecordType`, `DGifGetImageHeader`, `DGifGetLine` and
/// `DGifGetExtension`/`DGifGetExtensionNext`. Every frame's pixels are LZW-decoded into one reused
/// line buffer as wide as the logical screen, and the image header is read with
/// `DGifGetImageHeader` rather than `DGifGetImageDesc` so giflib does not keep a record per
/// frame: memory does not grow with the number of frames or the file size (the path variant
/// reads the file in 64 KiB chunks). `DGifSlurp` is never used.
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
public enum GIFInspector {
    /// Inspects the GIF file at `path`, reading it sequentially in 64 KiB chunks.
    ///
    /// A file that cannot be opened or read is reported as ``GIFRejection/corrupt(_:)`` with the
    /// OS error text.
    public static func inspect(path: String, limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .corrupt("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try inspect(GIFByteSource(fileDescriptor: fd), limits: limits)
    }

    /// Inspects GIF bytes held in memory.
    public static func inspect(bytes: [UInt8], limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        try inspect(GIFByteSource(bytes: bytes), limits: limits)
    }

    private static func inspect(_ source: GIFByteSource, limits: GIFLimits) throws(GIFRejection) -> GIFInfo {
        let version = try signatureVersion(source.peek(6))
        let box = Unmanaged.passRetained(source)
        defer { box.release() }
        var openError: Int32 = 0
        guard let gif = DGifOpen(box.toOpaque(), gifByteSourceRead, &openError) else {
            throw rejection(source: source, code: openError, step: "reading the screen descriptor")
        }
        var walker = GIFRecordWalker(gif: gif, source: source, limits: limits)
        let result: Result<GIFInfo, GIFRejection>
        do throws(GIFRejection) {
            result = .success(try walker.walk(version: version))
        } catch {
            result = .failure(error)
        }
        var closeError: Int32 = 0
        _ = DGifCloseFile(gif, &closeError)
        return try result.get()
    }

    /// "87a" or "89a" for a valid signature; `truncated` for a strict prefix of one, else `notAGIF`.
    private static func signatureVersion(_ head: [UInt8]) throws(GIFRejection) -> String {
        for version in ["87a", "89a"] {
            let signature = Array("GIF\(version)".utf8)
            if head == signature { return version }
            if head.count < signature.count, head == Array(signature.prefix(head.count)) {
                throw .truncated
            }
        }
        throw .notAGIF
    }

    /// Classifies a giflib failure: short reads mean truncation, decode errors inside pixel data
    /// mean a bad frame, everything else is corruption.
    static func rejection(source: GIFByteSource, code: Int32, step: String, inFrame: Bool = false) -> GIFRejection {
        if let readErrno = source.readErrno {
            return .corrupt("read failed while \(step): \(String(cString: strerror(readErrno)))")
        }
        if source.reachedEnd { return .truncated }
        // giflib also reports out-of-range fields (e.g. an LZW code size above 8) as read failures.
        let text = code == D_GIF_ERR_READ_FAILED
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

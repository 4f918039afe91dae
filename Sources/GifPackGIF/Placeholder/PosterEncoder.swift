import CGif
import Synchronization

/// Encodes an ``RGBImage`` as a single-frame GIF with giflib: the palette (up to 256 colours) comes
/// from giflib's median-cut `GifQuantizeBuffer`, the file from the `EGif*` API. The output depends
/// only on the pixels, so equal stills give byte-identical posters.
///
/// ```swift
/// let gif = try PosterEncoder.encode(AreaDownscaler.downscale(still, longestSide: 80))
/// ```
public enum PosterEncoder {
    /// giflib's `GifQuantizeBuffer` keeps the axis it sorts on in a global (`SortRGBAxis` in
    /// quantize.c, read by its `qsort` comparator): two threads quantising at once can sort by each
    /// other's axis and give another palette, so posters stop being a function of their pixels.
    /// One quantisation at a time in the process (a few hundred microseconds for a poster).
    private static let quantizing = Mutex(())

    public struct EncodeError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func encode(_ image: RGBImage) throws(EncodeError) -> [UInt8] {
        let count = image.width * image.height
        var red = [GifByteType](repeating: 0, count: count)
        var green = red, blue = red
        for index in 0..<count {
            red[index] = image.pixels[index * 3]
            green[index] = image.pixels[index * 3 + 1]
            blue[index] = image.pixels[index * 3 + 2]
        }
        var indices = [GifByteType](repeating: 0, count: count)
        var palette = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: 256)
        var paletteSize: Int32 = 256
        let quantised = quantizing.withLock { _ in
            GifQuantizeBuffer(UInt32(image.width), UInt32(image.height), &paletteSize,
                              &red, &green, &blue, &indices, &palette)
        }
        guard quantised == GIF_OK else { throw EncodeError(description: "giflib could not build a palette") }
        guard let map = GifMakeMapObject(256, &palette) else {
            throw EncodeError(description: "giflib could not allocate a colour map")
        }
        defer { GifFreeMapObject(map) }

        let sink = PosterSink()
        let box = Unmanaged.passRetained(sink)
        defer { box.release() }
        var error: Int32 = 0
        guard let gif = EGifOpen(box.toOpaque(), posterSinkWrite, &error) else {
            throw EncodeError(description: "EGifOpen failed (giflib error \(error))")
        }
        var ok = EGifPutScreenDesc(gif, Int32(image.width), Int32(image.height), 8, 0, map) == GIF_OK
            && EGifPutImageDesc(gif, 0, 0, Int32(image.width), Int32(image.height), false, nil) == GIF_OK
        if ok {
            for row in 0..<image.height where ok {
                ok = indices.withUnsafeMutableBufferPointer { buffer in
                    EGifPutLine(gif, buffer.baseAddress! + row * image.width, Int32(image.width)) == GIF_OK
                }
            }
        }
        let failure = gif.pointee.Error
        var closeError: Int32 = 0
        let closed = EGifCloseFile(gif, &closeError) == GIF_OK
        guard ok, closed else {
            throw EncodeError(description: "giflib could not encode the poster (error \(ok ? closeError : failure))")
        }
        return sink.bytes
    }
}

/// Collects what giflib's encoder writes.
private final class PosterSink {
    var bytes: [UInt8] = []
}

/// giflib `OutputFunc` appending to the ``PosterSink`` passed to `EGifOpen`.
private let posterSinkWrite: OutputFunc = { gif, data, count in
    guard let gif, let data, let userData = gif.pointee.UserData, count > 0 else { return 0 }
    let sink = Unmanaged<PosterSink>.fromOpaque(userData).takeUnretainedValue()
    sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
    return count
}

import CGif

/// Encodes an ``RGBImage`` as a single-frame GIF with giflib: the palette (up to 256 colours, at
/// full 8-bit precision) comes from ``PaletteQuantizer``, the file from the `EGif*` API. The output
/// depends only on the pixels, so equal stills give byte-identical posters on any thread.
///
/// ```swift
/// let gif = try PosterEncoder.encode(AreaDownscaler.downscale(still, longestSide: 80))
/// ```
package enum PosterEncoder {
    package struct EncodeError: Error, CustomStringConvertible {
        package var description: String
    }

    package static func encode(_ image: RGBImage) throws(EncodeError) -> [UInt8] {
        var quantized = PaletteQuantizer.quantize(image)
        // The colour table holds a power of two of entries (at least 2); the rest stay black.
        var tableSize = 2
        while tableSize < quantized.palette.count { tableSize *= 2 }
        var palette = (0..<tableSize).map { index in
            let color = index < quantized.palette.count ? quantized.palette[index] : 0
            return GifColorType(
                Red: UInt8(truncatingIfNeeded: color >> 16), Green: UInt8(truncatingIfNeeded: color >> 8),
                Blue: UInt8(truncatingIfNeeded: color))
        }
        guard let map = GifMakeMapObject(Int32(tableSize), &palette) else {
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
        var ok =
            EGifPutScreenDesc(gif, Int32(image.width), Int32(image.height), 8, 0, map) == GIF_OK
            && EGifPutImageDesc(gif, 0, 0, Int32(image.width), Int32(image.height), false, nil) == GIF_OK
        if ok {
            for row in 0..<image.height where ok {
                ok = quantized.indices.withUnsafeMutableBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return false }
                    return EGifPutLine(gif, base + row * image.width, Int32(image.width)) == GIF_OK
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

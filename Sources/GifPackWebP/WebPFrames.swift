import CWebP

/// An animated WebP decoded with libwebp's `WebPAnimDecoder`: its canvas, loop count and every
/// frame as RGBA with its duration. For tests and `gifpack inspect`; the gate streams instead
/// (``WebPComparison``).
package struct WebPFrames: Sendable, Equatable {
    package struct Frame: Sendable, Equatable {
        /// The composited canvas, `width * height * 4` bytes, RGBA.
        package var pixels: [UInt8]
        package var duration: Int
    }

    package var width: Int
    package var height: Int
    package var loopCount: Int
    package var frames: [Frame]

    /// Every frame of `webp`.
    package static func decode(_ webp: [UInt8]) throws(WebPCodecError) -> [Frame] {
        try decodeAll(webp).frames
    }

    /// The WebP's loop count (0 loops forever).
    package static func loopCount(_ webp: [UInt8]) throws(WebPCodecError) -> Int {
        try decodeAll(webp, framesToo: false).loopCount
    }

    package static func decodeAll(_ webp: [UInt8], framesToo: Bool = true) throws(WebPCodecError) -> WebPFrames {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw .decoder("WebPAnimDecoderOptionsInit failed") }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        return try webp.withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) throws(WebPCodecError) -> WebPFrames in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            guard let decoder = WebPAnimDecoderNew(&data, &options) else { throw .decoder("WebPAnimDecoderNew refused the WebP") }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw .decoder("WebPAnimDecoderGetInfo failed") }
            let (width, height) = (Int(info.canvas_width), Int(info.canvas_height))
            var result = WebPFrames(width: width, height: height, loopCount: Int(info.loop_count), frames: [])
            var previousEnd: Int32 = 0
            while framesToo, WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var pixels: UnsafeMutablePointer<UInt8>?
                var end: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &pixels, &end) != 0, let pixels else {
                    throw .decoder("frame \(result.frames.count + 1) does not decode")
                }
                result.frames.append(
                    Frame(
                        pixels: Array(UnsafeBufferPointer(start: pixels, count: width * height * 4)),
                        duration: Int(end - previousEnd)))
                previousEnd = end
            }
            return result
        }
    }
}

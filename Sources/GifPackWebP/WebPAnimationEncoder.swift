import CWebP
import GifPackGIF

/// Why a GIF could not be encoded or its WebP not decoded.
package enum WebPCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The GIF did not decode (it should have: call the codec on GIFs the inspector accepted).
    case gif(GIFRejection)
    /// The canvas is larger than WebP allows (16383 x 16383).
    case canvasTooLarge(width: Int, height: Int)
    /// libwebp's encoder or mux refused, with its message.
    case encoder(String)
    /// libwebp's animation decoder refused the WebP.
    case decoder(String)

    package var description: String {
        switch self {
        case .gif(let rejection): "the GIF does not decode: \(rejection)"
        case .canvasTooLarge(let width, let height): "a \(width)x\(height) canvas is larger than WebP allows (16383x16383)"
        case .encoder(let message): "libwebp's encoder: \(message)"
        case .decoder(let message): "libwebp's decoder: \(message)"
        }
    }
}

/// Encodes a GIF's composited frames (``GIFAnimationReader``) into an animated WebP with libwebp's
/// `WebPAnimEncoder`, one thread, under pinned ``WebPEncoderSettings``.
///
/// The WebP keeps the GIF's canvas, its frame count and each frame's delay, and its loop count
/// (``webPLoopCount(gifLoopCount:)``). `WebPAnimEncoder` merges a frame it finds unchanged from the
/// one before into that one's duration (within the lossy tolerance); such a frame is put back with
/// libwebp's mux as a copy of the frame it was merged into (the first copy keeps the canvas, the
/// last disposes as the merged frame did), and each duration is set to the GIF's delay (a delay of
/// 0 included, which the encoder cannot be given): frame n of the WebP shows frame n of the GIF.
/// A GIF of one frame becomes a still WebP (libwebp's mux writes a lone full-canvas frame so): no
/// delay or loop count to keep, the one picture shown.
package enum WebPAnimationEncoder {
    /// The largest canvas side WebP can describe.
    package static let maximumDimension = 16383

    /// The WebP loop count that plays a GIF as browsers do: no NETSCAPE2.0 extension plays once
    /// (1); 0 loops forever (0); a count `n` repeats the animation `n` times after the first
    /// showing (`n + 1`, at most 65535).
    package static func webPLoopCount(gifLoopCount: Int?) -> Int {
        guard let gifLoopCount else { return 1 }
        return gifLoopCount == 0 ? 0 : min(65535, gifLoopCount + 1)
    }

    /// The animated WebP of `gif`, whose loop count is `gifLoopCount` (``GIFInfo/loopCount``).
    package static func encode(gif: [UInt8], gifLoopCount: Int?, settings: WebPEncoderSettings) throws(WebPCodecError) -> [UInt8] {
        let reader: GIFAnimationReader
        do { reader = try GIFAnimationReader(bytes: gif) } catch { throw .gif(error) }
        let (width, height) = (reader.width, reader.height)
        guard width <= maximumDimension, height <= maximumDimension else { throw .canvasTooLarge(width: width, height: height) }

        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw .encoder("WebPConfigInit failed (libwebp version mismatch)") }
        config.quality = settings.quality
        config.method = Int32(settings.method)
        config.lossless = settings.lossless ? 1 : 0
        config.alpha_quality = 100
        config.thread_level = 0
        guard WebPValidateConfig(&config) != 0 else { throw .encoder("the settings \(settings.key) are out of range") }

        var options = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&options) != 0 else { throw .encoder("WebPAnimEncoderOptionsInit failed") }
        options.anim_params.loop_count = Int32(webPLoopCount(gifLoopCount: gifLoopCount))
        options.anim_params.bgcolor = 0
        options.allow_mixed = settings.allowMixed ? 1 : 0
        options.minimize_size = 0
        options.verbose = 0
        guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &options) else {
            throw .encoder("WebPAnimEncoderNew(\(width), \(height)) failed")
        }
        defer { WebPAnimEncoderDelete(encoder) }

        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .encoder("WebPPictureInit failed") }
        defer { WebPPictureFree(&picture) }
        picture.width = Int32(width)
        picture.height = Int32(height)
        picture.use_argb = 1

        // The encoder is given strictly increasing timestamps (a 0 ms delay counts 1 ms), so each
        // WebP frame's start names the GIF frame it begins with.
        var delays: [Int] = []
        var encoderStarts: [Int: Int] = [:]
        var timestamp = 0
        while true {
            let delay: Int?
            do { delay = try reader.nextFrame() } catch { throw .gif(error) }
            guard let delay else { break }
            encoderStarts[timestamp] = delays.count
            delays.append(delay)
            let imported = reader.canvas.withUnsafeBufferPointer { WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(width * 4)) }
            guard imported != 0 else { throw .encoder("WebPPictureImportRGBA failed (out of memory)") }
            guard WebPAnimEncoderAdd(encoder, &picture, Int32(timestamp), &config) != 0 else {
                throw .encoder(encoderError(encoder, frame: delays.count))
            }
            timestamp += max(1, delay)
        }
        guard !delays.isEmpty else { throw .gif(.badFrame("the GIF contains no frames")) }
        guard WebPAnimEncoderAdd(encoder, nil, Int32(timestamp), nil) != 0 else {
            throw .encoder(encoderError(encoder, frame: delays.count + 1))
        }
        var data = WebPData()
        WebPDataInit(&data)
        defer { WebPDataClear(&data) }
        guard WebPAnimEncoderAssemble(encoder, &data) != 0 else { throw .encoder(encoderError(encoder, frame: nil)) }
        return try restoreFrames(
            &data, delays: delays, encoderStarts: encoderStarts, width: width, height: height,
            loopCount: Int(options.anim_params.loop_count))
    }

    private static func encoderError(_ encoder: OpaquePointer, frame: Int?) -> String {
        let text = WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error"
        return frame.map { "frame \($0): \(text)" } ?? text
    }

    /// The assembled WebP with one frame per GIF frame and the GIF's delays; `data` itself when it
    /// has them already. When every frame of several was merged into the first, libwebp assembles
    /// a still image: it becomes the animation's frames again (with the `ANIM` loop count). A GIF
    /// of one frame stays a still WebP.
    private static func restoreFrames(
        _ data: inout WebPData, delays: [Int], encoderStarts: [Int: Int],
        width: Int, height: Int, loopCount: Int
    ) throws(WebPCodecError) -> [UInt8] {
        let assembled = [UInt8](UnsafeBufferPointer(start: data.bytes, count: data.size))
        guard let mux = WebPMuxCreate(&data, 0) else { throw .encoder("WebPMuxCreate refused the assembled WebP") }
        defer { WebPMuxDelete(mux) }
        var count: Int32 = 0
        guard WebPMuxNumChunks(mux, WEBP_CHUNK_ANMF, &count) == WEBP_MUX_OK else { throw .encoder("WebPMuxNumChunks failed") }
        let still = count == 0
        // One GIF frame: libwebp's mux writes a single frame covering the canvas as a still image
        // (no `ANIM`), which shows as the GIF's one frame does.
        if still, delays.count == 1 { return assembled }
        var frames: [WebPMuxFrameInfo] = []
        defer { for index in frames.indices { WebPDataClear(&frames[index].bitstream) } }
        for nth in 1...UInt32(max(1, count)) {
            var frame = WebPMuxFrameInfo()
            guard WebPMuxGetFrame(mux, nth, &frame) == WEBP_MUX_OK else { throw .encoder("WebPMuxGetFrame(\(nth)) failed") }
            if still {
                // The whole canvas, shown as it is: nothing under it to blend with or dispose of.
                (frame.x_offset, frame.y_offset, frame.duration) = (0, 0, Int32(delays.reduce(0) { $0 + max(1, $1) }))
                (frame.id, frame.dispose_method, frame.blend_method) = (WEBP_CHUNK_ANMF, WEBP_MUX_DISPOSE_NONE, WEBP_MUX_NO_BLEND)
            }
            frames.append(frame)
        }
        if !still, frames.count == delays.count, zip(frames, delays).allSatisfy({ Int($0.duration) == $1 }) {
            return assembled
        }
        // Which GIF frame each WebP frame starts with.
        var firsts: [Int] = []
        var start = 0
        for frame in frames {
            guard let first = encoderStarts[start] else {
                throw .encoder("a WebP frame starts at \(start) ms, where no GIF frame starts")
            }
            firsts.append(first)
            start += Int(frame.duration)
        }
        guard let output = WebPMuxNew() else { throw .encoder("WebPMuxNew failed") }
        defer { WebPMuxDelete(output) }
        var params = WebPMuxAnimParams(bgcolor: 0, loop_count: Int32(loopCount))
        guard still || WebPMuxGetAnimationParams(mux, &params) == WEBP_MUX_OK,
            WebPMuxSetCanvasSize(output, Int32(width), Int32(height)) == WEBP_MUX_OK,
            WebPMuxSetAnimationParams(output, &params) == WEBP_MUX_OK
        else {
            throw .encoder("the animation parameters do not carry over")
        }
        for (index, frame) in frames.enumerated() {
            let end = index + 1 < firsts.count ? firsts[index + 1] : delays.count
            for gifFrame in firsts[index]..<end {
                var copy = frame
                copy.duration = Int32(delays[gifFrame])
                if gifFrame != end - 1 { copy.dispose_method = WEBP_MUX_DISPOSE_NONE }
                guard WebPMuxPushFrame(output, &copy, 1) == WEBP_MUX_OK else {
                    throw .encoder("WebPMuxPushFrame for GIF frame \(gifFrame + 1) failed")
                }
            }
        }
        var result = WebPData()
        WebPDataInit(&result)
        defer { WebPDataClear(&result) }
        guard WebPMuxAssemble(output, &result) == WEBP_MUX_OK else { throw .encoder("WebPMuxAssemble failed") }
        return [UInt8](UnsafeBufferPointer(start: result.bytes, count: result.size))
    }
}

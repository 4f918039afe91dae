import CWebP
import GifPackGIF

/// A WebP decoded back with libwebp's `WebPAnimDecoder` and compared frame by frame with the GIF it
/// was encoded from (``GIFAnimationReader``'s composited frames).
package struct WebPComparison: Sendable, Equatable, Codable {
    /// The first structural difference (canvas, frame count, a delay, the loop count), or nil
    /// when the structures match; the SSIM figures then cover every frame. A still WebP matches a
    /// GIF of one frame whatever its delay and loop count.
    package var mismatch: String?
    /// Frames compared.
    package var frames: Int
    /// The mean of the frames' SSIM (``SSIM``).
    package var meanSSIM: Double
    /// The lowest frame SSIM, and which frame (0-based) has it.
    package var worstSSIM: Double
    package var worstFrame: Int

    /// Decodes `webp` and compares it with `gif`, whose loop count is `gifLoopCount`.
    package static func compare(webp: [UInt8], gif: [UInt8], gifLoopCount: Int?) throws(WebPCodecError) -> WebPComparison {
        let reader: GIFAnimationReader
        do { reader = try GIFAnimationReader(bytes: gif) } catch { throw .gif(error) }
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw .decoder("WebPAnimDecoderOptionsInit failed") }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        return try webp.withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) throws(WebPCodecError) -> WebPComparison in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            guard let decoder = WebPAnimDecoderNew(&data, &options) else { throw .decoder("WebPAnimDecoderNew refused the WebP") }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw .decoder("WebPAnimDecoderGetInfo failed") }
            var result = WebPComparison(mismatch: nil, frames: 0, meanSSIM: 1, worstSSIM: 1, worstFrame: 0)
            let (width, height) = (reader.width, reader.height)
            guard Int(info.canvas_width) == width, Int(info.canvas_height) == height else {
                result.mismatch = "canvas \(info.canvas_width)x\(info.canvas_height), the GIF's is \(width)x\(height)"
                return result
            }
            // A still WebP (no `ANIM`: the encoding of a one-frame GIF) has no delay or loop count.
            let still = WebPAnimDecoderGetDemuxer(decoder).map { WebPDemuxGetI($0, WEBP_FF_FORMAT_FLAGS) & ANIMATION_FLAG.rawValue == 0 } ?? false
            let loop = WebPAnimationEncoder.webPLoopCount(gifLoopCount: gifLoopCount)
            guard still || Int(info.loop_count) == loop else {
                result.mismatch = "loop count \(info.loop_count), the GIF's gives \(loop)"
                return result
            }
            var total = 0.0
            var previousEnd: Int32 = 0
            var webpFrames = 0
            let workspace = SSIM.Workspace(width: width, height: height)
            while true {
                let delay: Int?
                do throws(GIFRejection) { delay = try reader.nextFrame() } catch { throw .gif(error) }
                let hasMore = WebPAnimDecoderHasMoreFrames(decoder) != 0
                guard let delay else {
                    if hasMore { result.mismatch = "more frames than the GIF's \(reader.frameCount)" }
                    break
                }
                guard hasMore else {
                    result.mismatch = "\(webpFrames) frames, the GIF has more"
                    break
                }
                var pixels: UnsafeMutablePointer<UInt8>?
                var end: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &pixels, &end) != 0, let pixels else {
                    throw .decoder("frame \(webpFrames + 1) does not decode")
                }
                webpFrames += 1
                guard still || Int(end - previousEnd) == delay else {
                    result.mismatch = "frame \(webpFrames) lasts \(end - previousEnd) ms, the GIF's \(delay) ms"
                    break
                }
                previousEnd = end
                let score = reader.canvas.withUnsafeBufferPointer { gifPixels in
                    SSIM.frameSSIM(gifPixels, UnsafeBufferPointer(start: pixels, count: width * height * 4), workspace: workspace)
                }
                total += score
                if score < result.worstSSIM || result.frames == 0 {
                    result.worstSSIM = score
                    result.worstFrame = result.frames
                }
                result.frames += 1
            }
            if result.frames > 0 { result.meanSSIM = total / Double(result.frames) }
            return result
        }
    }
}

import FuzzSupport
@testable import GifPackGIF
@testable import GifPackGIFCore

/// The still-frame decoder (compositing frames onto the logical screen, disposal, interlacing,
/// transparency) and what is derived from its still: BlurHash, average colour, posters. Only GIFs
/// the inspector accepts reach the decoder in a build, as here (with small limits, so each input
/// stays cheap); its output must be the screen's size.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStill(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let limits = GIFLimits(maxWidth: 256, maxHeight: 256, maxFrames: 32)
    let info: GIFInfo
    do { info = try GIFInspector.inspect(bytes: bytes, limits: limits) } catch {
        return 0
    }
    let still: StillFrame
    do { still = try StillFrameDecoder.decode(bytes: bytes) } catch {
        _ = error.description
        return 0
    }
    Fuzz.require(still.image.width == info.width && still.image.height == info.height,
                 "still \(still.image.width)x\(still.image.height) for a \(info.width)x\(info.height) GIF")
    Fuzz.require(still.image.pixels.count == still.image.width * still.image.height * 3, "still pixel buffer of the wrong size")
    Fuzz.require(still.frameIndex >= 0 && still.frameIndex < max(1, info.frameCount), "still frame \(still.frameIndex) of \(info.frameCount)")
    do {
        let derived = try GIFPlaceholderDeriver.derive(still: still, settings: PlaceholderSettings(posterSizes: [16]))
        Fuzz.require(derived.blurHash.utf8.count == 4 + 2 * 4 * 3, "BlurHash \(derived.blurHash) of the wrong length")
        if let poster = derived.posters[16] {
            Fuzz.require((try? GIFInspector.inspect(bytes: poster)) != nil, "a poster the inspector refuses")
        }
    } catch {
        Fuzz.require(false, "placeholders of an accepted GIF failed: \(error)")
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzStill) }
}

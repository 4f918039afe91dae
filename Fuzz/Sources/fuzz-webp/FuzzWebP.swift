import FuzzSupport
@testable import GifPackGIFCore

/// The client's WebP container walker (`WebPWalker`, GifPackGIFCore): on any bytes it gives info or
/// a rejection, never a crash, a read out of bounds or a hang; what it accepts is within the limits
/// it was given (canvas, frames) and says what its duration and frames are; a file it accepts is
/// refused once cut short by any number of bytes, or once a byte follows it (a pack entry is the
/// file, nothing more).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    for limits in [GIFLimits(maxWidth: 512, maxHeight: 512, maxFrames: 64), GIFLimits(maxWidth: 64, maxHeight: 64, maxFrames: 4)] {
        let walked = Result { () throws(WebPRejection) -> WebPInfo in try WebPWalker.inspect(bytes: bytes, limits: limits) }
        switch walked {
        case .failure(let rejection):
            _ = rejection.description
        case .success(let info):
            Fuzz.require(WebPWalker.hasSignature(bytes), "accepted without the RIFF WEBP signature")
            Fuzz.require(info.width >= 1 && info.width <= limits.maxWidth && info.height >= 1 && info.height <= limits.maxHeight,
                         "accepted a \(info.width)x\(info.height) canvas under \(limits)")
            Fuzz.require(info.frameCount >= 1 && info.frameCount <= limits.maxFrames, "accepted \(info.frameCount) frames under \(limits)")
            Fuzz.require(info.isAnimated || (info.frameCount == 1 && info.durationMilliseconds == 0 && info.loopCount == nil),
                         "a still with animation's info: \(info)")
            for cut in Set([1, 2, 7, bytes.count / 2, bytes.count - 1]) where cut >= 1 && cut <= bytes.count {
                let shorter = Result { () throws(WebPRejection) -> WebPInfo in try WebPWalker.inspect(bytes: Array(bytes.dropLast(cut)), limits: limits) }
                if case .success = shorter { Fuzz.require(false, "accepted the file cut short by \(cut) bytes") }
            }
            let longer = Result { () throws(WebPRejection) -> WebPInfo in try WebPWalker.inspect(bytes: bytes + [0], limits: limits) }
            if case .success = longer { Fuzz.require(false, "accepted a byte after the RIFF chunk") }
        }
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzWebP) }
}

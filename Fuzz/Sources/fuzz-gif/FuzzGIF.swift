import FuzzSupport
@testable import GifPackGIF
@testable import GifPackGIFCore

/// The GIF inspector (giflib's record reader driven by GIFRecordWalker, with LZWPixelCounter
/// counting each frame's pixels): with the counting check and with the decoding check it must give
/// exactly the same verdict (info, or rejection with its message) — the promise LZWPixelCounter's
/// documentation makes — under small limits so that limit paths are reached too; and the client's
/// pure-Swift GIFWalker (GifPackGIFCore) must agree with it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGIF(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    for limits in [GIFLimits(maxWidth: 512, maxHeight: 512, maxFrames: 64), GIFLimits(maxWidth: 64, maxHeight: 64, maxFrames: 4)] {
        let counted = Result { () throws(GIFRejection) -> GIFInfo in try GIFInspector.inspect(bytes: bytes, limits: limits, check: .counting) }
        let decoded = Result { () throws(GIFRejection) -> GIFInfo in try GIFInspector.inspect(bytes: bytes, limits: limits, check: .decoding) }
        Fuzz.require(counted == decoded, "counting and decoding disagree: \(counted) vs \(decoded)")
        if case .failure(let rejection) = counted { _ = rejection.description }
        // The client's pure-Swift walker promises the inspector's verdicts: the same info, or a
        // rejection of the same kind (its own wording).
        let walked = Result { () throws(GIFRejection) -> GIFInfo in try GIFWalker.inspect(bytes: bytes, limits: limits) }
        switch (counted, walked) {
        case (.success(let inspected), .success(let info)):
            Fuzz.require(inspected == info, "GIFInspector and GIFWalker give different info: \(inspected) vs \(info)")
        case (.failure(let inspected), .failure(let walker)):
            Fuzz.require(inspected.reason == walker.reason, "GIFInspector and GIFWalker refuse differently: \(inspected) vs \(walker)")
        default:
            Fuzz.require(false, "GIFInspector and GIFWalker disagree: \(counted) vs \(walked)")
        }
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzGIF) }
}

/// Structural validation of a GIF in pure Swift: the same checks and the same ``GIFInfo`` as the
/// giflib-based `GIFInspector` (module GifPackGIF, the builder's), without giflib, for the client.
///
/// The walker reads the signature ("GIF87a"/"GIF89a"; an HTML error page is ``GIFRejection/notAGIF``),
/// the logical screen descriptor and its global colour table, then the records up to the trailer
/// (0x3B): extensions (graphic control: the frame delay, summed as the duration; the NETSCAPE2.0 or
/// ANIMEXTS1.0 loop count; comments and unknown extensions skipped) and images (descriptor, local
/// colour table, LZW data). Every frame's LZW data is read to its last pixel by
/// ``LZWPixelCounter``; a frame the counter does not vouch for is read again by ``GiflibLZWModel``,
/// which fails exactly where giflib's decoder fails, so the walker accepts what giflib accepts.
/// Bytes after the trailer are ignored.
///
/// Bounds (``GIFLimits``) are checked before any pixel data is read: screen size at the screen
/// descriptor, frame count and cumulative pixel count at each image descriptor. Every frame must be
/// non-empty and lie inside the logical screen. Rejections have the kinds `GIFInspector` gives
/// (a cut-short file is ``GIFRejection/truncated``, a bad frame ``GIFRejection/badFrame(_:)``, any
/// other structural error ``GIFRejection/corrupt(_:)``), with the walker's own wording. Memory is the
/// input plus 8 KiB (32 KiB for a frame read the slow way); the input is never trusted.
///
/// It checks structure, not identity (a pack's index gives each GIF's SHA-256).
///
/// ```swift
/// let info = try GIFWalker.inspect(bytes: gifBytes)   // a 12-frame GIF of 80 ms frames
/// // info.frameCount == 12, info.durationMilliseconds == 960, info.loopCount == 0
/// ```
package enum GIFWalker {
    /// Walks the GIF held in `bytes`.
    package static func inspect(bytes: [UInt8], limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        let result: Result<GIFInfo, GIFRejection> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(GIFRejection) in try inspect(buffer, limits: limits) }
        }
        return try result.get()
    }

    /// Walks the GIF in `bytes` (valid for the call).
    package static func inspect(_ bytes: UnsafeBufferPointer<UInt8>, limits: GIFLimits = .standard) throws(GIFRejection) -> GIFInfo {
        var walk = Walk(bytes: bytes, limits: limits)
        return try walk.run()
    }
}

/// One walk over one GIF.
private struct Walk {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: GIFLimits
    var position = 0
    var frameCount = 0
    var totalPixels = 0
    var durationMilliseconds = 0
    var pendingDelayCentiseconds = 0
    var loopCount: Int?

    init(bytes: UnsafeBufferPointer<UInt8>, limits: GIFLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func run() throws(GIFRejection) -> GIFInfo {
        let version = try signatureVersion()
        position = 6
        let screen = try take(7)
        let width = Int(bytes[screen]) | Int(bytes[screen + 1]) << 8
        let height = Int(bytes[screen + 2]) | Int(bytes[screen + 3]) << 8
        let packed = bytes[screen + 4]
        if packed & 0x80 != 0 { _ = try take(3 << (Int(packed & 0x07) + 1)) }
        guard width <= limits.maxWidth, height <= limits.maxHeight else {
            throw .tooLarge("logical screen \(width)x\(height) exceeds \(limits.maxWidth)x\(limits.maxHeight)")
        }
        guard width > 0, height > 0 else {
            throw .corrupt("logical screen has zero size (\(width)x\(height))")
        }
        records: while true {
            let introducer = bytes[try take(1)]
            switch introducer {
            case 0x2C: try readFrame(screenWidth: width, screenHeight: height)
            case 0x21: try readExtension()
            case 0x3B: break records
            default:
                throw .corrupt(
                    "reading the record after frame \(frameCount): unknown record type 0x"
                        + String(introducer, radix: 16))
            }
        }
        guard frameCount > 0 else { throw .badFrame("the GIF contains no frames") }
        return GIFInfo(
            width: width, height: height, frameCount: frameCount,
            durationMilliseconds: durationMilliseconds, loopCount: loopCount, version: version)
    }

    /// "87a" or "89a" for a valid signature; `truncated` for a strict prefix of one, else `notAGIF`.
    private func signatureVersion() throws(GIFRejection) -> String {
        try GIFFrameRules.signatureVersion(Array(bytes.prefix(6)))
    }

    /// The position of the next `count` bytes, which the walk moves past; `truncated` if the data
    /// ends first.
    private mutating func take(_ count: Int) throws(GIFRejection) -> Int {
        guard bytes.count - position >= count else { throw .truncated }
        defer { position += count }
        return position
    }

    private mutating func readFrame(screenWidth: Int, screenHeight: Int) throws(GIFRejection) {
        let number = frameCount + 1
        guard number <= limits.maxFrames else {
            throw .tooLarge("more than \(limits.maxFrames) frames")
        }
        let descriptor = try take(9)
        let left = Int(bytes[descriptor]) | Int(bytes[descriptor + 1]) << 8
        let top = Int(bytes[descriptor + 2]) | Int(bytes[descriptor + 3]) << 8
        let width = Int(bytes[descriptor + 4]) | Int(bytes[descriptor + 5]) << 8
        let height = Int(bytes[descriptor + 6]) | Int(bytes[descriptor + 7]) << 8
        let packed = bytes[descriptor + 8]
        if packed & 0x80 != 0 { _ = try take(3 << (Int(packed & 0x07) + 1)) }
        let codeSize = Int(bytes[try take(1)])
        // The giflib the builder links (Debian 12's 5.2.1) refuses a minimum code size over 8 when it
        // reads the image header (D_GIF_ERR_READ_FAILED), before any data: so does the walker, so a
        // frame cut right after its code size is bad-frame here too, not truncated (found by fuzzing).
        guard codeSize <= 8 else {
            throw .badFrame("reading the image descriptor of frame \(number): LZW minimum code size \(codeSize) (at most 8)")
        }
        try GIFFrameRules.checkFrame(
            number: number, left: left, top: top, width: width, height: height, screenWidth: screenWidth,
            screenHeight: screenHeight, totalPixels: &totalPixels, limits: limits)
        let dataStart = position
        if let end = countPixels(codeSize: codeSize, pixels: width * height) {
            position = end
        } else {
            do throws(GiflibLZWModel.Failure) {
                position = try GiflibLZWModel.read(bytes, from: dataStart, codeSize: codeSize, pixels: width * height)
            } catch {
                switch error {
                case .truncated: throw .truncated
                case .defect(let reason, let pixel):
                    throw .badFrame("decoding row \(pixel / width) of frame \(number): \(reason)")
                }
            }
        }
        frameCount = number
        durationMilliseconds += pendingDelayCentiseconds * 10
        pendingDelayCentiseconds = 0
    }

    /// The fast path: the frame's data sub-blocks through an ``LZWPixelCounter``, then the rest up
    /// to the block terminator. The position after the terminator, or nil for anything the counter
    /// does not vouch for (the data cut short included), which the slow path then judges.
    private func countPixels(codeSize: Int, pixels: Int) -> Int? {
        guard codeSize <= 8 else { return nil }
        var counter = LZWPixelCounter(minimumCodeSize: codeSize, pixels: pixels)
        var cursor = position
        while true {
            guard cursor < bytes.count else { return nil }
            let length = Int(bytes[cursor])
            cursor += 1
            // The terminator before the last pixel: giflib calls that a defect; the slow path says so.
            if length == 0 { return nil }
            guard bytes.count - cursor >= length else { return nil }
            let block = UnsafeBufferPointer(rebasing: bytes[cursor..<(cursor + length)])
            cursor += length
            do {
                if try counter.consume(block) { break }
            } catch {
                return nil
            }
        }
        return try? GiflibLZWModel.skipSubBlocks(bytes, from: cursor)
    }

    private mutating func readExtension() throws(GIFRejection) {
        let code = bytes[try take(1)]
        var isLoopApplication = false
        var isFirstBlock = true
        while true {
            let length = Int(bytes[try take(1)])
            if length == 0 { return }
            let data = try take(length)
            if code == 0xF9, isFirstBlock, length >= 4 {
                // Graphic control: packed fields (disposal, transparency), delay, transparent index.
                pendingDelayCentiseconds = Int(bytes[data + 1]) | Int(bytes[data + 2]) << 8
            } else if code == 0xFF, isFirstBlock, length == 11 {
                let identifier = Array(bytes[data..<(data + 11)])
                isLoopApplication = identifier == Array("NETSCAPE2.0".utf8) || identifier == Array("ANIMEXTS1.0".utf8)
            } else if isLoopApplication, length >= 3, bytes[data] == 1, loopCount == nil {
                loopCount = Int(bytes[data + 1]) | Int(bytes[data + 2]) << 8
            }
            isFirstBlock = false
        }
    }
}

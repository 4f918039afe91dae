import CGif

/// Walks the records of an opened giflib decoder until the trailer, validating each frame and
/// accumulating ``GIFInfo``. One walker serves one ``GIFInspector`` pass.
///
/// How a frame's pixel data is checked is its ``PixelCheck``: ``PixelCheck/counting`` reads the
/// LZW codes with ``LZWPixelCounter`` and stops at the first frame it cannot vouch for (the walk
/// then throws with ``irregularFrame`` set, and the inspector walks again decoding);
/// ``PixelCheck/decoding`` decodes every row with giflib's `DGifGetLine`, whose verdict is final.
struct GIFRecordWalker {
    enum PixelCheck: Sendable { case counting, decoding }

    private let gif: UnsafeMutablePointer<GifFileType>
    private let source: GIFByteSource
    private let limits: GIFLimits
    private let check: PixelCheck
    /// Set when a counting walk met a frame only giflib's decoder can judge; the error thrown with
    /// it is not a verdict.
    private(set) var irregularFrame = false

    private var frameCount = 0
    private var totalPixels = 0
    private var durationMilliseconds = 0
    private var pendingDelayCentiseconds = 0
    private var loopCount: Int?
    private var line: [GifPixelType] = []

    init(gif: UnsafeMutablePointer<GifFileType>, source: GIFByteSource, limits: GIFLimits, check: PixelCheck) {
        self.gif = gif
        self.source = source
        self.limits = limits
        self.check = check
    }

    mutating func walk(version: String) throws(GIFRejection) -> GIFInfo {
        let width = Int(gif.pointee.SWidth)
        let height = Int(gif.pointee.SHeight)
        guard width <= limits.maxWidth, height <= limits.maxHeight else {
            throw .tooLarge("logical screen \(width)x\(height) exceeds \(limits.maxWidth)x\(limits.maxHeight)")
        }
        guard width > 0, height > 0 else {
            throw .corrupt("logical screen has zero size (\(width)x\(height))")
        }
        if check == .decoding { line = [GifPixelType](repeating: 0, count: width) }

        var record = UNDEFINED_RECORD_TYPE
        repeat {
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                throw failure("reading the record after frame \(frameCount)")
            }
            switch record {
            case IMAGE_DESC_RECORD_TYPE: try readFrame(screenWidth: width, screenHeight: height)
            case EXTENSION_RECORD_TYPE: try readExtension()
            default: break
            }
        } while record != TERMINATE_RECORD_TYPE

        guard frameCount > 0 else { throw .badFrame("the GIF contains no frames") }
        return GIFInfo(
            width: width, height: height, frameCount: frameCount,
            durationMilliseconds: durationMilliseconds, loopCount: loopCount, version: version)
    }

    private mutating func readFrame(screenWidth: Int, screenHeight: Int) throws(GIFRejection) {
        let number = frameCount + 1
        guard number <= limits.maxFrames else {
            throw .tooLarge("more than \(limits.maxFrames) frames")
        }
        guard DGifGetImageHeader(gif) == GIF_OK else {
            throw failure("reading the image descriptor of frame \(number)", inFrame: true)
        }
        let image = gif.pointee.Image
        let (left, top, width, height) = (Int(image.Left), Int(image.Top), Int(image.Width), Int(image.Height))
        try GIFFrameRules.checkFrame(
            number: number, left: left, top: top, width: width, height: height, screenWidth: screenWidth,
            screenHeight: screenHeight, totalPixels: &totalPixels, limits: limits)
        switch check {
        case .counting:
            guard countPixels(width * height) else {
                irregularFrame = true
                throw .badFrame("frame \(number) needs a full decode")
            }
        case .decoding:
            for row in 0..<height {
                let ok = line.withUnsafeMutableBufferPointer { buffer in
                    DGifGetLine(gif, buffer.baseAddress, Int32(width)) == GIF_OK
                }
                guard ok else { throw failure("decoding row \(row) of frame \(number)", inFrame: true) }
            }
        }
        frameCount = number
        durationMilliseconds += pendingDelayCentiseconds * 10
        pendingDelayCentiseconds = 0
    }

    /// Reads the frame's data sub-blocks (`DGifGetCode`, `DGifGetCodeNext`) through an
    /// ``LZWPixelCounter``, then the rest up to the block terminator, as giflib does after a frame's
    /// last row. False for anything the counter does not vouch for, a read failure included.
    private func countPixels(_ pixels: Int) -> Bool {
        var codeSize: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetCode(gif, &codeSize, &block) == GIF_OK, (0...8).contains(codeSize) else { return false }
        var counter = LZWPixelCounter(minimumCodeSize: Int(codeSize), pixels: pixels)
        while let data = block {
            do {
                if try counter.consume(UnsafeBufferPointer(start: data + 1, count: Int(data[0]))) { break }
            } catch {
                return false
            }
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { return false }
        }
        // The terminator before the last pixel: giflib calls that a defect; let it say so.
        guard counter.isComplete else { return false }
        while block != nil {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else { return false }
        }
        return true
    }

    private mutating func readExtension() throws(GIFRejection) {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
            throw failure("reading an extension after frame \(frameCount)")
        }
        var isLoopApplication = false
        var isFirstBlock = true
        while let data = block {
            let length = Int(data[0])
            if code == GRAPHICS_EXT_FUNC_CODE, isFirstBlock, length >= 4 {
                pendingDelayCentiseconds = Int(data[2]) | Int(data[3]) << 8
            } else if code == APPLICATION_EXT_FUNC_CODE, isFirstBlock, length == 11 {
                let identifier = String(decoding: UnsafeBufferPointer(start: data + 1, count: 11), as: UTF8.self)
                isLoopApplication = identifier == "NETSCAPE2.0" || identifier == "ANIMEXTS1.0"
            } else if isLoopApplication, length >= 3, data[1] == 1, loopCount == nil {
                loopCount = Int(data[2]) | Int(data[3]) << 8
            }
            isFirstBlock = false
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                throw failure("reading an extension block after frame \(frameCount)")
            }
        }
    }

    private func failure(_ step: String, inFrame: Bool = false) -> GIFRejection {
        GIFInspector.rejection(source: source, code: gif.pointee.Error, step: step, inFrame: inFrame)
    }
}

import CGif
import Glibc

/// The still a GIF's placeholders and posters are made from, and which frame it is.
package struct StillFrame: Sendable, Equatable {
    /// The composited logical screen, transparent pixels shown over white.
    package var image: RGBImage
    /// 0 for the first frame; larger when the first frame was blank (see ``StillFrameDecoder``).
    package var frameIndex: Int
    /// What compositing it cost.
    package var work: StillFrameWork
}

/// The work ``StillFrameDecoder`` did for one still, counted as it is done.
package struct StillFrameWork: Sendable, Equatable {
    /// Frames decoded and composited.
    package var frames = 0
    /// Every screen pixel read or written: the screen's initial fill, each frame's rectangle
    /// (decoded and drawn, saved and restored for disposal 3, cleared for disposal 2), the blank
    /// test, and an all-blank GIF's final fill. Frames' areas plus a few passes over the screen;
    /// never a pass over the screen per frame.
    package var pixels = 0
}

/// Composites a GIF's frames onto its logical screen, record by record, until it has the still
/// that represents the GIF.
///
/// The rule (also in docs/FORMAT.md, "Placeholders and posters"): the still is the first frame
/// composited onto the logical screen (the screen starts fully transparent; the frame's local or the
/// global colour table and its graphics control extension's transparent index apply; interlaced
/// rows are put in place), with transparent pixels shown over white. A frame is *blank* when every
/// pixel of the screen has the same colour (a fully transparent screen is blank too). When the first
/// frame is blank, the following frames are composited in turn (honouring each frame's disposal
/// method: 2 restores its rectangle to transparent, 3 to what was there before) and the first
/// non-blank screen is the still. When every frame is blank, the first frame is the still.
///
/// The work follows the frames' areas, not the screen's (a 4096x4096 screen with 5,000 blank 1x1
/// frames took minutes when each frame flattened and scanned the whole screen): the screen is kept
/// already composited over white (transparency never shows otherwise), a frame covering at least
/// half the screen is tested for blankness by one scan, a smaller one through a count of the
/// screen's colours kept up to date pixel by pixel, and disposal 3 saves only the frame's
/// rectangle. ``StillFrame/work`` counts it. It reads the file sequentially in 64 KiB chunks and
/// keeps the screen (RGB), one frame rectangle for disposal 3 and one line: memory does not grow
/// with the number of frames. Call it on a GIF that ``GIFInspector`` accepted.
///
/// ```swift
/// let still = try StillFrameDecoder.decode(path: blobPath)
/// print(still.frameIndex, still.image.width, still.image.height, still.work.pixels)
/// ```
package enum StillFrameDecoder {
    package static func decode(path: String) throws(GIFRejection) -> StillFrame {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .corrupt("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try decode(GIFByteSource(fileDescriptor: fd))
    }

    package static func decode(bytes: [UInt8]) throws(GIFRejection) -> StillFrame {
        try decode(GIFByteSource(bytes: bytes))
    }

    private static func decode(_ source: GIFByteSource) throws(GIFRejection) -> StillFrame {
        let box = Unmanaged.passRetained(source)
        defer { box.release() }
        var openError: Int32 = 0
        guard let gif = DGifOpen(box.toOpaque(), stillByteSourceRead, &openError) else {
            throw GIFInspector.rejection(source: source, code: openError, step: "reading the screen descriptor")
        }
        defer {
            var closeError: Int32 = 0
            _ = DGifCloseFile(gif, &closeError)
        }
        var compositor = FrameCompositor(gif: gif, source: source)
        return try compositor.run()
    }
}

/// The record walk behind ``StillFrameDecoder``.
struct FrameCompositor {
    private static let white: UInt32 = 0xFF_FFFF

    private let gif: UnsafeMutablePointer<GifFileType>
    private let source: GIFByteSource
    private let width: Int
    private let height: Int
    /// RGB, the logical screen composited over white.
    private var screen: [UInt8]
    /// How many screen pixels have each colour (``ScreenColors``): exact whenever the screen is
    /// blank; frames covering half the screen or more skip it and reset it after their scan.
    private var colors: ScreenColors
    private var line: [GifPixelType]
    private var transparentIndex: Int?
    private var disposal = 0
    private var frameIndex = 0
    /// The colour of the first frame, when it was blank.
    private var firstBlankColor: UInt32?
    private var work = StillFrameWork()

    init(gif: UnsafeMutablePointer<GifFileType>, source: GIFByteSource) {
        self.gif = gif
        self.source = source
        width = max(1, Int(gif.pointee.SWidth))
        height = max(1, Int(gif.pointee.SHeight))
        screen = [UInt8](repeating: 255, count: width * height * 3)
        colors = ScreenColors(color: Self.white, count: width * height)
        line = [GifPixelType](repeating: 0, count: width)
        work.pixels += width * height
    }

    mutating func run() throws(GIFRejection) -> StillFrame {
        var record = UNDEFINED_RECORD_TYPE
        repeat {
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure("reading a record") }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                if let blankColor = try compositeFrame() {
                    if firstBlankColor == nil { firstBlankColor = blankColor }
                } else {
                    return StillFrame(
                        image: RGBImage(width: width, height: height, pixels: screen),
                        frameIndex: frameIndex - 1, work: work)
                }
            case EXTENSION_RECORD_TYPE:
                try readExtension()
            default:
                break
            }
        } while record != TERMINATE_RECORD_TYPE
        guard let color = firstBlankColor else { throw .badFrame("the GIF contains no frames") }
        // Every frame was blank: the first one, a screen of one colour.
        let (red, green, blue) = (
            UInt8(truncatingIfNeeded: color >> 16), UInt8(truncatingIfNeeded: color >> 8),
            UInt8(truncatingIfNeeded: color)
        )
        screen.withUnsafeMutableBufferPointer { pixels in
            var offset = 0
            while offset < pixels.count {
                pixels[offset] = red; pixels[offset + 1] = green; pixels[offset + 2] = blue
                offset += 3
            }
        }
        work.pixels += width * height
        return StillFrame(image: RGBImage(width: width, height: height, pixels: screen), frameIndex: 0, work: work)
    }

    /// Draws the next frame onto the screen. Returns nil when the screen is then not blank (the
    /// screen is the still), else its one colour, after applying the frame's disposal method for
    /// the frame after it.
    private mutating func compositeFrame() throws(GIFRejection) -> UInt32? {
        let header = try Self.frameHeader(
            gif, screenWidth: width, screenHeight: height, number: frameIndex + 1,
            unreadable: failure("reading an image descriptor", inFrame: true))
        let (left, top, frameWidth, frameHeight) = (header.left, header.top, header.width, header.height)
        let (colorTable, colorCount) = (header.colorTable, header.colorCount)
        var palette = [UInt32](repeating: 0, count: 256)
        for index in 0..<colorCount {
            let color = colorTable[index]
            palette[index] = UInt32(color.Red) << 16 | UInt32(color.Green) << 8 | UInt32(color.Blue)
        }
        let area = frameWidth * frameHeight
        // A frame covering at least half the screen is tested by one scan of the screen (at most
        // twice its area); a smaller one keeps the colour counts up to date pixel by pixel.
        let scans = area >= (width * height + 1) / 2
        let rowBytes = frameWidth * 3
        var saved: [UInt8] = []
        if disposal == 3 {
            saved.reserveCapacity(area * 3)
            for row in top..<(top + frameHeight) {
                let start = (row * width + left) * 3
                saved.append(contentsOf: screen[start..<(start + rowBytes)])
            }
            work.pixels += area
        }
        if line.count < frameWidth { line = [GifPixelType](repeating: 0, count: frameWidth) }
        let transparent = transparentIndex ?? -1
        for row in Self.rowOrder(height: frameHeight, interlaced: header.interlaced) {
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frameWidth)) == GIF_OK }
            guard ok else { throw failure("decoding frame \(frameIndex + 1)", inFrame: true) }
            let start = ((top + row) * width + left) * 3
            Self.draw(
                line: line, count: frameWidth, palette: palette, colorCount: colorCount, transparent: transparent,
                into: &screen, at: start, colors: &colors, counting: !scans)
        }
        work.pixels += area
        work.frames += 1
        let blankColor: UInt32?
        if scans {
            blankColor = uniformColor()
            work.pixels += width * height
            if let blankColor { colors = ScreenColors(color: blankColor, count: width * height) }
        } else {
            blankColor = colors.single
        }
        frameIndex += 1
        let frameDisposal = disposal
        transparentIndex = nil
        disposal = 0
        guard let blankColor else { return nil }
        // The screen is blank: the colour counts are exact again; dispose of the frame.
        switch frameDisposal {
        case 2:
            for row in top..<(top + frameHeight) {
                Self.fill(Self.white, count: frameWidth, into: &screen, at: (row * width + left) * 3, colors: &colors)
            }
            work.pixels += area
        case 3:
            for (index, row) in (top..<(top + frameHeight)).enumerated() {
                Self.copy(
                    saved, from: index * rowBytes, count: frameWidth, into: &screen,
                    at: (row * width + left) * 3, colors: &colors)
            }
            work.pixels += area
        default:
            break
        }
        return blankColor
    }

    /// Draws one decoded line at byte offset `start`, counting colour changes in `colors` when `counting`.
    private static func draw(
        line: [GifPixelType], count: Int, palette: [UInt32], colorCount: Int, transparent: Int,
        into screen: inout [UInt8], at start: Int, colors: inout ScreenColors, counting: Bool
    ) {
        line.withUnsafeBufferPointer { line in
            palette.withUnsafeBufferPointer { palette in
                screen.withUnsafeMutableBufferPointer { screen in
                    var offset = start
                    for x in 0..<count {
                        let index = Int(line[x])
                        if index != transparent, index < colorCount {
                            let color = palette[index]
                            if counting { colors.replace(Self.color(screen, offset), with: color) }
                            screen[offset] = UInt8(truncatingIfNeeded: color >> 16)
                            screen[offset + 1] = UInt8(truncatingIfNeeded: color >> 8)
                            screen[offset + 2] = UInt8(truncatingIfNeeded: color)
                        }
                        offset += 3
                    }
                }
            }
        }
    }

    /// Sets `count` pixels from byte offset `start` to `color`, counting the changes.
    private static func fill(_ color: UInt32, count: Int, into screen: inout [UInt8], at start: Int, colors: inout ScreenColors) {
        screen.withUnsafeMutableBufferPointer { screen in
            var offset = start
            for _ in 0..<count {
                colors.replace(Self.color(screen, offset), with: color)
                screen[offset] = UInt8(truncatingIfNeeded: color >> 16)
                screen[offset + 1] = UInt8(truncatingIfNeeded: color >> 8)
                screen[offset + 2] = UInt8(truncatingIfNeeded: color)
                offset += 3
            }
        }
    }

    /// Copies `count` pixels of `saved` (from byte `from`) back to byte offset `start`, counting the changes.
    private static func copy(
        _ saved: [UInt8], from: Int, count: Int, into screen: inout [UInt8], at start: Int,
        colors: inout ScreenColors
    ) {
        saved.withUnsafeBufferPointer { saved in
            screen.withUnsafeMutableBufferPointer { screen in
                for pixel in 0..<count {
                    let color = Self.color(saved, from + pixel * 3)
                    let offset = start + pixel * 3
                    colors.replace(Self.color(screen, offset), with: color)
                    screen[offset] = saved[from + pixel * 3]
                    screen[offset + 1] = saved[from + pixel * 3 + 1]
                    screen[offset + 2] = saved[from + pixel * 3 + 2]
                }
            }
        }
    }

    private static func color(_ pixels: UnsafeMutableBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(pixels[offset]) << 16 | UInt32(pixels[offset + 1]) << 8 | UInt32(pixels[offset + 2])
    }

    private static func color(_ pixels: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(pixels[offset]) << 16 | UInt32(pixels[offset + 1]) << 8 | UInt32(pixels[offset + 2])
    }

    /// The descriptor of the frame `gif` is at (giflib's `DGifGetImageHeader`), held to the logical
    /// screen, and its colour table (the frame's own, else the global one, at most 256 entries).
    /// `number` (1-based) names the frame in a refusal; `unreadable` is the refusal when giflib
    /// cannot read the descriptor. One reading for every decoder of frames here (stills, and the
    /// WebP encoder's ``GIFAnimationReader``).
    static func frameHeader(
        _ gif: UnsafeMutablePointer<GifFileType>, screenWidth: Int, screenHeight: Int, number: Int,
        unreadable: @autoclosure () -> GIFRejection
    ) throws(GIFRejection) -> FrameHeader {
        guard DGifGetImageHeader(gif) == GIF_OK else { throw unreadable() }
        let desc = gif.pointee.Image
        let (left, top, width, height) = (Int(desc.Left), Int(desc.Top), Int(desc.Width), Int(desc.Height))
        guard width > 0, height > 0, left >= 0, top >= 0, left + width <= screenWidth, top + height <= screenHeight else {
            throw .badFrame("frame \(number) lies outside the logical screen")
        }
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colorTable = map.pointee.Colors else {
            throw .badFrame("frame \(number) has no colour table")
        }
        return FrameHeader(
            left: left, top: top, width: width, height: height, interlaced: desc.Interlace, colorTable: colorTable,
            colorCount: max(0, min(256, Int(map.pointee.ColorCount))))
    }

    /// What a graphics control extension says of the frame after it.
    struct GraphicsControl {
        let disposal: Int
        let delayMilliseconds: Int
        let transparentIndex: Int?
    }

    /// Reads the extension `gif` is at, every block of it, and returns its graphics control when it
    /// is one (read from its first block, of 4 bytes or more). `failure` names the step giflib
    /// could not do. One reading for every decoder of frames here (stills, and the WebP encoder's
    /// ``GIFAnimationReader``).
    static func readExtension(
        _ gif: UnsafeMutablePointer<GifFileType>, failure: (String) -> GIFRejection
    ) throws(GIFRejection) -> GraphicsControl? {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure("reading an extension") }
        var control: GraphicsControl?
        var isFirst = true
        while let data = block {
            if code == GRAPHICS_EXT_FUNC_CODE, isFirst, Int(data[0]) >= 4 {
                let packed = Int(data[1])
                control = GraphicsControl(
                    disposal: (packed >> 2) & 0x07, delayMilliseconds: (Int(data[2]) | Int(data[3]) << 8) * 10,
                    transparentIndex: packed & 0x01 != 0 ? Int(data[4]) : nil)
            }
            isFirst = false
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure("reading an extension block") }
        }
        return control
    }

    /// A frame's place on the logical screen and its colour table (``frameHeader(_:screenWidth:screenHeight:number:unreadable:)``).
    struct FrameHeader {
        let left: Int
        let top: Int
        let width: Int
        let height: Int
        let interlaced: Bool
        let colorTable: UnsafeMutablePointer<GifColorType>
        let colorCount: Int
    }

    /// File row order to screen row: interlaced frames come in four passes.
    static func rowOrder(height: Int, interlaced: Bool) -> [Int] {
        guard interlaced else { return Array(0..<height) }
        var rows: [Int] = []
        rows.reserveCapacity(height)
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows += stride(from: start, to: height, by: step)
        }
        return rows
    }

    /// The screen's one colour, or nil when it has several (one scan).
    private func uniformColor() -> UInt32? {
        screen.withUnsafeBufferPointer { pixels in
            let (red, green, blue) = (pixels[0], pixels[1], pixels[2])
            var index = 3
            while index < pixels.count {
                if pixels[index] != red || pixels[index + 1] != green || pixels[index + 2] != blue { return nil }
                index += 3
            }
            return UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue)
        }
    }

    private mutating func readExtension() throws(GIFRejection) {
        guard let control = try FrameCompositor.readExtension(gif, failure: { failure($0) }) else { return }
        (disposal, transparentIndex) = (control.disposal, control.transparentIndex)
    }

    private func failure(_ step: String, inFrame: Bool = false) -> GIFRejection {
        GIFInspector.rejection(source: source, code: gif.pointee.Error, step: step, inFrame: inFrame)
    }
}

/// How many pixels of the screen have each colour: the screen is blank when one colour has them all.
struct ScreenColors {
    private var counts: [UInt32: Int]

    init(color: UInt32, count: Int) { counts = [color: count] }

    /// One pixel changes from `old` to `new`.
    mutating func replace(_ old: UInt32, with new: UInt32) {
        guard old != new else { return }
        if let count = counts[old], count > 1 { counts[old] = count - 1 } else { counts[old] = nil }
        counts[new, default: 0] += 1
    }

    /// The colour of every pixel, or nil when there are several.
    var single: UInt32? { counts.count == 1 ? counts.first?.key : nil }
}

/// giflib `InputFunc` for ``StillFrameDecoder``.
private let stillByteSourceRead: InputFunc = { gif, destination, count in
    guard let gif, let destination, let userData = gif.pointee.UserData, count > 0 else { return 0 }
    let source = Unmanaged<GIFByteSource>.fromOpaque(userData).takeUnretainedValue()
    return Int32(source.read(into: destination, count: Int(count)))
}

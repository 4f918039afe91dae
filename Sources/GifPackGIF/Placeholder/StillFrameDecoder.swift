import CGif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The still a GIF's placeholders and posters are made from, and which frame it is.
public struct StillFrame: Sendable, Equatable {
    /// The composited logical screen, transparent pixels shown over white.
    public var image: RGBImage
    /// 0 for the first frame; larger when the first frame was blank (see ``StillFrameDecoder``).
    public var frameIndex: Int
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
/// It reads the file sequentially in 64 KiB chunks and keeps only the screen (RGBA), a copy for
/// disposal method 3 and one line: memory does not grow with the number of frames.
/// Call it on a GIF that ``GIFInspector`` accepted.
///
/// ```swift
/// let still = try StillFrameDecoder.decode(path: blobPath)
/// print(still.frameIndex, still.image.width, still.image.height)
/// ```
public enum StillFrameDecoder {
    public static func decode(path: String) throws(GIFRejection) -> StillFrame {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .corrupt("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try decode(GIFByteSource(fileDescriptor: fd))
    }

    public static func decode(bytes: [UInt8]) throws(GIFRejection) -> StillFrame {
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
    private let gif: UnsafeMutablePointer<GifFileType>
    private let source: GIFByteSource
    private let width: Int
    private let height: Int
    /// RGBA, the logical screen.
    private var screen: [UInt8]
    private var line: [GifPixelType]
    private var transparentIndex: Int?
    private var disposal = 0
    private var frameIndex = 0
    private var first: RGBImage?

    init(gif: UnsafeMutablePointer<GifFileType>, source: GIFByteSource) {
        self.gif = gif
        self.source = source
        width = max(1, Int(gif.pointee.SWidth))
        height = max(1, Int(gif.pointee.SHeight))
        screen = [UInt8](repeating: 0, count: width * height * 4)
        line = [GifPixelType](repeating: 0, count: width)
    }

    mutating func run() throws(GIFRejection) -> StillFrame {
        var record = UNDEFINED_RECORD_TYPE
        repeat {
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure("reading a record") }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                let image = try compositeFrame()
                if !isBlank(image) { return StillFrame(image: image, frameIndex: frameIndex - 1) }
                if first == nil { first = image }
            case EXTENSION_RECORD_TYPE:
                try readExtension()
            default:
                break
            }
        } while record != TERMINATE_RECORD_TYPE
        guard let first else { throw .badFrame("the GIF contains no frames") }
        return StillFrame(image: first, frameIndex: 0)
    }

    /// Draws the next frame onto the screen, returns the screen flattened over white, then applies
    /// the frame's disposal method for the frame after it.
    private mutating func compositeFrame() throws(GIFRejection) -> RGBImage {
        guard DGifGetImageHeader(gif) == GIF_OK else { throw failure("reading an image descriptor", inFrame: true) }
        let desc = gif.pointee.Image
        let (left, top, frameWidth, frameHeight) = (Int(desc.Left), Int(desc.Top), Int(desc.Width), Int(desc.Height))
        guard frameWidth > 0, frameHeight > 0, left + frameWidth <= width, top + frameHeight <= height else {
            throw .badFrame("frame \(frameIndex + 1) lies outside the logical screen")
        }
        guard let map = desc.ColorMap ?? gif.pointee.SColorMap, let colors = map.pointee.Colors else {
            throw .badFrame("frame \(frameIndex + 1) has no colour table")
        }
        let colorCount = Int(map.pointee.ColorCount)
        let saved = disposal == 3 ? screen : nil
        if line.count < frameWidth { line = [GifPixelType](repeating: 0, count: frameWidth) }
        for row in Self.rowOrder(height: frameHeight, interlaced: desc.Interlace) {
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frameWidth)) == GIF_OK }
            guard ok else { throw failure("decoding frame \(frameIndex + 1)", inFrame: true) }
            var offset = ((top + row) * width + left) * 4
            for x in 0..<frameWidth {
                let index = Int(line[x])
                if index != transparentIndex, index < colorCount {
                    let color = colors[index]
                    screen[offset] = color.Red
                    screen[offset + 1] = color.Green
                    screen[offset + 2] = color.Blue
                    screen[offset + 3] = 255
                }
                offset += 4
            }
        }
        let image = flattened()
        switch disposal {
        case 2:
            for row in top..<(top + frameHeight) {
                let start = (row * width + left) * 4
                for offset in start..<(start + frameWidth * 4) { screen[offset] = 0 }
            }
        case 3:
            if let saved { screen = saved }
        default:
            break
        }
        frameIndex += 1
        transparentIndex = nil
        disposal = 0
        return image
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

    /// The screen composited over white, as RGB.
    private func flattened() -> RGBImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 3)
        var source = 0
        var target = 0
        while source < screen.count {
            if screen[source + 3] != 0 {
                pixels[target] = screen[source]
                pixels[target + 1] = screen[source + 1]
                pixels[target + 2] = screen[source + 2]
            }
            source += 4
            target += 3
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// True when the screen is fully transparent or every pixel has one colour.
    private func isBlank(_ image: RGBImage) -> Bool {
        var anyOpaque = false
        var offset = 3
        while offset < screen.count {
            if screen[offset] != 0 { anyOpaque = true; break }
            offset += 4
        }
        guard anyOpaque else { return true }
        let pixels = image.pixels
        let (red, green, blue) = (pixels[0], pixels[1], pixels[2])
        var index = 3
        while index < pixels.count {
            if pixels[index] != red || pixels[index + 1] != green || pixels[index + 2] != blue { return false }
            index += 3
        }
        return true
    }

    private mutating func readExtension() throws(GIFRejection) {
        var code: Int32 = 0
        var block: UnsafeMutablePointer<GifByteType>?
        guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure("reading an extension") }
        var isFirst = true
        while let data = block {
            if code == GRAPHICS_EXT_FUNC_CODE, isFirst, Int(data[0]) >= 4 {
                let packed = Int(data[1])
                disposal = (packed >> 2) & 0x07
                transparentIndex = packed & 0x01 != 0 ? Int(data[4]) : nil
            }
            isFirst = false
            guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure("reading an extension block") }
        }
    }

    private func failure(_ step: String, inFrame: Bool = false) -> GIFRejection {
        GIFInspector.rejection(source: source, code: gif.pointee.Error, step: step, inFrame: inFrame)
    }
}

/// giflib `InputFunc` for ``StillFrameDecoder``.
private let stillByteSourceRead: InputFunc = { gif, destination, count in
    guard let gif, let destination, let userData = gif.pointee.UserData, count > 0 else { return 0 }
    let source = Unmanaged<GIFByteSource>.fromOpaque(userData).takeUnretainedValue()
    return Int32(source.read(into: destination, count: Int(count)))
}

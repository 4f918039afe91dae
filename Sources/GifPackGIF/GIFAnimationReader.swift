import CGif
import Glibc

/// Composites a GIF's frames onto its logical screen one at a time, as RGBA with straight alpha:
/// what a browser shows for each frame, and what the WebP rendition is encoded from and compared
/// with.
///
/// The canvas starts fully transparent (the screen descriptor's background colour is ignored, as
/// browsers and libwebp's `gif2webp` do). Each frame is drawn with its local or the global colour
/// table; its graphics control extension's transparent index leaves the canvas pixel as it was,
/// interlaced rows are put in place. After a frame has been delivered its disposal method applies
/// before the next is drawn: 2 clears its rectangle to transparent, 3 restores what was there
/// before it, 0 and 1 keep it. The delay is the extension's, in milliseconds (centiseconds x 10;
/// a frame without one has 0). Memory is the canvas, one saved rectangle for disposal 3 and one
/// line, whatever the number of frames. Call it on a GIF that ``GIFInspector`` accepted.
///
/// ```swift
/// let reader = try GIFAnimationReader(bytes: gif)
/// while let delay = try reader.nextFrame() {
///     encode(reader.canvas, width: reader.width, height: reader.height, delay: delay)
/// }
/// ```
package final class GIFAnimationReader {
    package let width: Int
    package let height: Int
    /// The composited canvas after the last ``nextFrame()``: `width * height * 4` bytes, RGBA.
    package private(set) var canvas: [UInt8]
    /// Frames delivered so far.
    package private(set) var frameCount = 0

    private let source: GIFByteSource
    private let box: Unmanaged<GIFByteSource>
    private let gif: UnsafeMutablePointer<GifFileType>
    private var line: [GifPixelType]
    private var transparentIndex: Int?
    private var disposal = 0
    private var delayMilliseconds = 0
    /// The last frame's rectangle, disposal and (disposal 3) the pixels under it.
    private var pending: (left: Int, top: Int, width: Int, height: Int, disposal: Int, saved: [UInt8])?
    private var finished = false

    package convenience init(bytes: [UInt8]) throws(GIFRejection) {
        try self.init(source: GIFByteSource(bytes: bytes))
    }

    private init(source: GIFByteSource) throws(GIFRejection) {
        self.source = source
        box = Unmanaged.passRetained(source)
        var openError: Int32 = 0
        guard let gif = DGifOpen(box.toOpaque(), animationByteSourceRead, &openError) else {
            box.release()
            throw GIFInspector.rejection(source: source, code: openError, step: "reading the screen descriptor")
        }
        self.gif = gif
        width = max(1, Int(gif.pointee.SWidth))
        height = max(1, Int(gif.pointee.SHeight))
        canvas = [UInt8](repeating: 0, count: width * height * 4)
        line = [GifPixelType](repeating: 0, count: width)
    }

    deinit {
        var closeError: Int32 = 0
        _ = DGifCloseFile(gif, &closeError)
        box.release()
    }

    /// Composites the next frame into ``canvas`` and returns its delay in milliseconds, or nil
    /// after the last frame.
    package func nextFrame() throws(GIFRejection) -> Int? {
        guard !finished else { return nil }
        var record = UNDEFINED_RECORD_TYPE
        repeat {
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure("reading a record") }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                dispose()
                try drawFrame()
                frameCount += 1
                let delay = delayMilliseconds
                transparentIndex = nil
                disposal = 0
                delayMilliseconds = 0
                return delay
            case EXTENSION_RECORD_TYPE:
                try readExtension()
            default:
                break
            }
        } while record != TERMINATE_RECORD_TYPE
        finished = true
        return nil
    }

    /// Applies the previous frame's disposal method.
    private func dispose() {
        guard let frame = pending else { return }
        pending = nil
        let rowBytes = frame.width * 4
        switch frame.disposal {
        case 2:
            for row in frame.top..<(frame.top + frame.height) {
                let start = (row * width + frame.left) * 4
                canvas.replaceSubrange(start..<(start + rowBytes), with: repeatElement(0, count: rowBytes))
            }
        case 3:
            for (index, row) in (frame.top..<(frame.top + frame.height)).enumerated() {
                let start = (row * width + frame.left) * 4
                canvas.replaceSubrange(start..<(start + rowBytes), with: frame.saved[(index * rowBytes)..<((index + 1) * rowBytes)])
            }
        default:
            break
        }
    }

    private func drawFrame() throws(GIFRejection) {
        let header = try FrameCompositor.frameHeader(
            gif, screenWidth: width, screenHeight: height, number: frameCount + 1,
            unreadable: failure("reading an image descriptor", inFrame: true))
        let (left, top, frameWidth, frameHeight) = (header.left, header.top, header.width, header.height)
        let (colorTable, colorCount) = (header.colorTable, header.colorCount)
        // RGBA per index; indexes past the table and the transparent index leave the canvas as it is.
        var palette = [UInt32](repeating: 0, count: 256)
        var drawn = [Bool](repeating: false, count: 256)
        for index in 0..<colorCount where index != transparentIndex {
            let color = colorTable[index]
            palette[index] = UInt32(color.Red) | UInt32(color.Green) << 8 | UInt32(color.Blue) << 16 | 0xFF00_0000
            drawn[index] = true
        }
        let rowBytes = frameWidth * 4
        var saved: [UInt8] = []
        if disposal == 3 {
            saved.reserveCapacity(frameHeight * rowBytes)
            for row in top..<(top + frameHeight) {
                let start = (row * width + left) * 4
                saved.append(contentsOf: canvas[start..<(start + rowBytes)])
            }
        }
        if line.count < frameWidth { line = [GifPixelType](repeating: 0, count: frameWidth) }
        for row in FrameCompositor.rowOrder(height: frameHeight, interlaced: header.interlaced) {
            let ok = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frameWidth)) == GIF_OK }
            guard ok else { throw failure("decoding frame \(frameCount + 1)", inFrame: true) }
            let start = ((top + row) * width + left) * 4
            line.withUnsafeBufferPointer { line in
                palette.withUnsafeBufferPointer { palette in
                    drawn.withUnsafeBufferPointer { drawn in
                        canvas.withUnsafeMutableBufferPointer { canvas in
                            var offset = start
                            for x in 0..<frameWidth {
                                let index = Int(line[x])
                                if drawn[index] {
                                    let color = palette[index]
                                    canvas[offset] = UInt8(truncatingIfNeeded: color)
                                    canvas[offset + 1] = UInt8(truncatingIfNeeded: color >> 8)
                                    canvas[offset + 2] = UInt8(truncatingIfNeeded: color >> 16)
                                    canvas[offset + 3] = 255
                                }
                                offset += 4
                            }
                        }
                    }
                }
            }
        }
        pending = (left, top, frameWidth, frameHeight, disposal, saved)
    }

    private func readExtension() throws(GIFRejection) {
        guard let control = try FrameCompositor.readExtension(gif, failure: { failure($0) }) else { return }
        (disposal, delayMilliseconds, transparentIndex) = (control.disposal, control.delayMilliseconds, control.transparentIndex)
    }

    private func failure(_ step: String, inFrame: Bool = false) -> GIFRejection {
        GIFInspector.rejection(source: source, code: gif.pointee.Error, step: step, inFrame: inFrame)
    }
}

/// giflib `InputFunc` for ``GIFAnimationReader``.
private let animationByteSourceRead: InputFunc = { gif, destination, count in
    guard let gif, let destination, let userData = gif.pointee.UserData, count > 0 else { return 0 }
    let source = Unmanaged<GIFByteSource>.fromOpaque(userData).takeUnretainedValue()
    return Int32(source.read(into: destination, count: Int(count)))
}

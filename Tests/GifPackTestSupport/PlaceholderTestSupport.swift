import CGif
import Foundation
import GifPackGIF
import Testing

/// PyPI's `blurhash` 1.1.5 in the test virtual environment (`make test-venv`, `.venv-test/`).
enum ReferenceBlurHash {
    static var python: String {
        #filePath.replacingOccurrences(of: "Tests/GifPackTestSupport/PlaceholderTestSupport.swift", with: ".venv-test/bin/python")
    }

    /// The reference decoder's pixels of `hash` at `width` x `height` (PyPI blurhash 1.1.5,
    /// `blurhash.decode`), row by row, three bytes a pixel.
    static func decode(_ hash: String, width: Int, height: Int) async throws -> [UInt8] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("the reference BlurHash decoder is missing: \(python) does not exist; run `make test-venv`")
            throw ReferenceError.missing
        }
        let script = """
            import json, sys, blurhash
            rows = blurhash.decode(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
            print(json.dumps([channel for row in rows for pixel in row for channel in pixel]))
            """
        let result = try await run(python, ["-c", script, hash, "\(width)", "\(height)"])
        guard result.status == 0, let values = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [Int] else {
            Issue.record("the reference BlurHash decoder failed: \(result.error)")
            throw ReferenceError.missing
        }
        return values.map { UInt8(clamping: $0) }
    }

    /// BlurHashes of `images` from the reference encoder, in order. Fails the test (and throws)
    /// when the virtual environment is missing: run `make test-venv`.
    static func encode(_ images: [(RGBImage, x: Int, y: Int)], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record(
                "the reference BlurHash encoder is missing: \(python) does not exist; run `make test-venv`",
                sourceLocation: sourceLocation)
            throw ReferenceError.missing
        }
        let workspace = try TemporaryDirectory()
        let jobs = images.map { image, x, y -> [String: Any] in
            ["w": image.width, "h": image.height, "x": x, "y": y, "p": image.pixels.map { Int($0) }]
        }
        let input = workspace.file("images.json")
        try JSONSerialization.data(withJSONObject: jobs).write(to: URL(fileURLWithPath: input))
        let script = """
            import json, sys, blurhash
            from importlib.metadata import version
            assert version("blurhash") == "1.1.5", version("blurhash")
            for job in json.load(open(sys.argv[1])):
                w, h, p = job["w"], job["h"], job["p"]
                rows = [[p[(y * w + x) * 3:(y * w + x) * 3 + 3] for x in range(w)] for y in range(h)]
                print(blurhash.encode(rows, components_x=job["x"], components_y=job["y"]))
            """
        let result = try await run(python, ["-c", script, input])
        guard result.status == 0 else {
            Issue.record("the reference BlurHash encoder failed: \(result.error)", sourceLocation: sourceLocation)
            throw ReferenceError.failed
        }
        return result.output.split(separator: "\n").map(String.init)
    }

    enum ReferenceError: Error { case missing, failed }
}

/// A plain area downscale written independently of ``AreaDownscaler``: every target pixel
/// integrates the source over its rectangle in double precision.
func referenceAreaDownscale(_ image: RGBImage, width: Int, height: Int) -> [Double] {
    var output = [Double](repeating: 0, count: width * height * 3)
    let sx = Double(image.width) / Double(width)
    let sy = Double(image.height) / Double(height)
    for ty in 0..<height {
        for tx in 0..<width {
            let (x0, x1, y0, y1) = (Double(tx) * sx, Double(tx + 1) * sx, Double(ty) * sy, Double(ty + 1) * sy)
            var sum = [0.0, 0.0, 0.0]
            var area = 0.0
            for y in Int(y0)..<min(image.height, Int(y1.rounded(.up))) {
                let wy = min(y1, Double(y + 1)) - max(y0, Double(y))
                for x in Int(x0)..<min(image.width, Int(x1.rounded(.up))) {
                    let wx = min(x1, Double(x + 1)) - max(x0, Double(x))
                    let weight = wx * wy
                    guard weight > 0 else { continue }
                    for c in 0..<3 { sum[c] += Double(image.pixels[(y * image.width + x) * 3 + c]) * weight }
                    area += weight
                }
            }
            for c in 0..<3 { output[(ty * width + tx) * 3 + c] = sum[c] / area }
        }
    }
    return output
}

/// Mean absolute error per channel (0...255) between `pixels` and `reference`.
func meanAbsoluteError(_ pixels: [UInt8], _ reference: [Double]) -> [Double] {
    var sums = [0.0, 0.0, 0.0]
    for index in 0..<pixels.count { sums[index % 3] += abs(Double(pixels[index]) - reference[index]) }
    return sums.map { $0 / Double(pixels.count / 3) }
}

/// One frame for ``writeTestGIF(width:height:palette:frames:)``.
struct TestFrame {
    var left = 0, top = 0, width: Int, height: Int
    /// Palette indices, row by row.
    var indices: [UInt8]
    var transparentIndex: Int?
    var disposal = 0
    var interlaced = false
    var delayCentiseconds = 10
}

/// Writes a GIF89a with giflib's encoder: one global palette (RGB triples, 2...256 colours, a power
/// of two), each frame with a graphics control extension; a NETSCAPE2.0 extension when `loopCount`
/// is given.
func writeTestGIF(
    width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], frames: [TestFrame],
    loopCount: Int? = nil
) throws -> [UInt8] {
    final class Sink { var bytes: [UInt8] = [] }
    let sink = Sink()
    let box = Unmanaged.passRetained(sink)
    defer { box.release() }
    var error: Int32 = 0
    let writer: OutputFunc = { gif, data, count in
        let sink = Unmanaged<Sink>.fromOpaque(gif!.pointee.UserData!).takeUnretainedValue()
        sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
        return count
    }
    guard let gif = EGifOpen(box.toOpaque(), writer, &error) else { throw TestGIFError.encoder("EGifOpen \(error)") }
    EGifSetGifVersion(gif, true)
    var colors = palette.map { GifColorType(Red: $0.0, Green: $0.1, Blue: $0.2) }
    let map = GifMakeMapObject(Int32(colors.count), &colors)
    defer { GifFreeMapObject(map) }
    var ok = EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, map) == GIF_OK
    if let loopCount {
        let identifier = Array("NETSCAPE2.0".utf8)
        let subBlock: [UInt8] = [1, UInt8(loopCount & 0xFF), UInt8(loopCount >> 8)]
        ok =
            ok && EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK
            && EGifPutExtensionBlock(gif, Int32(identifier.count), identifier) == GIF_OK
            && EGifPutExtensionBlock(gif, Int32(subBlock.count), subBlock) == GIF_OK
            && EGifPutExtensionTrailer(gif) == GIF_OK
    }
    for frame in frames where ok {
        var control: [GifByteType] = [
            GifByteType((frame.disposal << 2) | (frame.transparentIndex == nil ? 0 : 1)),
            GifByteType(frame.delayCentiseconds & 0xFF), GifByteType(frame.delayCentiseconds >> 8),
            GifByteType(frame.transparentIndex ?? 0)
        ]
        ok = ok && EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, &control) == GIF_OK
        ok =
            ok
            && EGifPutImageDesc(
                gif, Int32(frame.left), Int32(frame.top), Int32(frame.width), Int32(frame.height),
                frame.interlaced, nil) == GIF_OK
        let rows =
            frame.interlaced
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { Array(stride(from: $0.0, to: frame.height, by: $0.1)) }
            : Array(0..<frame.height)
        var indices = frame.indices
        for row in rows where ok {
            ok = indices.withUnsafeMutableBufferPointer {
                EGifPutLine(gif, $0.baseAddress! + row * frame.width, Int32(frame.width)) == GIF_OK
            }
        }
    }
    var closeError: Int32 = 0
    let closed = EGifCloseFile(gif, &closeError) == GIF_OK
    guard ok, closed else { throw TestGIFError.encoder("giflib error \(closeError)") }
    return sink.bytes
}

enum TestGIFError: Error { case encoder(String) }

// webp-timing: where the WebP rendition's CPU time goes, stage by stage, on real GIFs.
//
//     webp-timing [--passes N] GIF...
//
// For each GIF, in thread CPU time (steady on a busy machine; the best of N passes, default 3):
// decoding the GIF's frames (GIFAnimationReader), encoding rung q75 with and without mixed
// frames (WebPAnimationEncoder), decoding the WebP back (WebPFrames), the SSIM of every frame
// pair (SSIM, and the direct 11-tap filter it replaced, checked to give the same figures), the
// whole comparison (WebPComparison) and the whole rendition (WebPRenditionEncoder, policy
// .standard). Prints one line per GIF and the totals; built by bench/webp-timing.sh.
import Glibc
import GifPackGIF
import GifPackWebP

func threadCPU() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func best<T>(_ passes: Int, _ body: () throws -> T) rethrows -> (ms: Double, value: T) {
    var fastest = Double.infinity
    var value: T?
    for _ in 0..<passes {
        let start = threadCPU()
        value = try body()
        fastest = min(fastest, (threadCPU() - start) * 1000)
    }
    return (fastest, value!)
}

func readFile(_ path: String) -> [UInt8] {
    guard let file = fopen(path, "rb") else { fatalError("cannot open \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes
}

/// The direct filter the gate used before: each pixel's 11 taps clamped at the borders, five
/// planes filtered one after the other.
enum ReferenceSSIM {
    static func frameSSIM(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> Double {
        let overWhite = ssim(luma(first, width, height, 255), luma(second, width, height, 255), width, height)
        let opaque = (0..<(width * height)).allSatisfy { first[$0 * 4 + 3] == 255 && second[$0 * 4 + 3] == 255 }
        if opaque { return overWhite }
        return min(overWhite, ssim(luma(first, width, height, 0), luma(second, width, height, 0), width, height))
    }

    static func luma(_ pixels: UnsafeBufferPointer<UInt8>, _ width: Int, _ height: Int, _ background: Float) -> [Float] {
        (0..<(width * height)).map { index in
            let offset = index * 4
            let alpha = Float(pixels[offset + 3]) / 255
            let under = background * (1 - alpha)
            let red = Float(pixels[offset]) * alpha + under
            let green = Float(pixels[offset + 1]) * alpha + under
            let blue = Float(pixels[offset + 2]) * alpha + under
            return 0.299 * red + 0.587 * green + 0.114 * blue
        }
    }

    static let window: [Float] = {
        let weights = (-5...5).map { offset in Float(exp(-Double(offset * offset) / (2 * 1.5 * 1.5))) }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }()

    static func ssim(_ first: [Float], _ second: [Float], _ width: Int, _ height: Int) -> Double {
        let count = width * height
        let meanFirst = blur(first, width, height), meanSecond = blur(second, width, height)
        let firstSquares = blur(first.map { $0 * $0 }, width, height)
        let secondSquares = blur(second.map { $0 * $0 }, width, height)
        let crossProducts = blur(zip(first, second).map { $0 * $1 }, width, height)
        let c1: Float = (0.01 * 255) * (0.01 * 255)
        let c2: Float = (0.03 * 255) * (0.03 * 255)
        var total = 0.0
        for index in 0..<count {
            let (muA, muB) = (meanFirst[index], meanSecond[index])
            let varianceA = firstSquares[index] - muA * muA
            let varianceB = secondSquares[index] - muB * muB
            let covariance = crossProducts[index] - muA * muB
            let numerator = (2 * muA * muB + c1) * (2 * covariance + c2)
            let denominator = (muA * muA + muB * muB + c1) * (varianceA + varianceB + c2)
            total += Double(numerator / denominator)
        }
        return total / Double(count)
    }

    static func blur(_ plane: [Float], _ width: Int, _ height: Int) -> [Float] {
        var rows = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var sum: Float = 0
                for tap in 0..<11 { sum += window[tap] * plane[y * width + min(width - 1, max(0, x + tap - 5))] }
                rows[y * width + x] = sum
            }
        }
        var result = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var sum: Float = 0
                for tap in 0..<11 { sum += window[tap] * rows[min(height - 1, max(0, y + tap - 5)) * width + x] }
                result[y * width + x] = sum
            }
        }
        return result
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
var passes = 3
if arguments.first == "--passes", arguments.count >= 2 {
    passes = Int(arguments[1]) ?? 3
    arguments.removeFirst(2)
}
guard !arguments.isEmpty else {
    print("usage: webp-timing [--passes N] GIF...")
    exit(2)
}

let columns = ["gifDecode", "encodeMixed", "encodeLossy", "webpDecode", "ssim", "ssimReference", "compare", "rendition"]
var totals = [String: Double]()
var gifBytes = 0, mixedBytes = 0, lossyBytes = 0, renditionBytes = 0
var worstMixed = 1.0, worstLossy = 1.0
var outcomes = [String: Int]()
for path in arguments {
    let gif = readFile(path)
    let info = try GIFInspector.inspect(bytes: gif)
    var row = [String: Double]()
    row["gifDecode"] = try best(passes) { () throws -> Int in
        let reader = try GIFAnimationReader(bytes: gif)
        var frames = 0
        while try reader.nextFrame() != nil { frames += 1 }
        return frames
    }.ms
    // Rung q75 as the encoder runs it (lossy frames only), and with mixed frames (libwebp trying
    // each frame lossless too) beside it.
    let mixedSettings = WebPEncoderSettings(quality: 75, allowMixed: true)
    let mixed = try best(passes) { try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: info.loopCount, settings: mixedSettings) }
    let lossySettings = WebPEncoderSettings.q75
    let lossy = try best(passes) { try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: info.loopCount, settings: lossySettings) }
    row["encodeMixed"] = mixed.ms
    row["encodeLossy"] = lossy.ms
    let decoded = try best(passes) { try WebPFrames.decode(mixed.value) }
    row["webpDecode"] = decoded.ms
    var gifFrames: [[UInt8]] = []
    let reader = try GIFAnimationReader(bytes: gif)
    while try reader.nextFrame() != nil { gifFrames.append(reader.canvas) }
    let (width, height) = (reader.width, reader.height)
    let scores = best(passes) { () -> [Double] in
        let workspace = SSIM.Workspace(width: width, height: height)
        return zip(gifFrames, decoded.value).map { pair in
            pair.0.withUnsafeBufferPointer { a in pair.1.pixels.withUnsafeBufferPointer { b in SSIM.frameSSIM(a, b, workspace: workspace) } }
        }
    }
    let reference = best(passes) { () -> [Double] in
        zip(gifFrames, decoded.value).map { pair in
            pair.0.withUnsafeBufferPointer { a in pair.1.pixels.withUnsafeBufferPointer { b in ReferenceSSIM.frameSSIM(a, b, width: width, height: height) } }
        }
    }
    guard scores.value == reference.value else { fatalError("\(path): SSIM \(scores.value) differs from the direct filter's \(reference.value)") }
    row["ssim"] = scores.ms
    row["ssimReference"] = reference.ms
    let comparison = try best(passes) { try WebPComparison.compare(webp: mixed.value, gif: gif, gifLoopCount: info.loopCount) }
    row["compare"] = comparison.ms
    let lossyComparison = try WebPComparison.compare(webp: lossy.value, gif: gif, gifLoopCount: info.loopCount)
    let rendition = try best(passes) { try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: info.loopCount, policy: .standard) }
    row["rendition"] = rendition.ms
    outcomes[rendition.value.outcomeLabel, default: 0] += 1
    if case .webp(let bytes, _, _) = rendition.value.choice { renditionBytes += bytes.count } else { renditionBytes += gif.count }
    gifBytes += gif.count
    mixedBytes += mixed.value.count
    lossyBytes += lossy.value.count
    worstMixed = min(worstMixed, comparison.value.worstSSIM)
    worstLossy = min(worstLossy, lossyComparison.worstSSIM)
    for column in columns { totals[column, default: 0] += row[column]! }
    let name = path.split(separator: "/").last.map(String.init) ?? path
    print("\(name.prefix(12)) \(gif.count) B \(gifFrames.count) frames, mixed \(mixed.value.count) B (worst SSIM \(comparison.value.worstSSIM)), lossy \(lossy.value.count) B (worst \(lossyComparison.worstSSIM)), "
        + columns.map { "\($0) \(String(format: "%.1f", row[$0]!))" }.joined(separator: " ") + " ms, \(rendition.value.outcomeLabel)")
}
let count = Double(arguments.count)
print("GIFs \(arguments.count), passes \(passes), ms of thread CPU per GIF (best pass): "
    + columns.map { "\($0) \(String(format: "%.1f", totals[$0]! / count))" }.joined(separator: ", "))
print(String(format: "bytes: rendition %.3fx the GIFs (outcomes %@), q75 mixed %.3fx (worst frame SSIM %.4f), q75 lossy only %.3fx (worst %.4f)",
             Double(renditionBytes) / Double(gifBytes), outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
             Double(mixedBytes) / Double(gifBytes), worstMixed, Double(lossyBytes) / Double(gifBytes), worstLossy))

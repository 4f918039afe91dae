import Glibc

/// The structural similarity (SSIM, Wang et al. 2004) of two RGBA frames of the same size, as the
/// WebP rendition's quality gate computes it.
///
/// On luma (BT.601: 0.299 R + 0.587 G + 0.114 B) of each frame composited over a background grey
/// level, with the standard 11 x 11 Gaussian window (sigma 1.5, applied as two separable 11-tap
/// passes, borders replicated so that every pixel has a window, frames smaller than the window
/// included), C1 = (0.01 x 255)^2 and C2 = (0.03 x 255)^2; the frame's SSIM is the mean of the map
/// over every pixel. ``frameSSIM(_:_:width:height:)`` composites over white and over black when
/// either frame has a pixel that is not opaque and takes the smaller (a pixel transparent in one
/// frame and opaque in the other shows against one of the two), else over white alone.
package enum SSIM {
    /// The 11 Gaussian weights (sigma 1.5), normalized to sum 1.
    static let window: [Float] = {
        let weights = (-5...5).map { offset in Float(exp(-Double(offset * offset) / (2 * 1.5 * 1.5))) }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }()

    /// The frame SSIM of two RGBA buffers of `width * height * 4` bytes.
    package static func frameSSIM(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>,
                                 width: Int, height: Int) -> Double {
        precondition(first.count >= width * height * 4 && second.count >= width * height * 4)
        let overWhite = ssim(luma(first, width: width, height: height, background: 255),
                             luma(second, width: width, height: height, background: 255), width: width, height: height)
        guard hasTransparency(first, count: width * height) || hasTransparency(second, count: width * height) else {
            return overWhite
        }
        let overBlack = ssim(luma(first, width: width, height: height, background: 0),
                             luma(second, width: width, height: height, background: 0), width: width, height: height)
        return min(overWhite, overBlack)
    }

    private static func hasTransparency(_ pixels: UnsafeBufferPointer<UInt8>, count: Int) -> Bool {
        var offset = 3
        for _ in 0..<count {
            if pixels[offset] != 255 { return true }
            offset += 4
        }
        return false
    }

    /// Luma of `pixels` composited over the grey level `background`.
    static func luma(_ pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int, background: Float) -> [Float] {
        [Float](unsafeUninitializedCapacity: width * height) { plane, initialized in
            var offset = 0
            for index in 0..<(width * height) {
                let alpha = Float(pixels[offset + 3]) / 255
                let under = background * (1 - alpha)
                let red = Float(pixels[offset]) * alpha + under
                let green = Float(pixels[offset + 1]) * alpha + under
                let blue = Float(pixels[offset + 2]) * alpha + under
                plane[index] = 0.299 * red + 0.587 * green + 0.114 * blue
                offset += 4
            }
            initialized = width * height
        }
    }

    /// Mean SSIM of two luma planes.
    static func ssim(_ first: [Float], _ second: [Float], width: Int, height: Int) -> Double {
        let count = width * height
        var products = [Float](repeating: 0, count: count * 3)
        for index in 0..<count {
            let (a, b) = (first[index], second[index])
            products[index] = a * a
            products[count + index] = b * b
            products[2 * count + index] = a * b
        }
        let meanFirst = blur(first, width: width, height: height)
        let meanSecond = blur(second, width: width, height: height)
        let firstSquares = blur(Array(products[0..<count]), width: width, height: height)
        let secondSquares = blur(Array(products[count..<(2 * count)]), width: width, height: height)
        let crossProducts = blur(Array(products[(2 * count)...]), width: width, height: height)
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

    /// The plane filtered by the Gaussian window in both directions, borders replicated.
    static func blur(_ plane: [Float], width: Int, height: Int) -> [Float] {
        let weights = window
        var rows = [Float](repeating: 0, count: width * height)
        var result = [Float](repeating: 0, count: width * height)
        plane.withUnsafeBufferPointer { source in
            weights.withUnsafeBufferPointer { weights in
                rows.withUnsafeMutableBufferPointer { rows in
                    for y in 0..<height {
                        let base = y * width
                        for x in 0..<width {
                            var sum: Float = 0
                            for tap in 0..<11 {
                                let column = min(width - 1, max(0, x + tap - 5))
                                sum += weights[tap] * source[base + column]
                            }
                            rows[base + x] = sum
                        }
                    }
                }
            }
        }
        rows.withUnsafeBufferPointer { rows in
            weights.withUnsafeBufferPointer { weights in
                result.withUnsafeMutableBufferPointer { result in
                    for y in 0..<height {
                        for x in 0..<width {
                            var sum: Float = 0
                            for tap in 0..<11 {
                                let row = min(height - 1, max(0, y + tap - 5))
                                sum += weights[tap] * rows[row * width + x]
                            }
                            result[y * width + x] = sum
                        }
                    }
                }
            }
        }
        return result
    }
}

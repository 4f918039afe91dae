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
///
/// The five filtered planes (the two means, the two second moments and the cross moment) are
/// computed in one horizontal and one vertical pass over planes padded with their replicated
/// borders (no clamping per tap), eight pixels at a time; each pixel's sums add the same products
/// in the same order as a direct 11-tap filter with clamped borders does, so the figures are
/// that filter's to the last bit. A ``Workspace`` holds the buffers from one frame to the next.
package enum SSIM {
    /// The 11 Gaussian weights (sigma 1.5), normalized to sum 1.
    static let window: [Float] = {
        let weights = (-5...5).map { offset in Float(exp(-Double(offset * offset) / (2 * 1.5 * 1.5))) }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }()

    /// Half the window: the border each padded plane carries on each side.
    static let radius = 5

    /// Eight pixels of a row at a time: each lane does the scalar arithmetic (no fused
    /// multiply-add), so the figures are those of the pixel-by-pixel loop that finishes a row.
    typealias Lanes = SIMD8<Float>
    static let lanes = Lanes.scalarCount

    @inline(__always)
    private static func load(_ plane: UnsafeMutableBufferPointer<Float>, _ index: Int) -> Lanes {
        UnsafeRawPointer(plane.baseAddress! + index).loadUnaligned(as: Lanes.self)
    }

    @inline(__always)
    private static func store(_ value: Lanes, _ plane: UnsafeMutableBufferPointer<Float>, _ index: Int) {
        UnsafeMutableRawPointer(plane.baseAddress! + index).storeBytes(of: value, as: Lanes.self)
    }

    /// Buffers for frames of one size, reused from one ``SSIM/frameSSIM(_:_:workspace:)`` to the next.
    package final class Workspace {
        package let width: Int
        package let height: Int
        /// The two luma planes, `height` rows of `width + 10` with 5 replicated pixels each side.
        fileprivate var first: [Float]
        fileprivate var second: [Float]
        /// The five horizontally filtered planes, each `height + 10` rows of `width` with 5
        /// replicated rows above and below: mean first, mean second, first², second², first x second.
        fileprivate var filtered: [Float]

        package init(width: Int, height: Int) {
            precondition(width > 0 && height > 0)
            self.width = width
            self.height = height
            first = [Float](repeating: 0, count: (width + 2 * SSIM.radius) * height)
            second = first
            filtered = [Float](repeating: 0, count: 5 * width * (height + 2 * SSIM.radius))
        }
    }

    /// The frame SSIM of two RGBA buffers of `width * height * 4` bytes.
    package static func frameSSIM(
        _ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>,
        width: Int, height: Int
    ) -> Double {
        frameSSIM(first, second, workspace: Workspace(width: width, height: height))
    }

    /// The frame SSIM of two RGBA buffers of the workspace's size.
    package static func frameSSIM(
        _ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>,
        workspace: Workspace
    ) -> Double {
        let (width, height) = (workspace.width, workspace.height)
        precondition(first.count >= width * height * 4 && second.count >= width * height * 4)
        let overWhite = ssim(first, second, background: 255, workspace)
        guard hasTransparency(first, count: width * height) || hasTransparency(second, count: width * height) else {
            return overWhite
        }
        return min(overWhite, ssim(first, second, background: 0, workspace))
    }

    private static func hasTransparency(_ pixels: UnsafeBufferPointer<UInt8>, count: Int) -> Bool {
        var offset = 3
        for _ in 0..<count {
            if pixels[offset] != 255 { return true }
            offset += 4
        }
        return false
    }

    /// Mean SSIM of the two frames composited over the grey level `background`.
    private static func ssim(
        _ firstPixels: UnsafeBufferPointer<UInt8>, _ secondPixels: UnsafeBufferPointer<UInt8>,
        background: Float, _ workspace: Workspace
    ) -> Double {
        let (width, height, radius) = (workspace.width, workspace.height, radius)
        let (paddedWidth, paddedHeight) = (width + 2 * radius, height + 2 * radius)
        let plane = width * paddedHeight
        let c1: Float = (0.01 * 255) * (0.01 * 255)
        let c2: Float = (0.03 * 255) * (0.03 * 255)
        var total = 0.0
        window.withUnsafeBufferPointer { weights in
            workspace.first.withUnsafeMutableBufferPointer { first in
                workspace.second.withUnsafeMutableBufferPointer { second in
                    workspace.filtered.withUnsafeMutableBufferPointer { filtered in
                        luma(firstPixels, into: first, width: width, height: height, background: background)
                        luma(secondPixels, into: second, width: width, height: height, background: background)
                        // Horizontal pass into rows radius..<(radius + height) of each filtered plane.
                        for y in 0..<height {
                            let source = y * paddedWidth
                            let row = (y + radius) * width
                            var x = 0
                            while x + lanes <= width {
                                var sums = (Lanes(), Lanes(), Lanes(), Lanes(), Lanes())
                                for tap in 0..<11 {
                                    let weight = Lanes(repeating: weights[tap])
                                    let a = load(first, source + tap + x)
                                    let b = load(second, source + tap + x)
                                    sums.0 += weight * a
                                    sums.1 += weight * b
                                    sums.2 += weight * (a * a)
                                    sums.3 += weight * (b * b)
                                    sums.4 += weight * (a * b)
                                }
                                store(sums.0, filtered, row + x)
                                store(sums.1, filtered, plane + row + x)
                                store(sums.2, filtered, 2 * plane + row + x)
                                store(sums.3, filtered, 3 * plane + row + x)
                                store(sums.4, filtered, 4 * plane + row + x)
                                x += lanes
                            }
                            while x < width {
                                var sums: (Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0)
                                for tap in 0..<11 {
                                    let weight = weights[tap]
                                    let (a, b) = (first[source + tap + x], second[source + tap + x])
                                    sums.0 += weight * a
                                    sums.1 += weight * b
                                    sums.2 += weight * (a * a)
                                    sums.3 += weight * (b * b)
                                    sums.4 += weight * (a * b)
                                }
                                filtered[row + x] = sums.0
                                filtered[plane + row + x] = sums.1
                                filtered[2 * plane + row + x] = sums.2
                                filtered[3 * plane + row + x] = sums.3
                                filtered[4 * plane + row + x] = sums.4
                                x += 1
                            }
                        }
                        // Replicated rows above and below.
                        for quantity in 0..<5 {
                            let base = quantity * plane
                            for pad in 0..<radius {
                                for x in 0..<width {
                                    filtered[base + pad * width + x] = filtered[base + radius * width + x]
                                    filtered[base + (radius + height + pad) * width + x] = filtered[base + (radius + height - 1) * width + x]
                                }
                            }
                        }
                        // Vertical pass and the map's sum, pixel by pixel in row order.
                        for y in 0..<height {
                            var x = 0
                            while x + lanes <= width {
                                var sums = (Lanes(), Lanes(), Lanes(), Lanes(), Lanes())
                                for tap in 0..<11 {
                                    let weight = Lanes(repeating: weights[tap])
                                    let at = (y + tap) * width + x
                                    sums.0 += weight * load(filtered, at)
                                    sums.1 += weight * load(filtered, plane + at)
                                    sums.2 += weight * load(filtered, 2 * plane + at)
                                    sums.3 += weight * load(filtered, 3 * plane + at)
                                    sums.4 += weight * load(filtered, 4 * plane + at)
                                }
                                let (muA, muB) = (sums.0, sums.1)
                                let varianceA = sums.2 - muA * muA
                                let varianceB = sums.3 - muB * muB
                                let covariance = sums.4 - muA * muB
                                let numerator = (2 * muA * muB + c1) * (2 * covariance + c2)
                                let denominator = (muA * muA + muB * muB + c1) * (varianceA + varianceB + c2)
                                let map = numerator / denominator
                                for lane in 0..<lanes { total += Double(map[lane]) }
                                x += lanes
                            }
                            while x < width {
                                var sums: (Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0)
                                for tap in 0..<11 {
                                    let weight = weights[tap]
                                    let at = (y + tap) * width + x
                                    sums.0 += weight * filtered[at]
                                    sums.1 += weight * filtered[plane + at]
                                    sums.2 += weight * filtered[2 * plane + at]
                                    sums.3 += weight * filtered[3 * plane + at]
                                    sums.4 += weight * filtered[4 * plane + at]
                                }
                                let (muA, muB) = (sums.0, sums.1)
                                let varianceA = sums.2 - muA * muA
                                let varianceB = sums.3 - muB * muB
                                let covariance = sums.4 - muA * muB
                                let numerator = (2 * muA * muB + c1) * (2 * covariance + c2)
                                let denominator = (muA * muA + muB * muB + c1) * (varianceA + varianceB + c2)
                                total += Double(numerator / denominator)
                                x += 1
                            }
                        }
                    }
                }
            }
        }
        return total / Double(width * height)
    }

    /// Luma of `pixels` composited over the grey level `background`, into a plane padded with
    /// `radius` replicated pixels on each side of each row.
    private static func luma(
        _ pixels: UnsafeBufferPointer<UInt8>, into plane: UnsafeMutableBufferPointer<Float>,
        width: Int, height: Int, background: Float
    ) {
        let paddedWidth = width + 2 * radius
        var offset = 0
        for y in 0..<height {
            let row = y * paddedWidth
            for x in 0..<width {
                let alpha = Float(pixels[offset + 3]) / 255
                let under = background * (1 - alpha)
                let red = Float(pixels[offset]) * alpha + under
                let green = Float(pixels[offset + 1]) * alpha + under
                let blue = Float(pixels[offset + 2]) * alpha + under
                plane[row + radius + x] = 0.299 * red + 0.587 * green + 0.114 * blue
                offset += 4
            }
            let (left, right) = (plane[row + radius], plane[row + radius + width - 1])
            for pad in 0..<radius {
                plane[row + pad] = left
                plane[row + radius + width + pad] = right
            }
        }
    }
}

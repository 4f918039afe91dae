/// Downscales an ``RGBImage`` with an area (box) filter: each target pixel is the mean of the
/// source area it covers, partial source pixels weighted by the fraction covered. Never upscales.
///
/// ```swift
/// let poster = AreaDownscaler.downscale(still, longestSide: 80) // 180x120 -> 80x53
/// ```
package enum AreaDownscaler {
    /// Target size for `longestSide`: the longer side becomes `min(longestSide, its length)`, the
    /// other keeps the aspect ratio (rounded, at least 1).
    package static func size(width: Int, height: Int, longestSide: Int) -> (width: Int, height: Int) {
        let longest = max(width, height)
        guard longest > longestSide else { return (width, height) }
        func scaled(_ side: Int) -> Int { max(1, (side * longestSide * 2 + longest) / (2 * longest)) }
        return width >= height ? (longestSide, scaled(height)) : (scaled(width), longestSide)
    }

    package static func downscale(_ image: RGBImage, longestSide: Int) -> RGBImage {
        let target = size(width: image.width, height: image.height, longestSide: longestSide)
        return downscale(image, width: target.width, height: target.height)
    }

    /// Area-filters `image` to exactly `width` x `height` (each at most the source's).
    package static func downscale(_ image: RGBImage, width: Int, height: Int) -> RGBImage {
        if width == image.width, height == image.height { return image }
        let columns = weights(source: image.width, target: width)
        let rows = weights(source: image.height, target: height)
        // Horizontal pass into floats (height x width x 3), then vertical pass.
        var horizontal = [Float](repeating: 0, count: image.height * width * 3)
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<image.height {
                let rowBase = y * image.width * 3
                for x in 0..<width {
                    var sum: (Float, Float, Float) = (0, 0, 0)
                    for (sourceX, weight) in columns[x] {
                        let p = rowBase + sourceX * 3
                        sum.0 += Float(pixels[p]) * weight
                        sum.1 += Float(pixels[p + 1]) * weight
                        sum.2 += Float(pixels[p + 2]) * weight
                    }
                    let o = (y * width + x) * 3
                    horizontal[o] = sum.0; horizontal[o + 1] = sum.1; horizontal[o + 2] = sum.2
                }
            }
        }
        var output = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var sum: (Float, Float, Float) = (0, 0, 0)
                for (sourceY, weight) in rows[y] {
                    let p = (sourceY * width + x) * 3
                    sum.0 += horizontal[p] * weight
                    sum.1 += horizontal[p + 1] * weight
                    sum.2 += horizontal[p + 2] * weight
                }
                let o = (y * width + x) * 3
                output[o] = clamp(sum.0); output[o + 1] = clamp(sum.1); output[o + 2] = clamp(sum.2)
            }
        }
        return RGBImage(width: width, height: height, pixels: output)
    }

    private static func clamp(_ value: Float) -> UInt8 { UInt8(max(0, min(255, (value + 0.5).rounded(.down)))) }

    /// For each target index, the source indices it covers with their normalised weights.
    static func weights(source: Int, target: Int) -> [[(Int, Float)]] {
        let scale = Double(source) / Double(target)
        return (0..<target).map { index in
            let start = Double(index) * scale
            let end = Double(index + 1) * scale
            var list: [(Int, Float)] = []
            var position = Int(start.rounded(.down))
            while Double(position) < end, position < source {
                let covered = min(end, Double(position + 1)) - max(start, Double(position))
                if covered > 0 { list.append((position, Float(covered / scale))) }
                position += 1
            }
            return list
        }
    }
}

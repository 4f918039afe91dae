/// An opaque 8-bit sRGB image, rows top to bottom, three bytes (red, green, blue) per pixel.
///
/// ```swift
/// let still = try StillFrameDecoder.decode(path: "/tmp/a.gif")
/// let small = AreaDownscaler.downscale(still.image, longestSide: 80)
/// ```
package struct RGBImage: Sendable, Equatable {
    package var width: Int
    package var height: Int
    /// `width * height * 3` bytes.
    package var pixels: [UInt8]

    package init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "RGBImage size mismatch")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The mean of each channel over all pixels, rounded, as `#rrggbb` (lowercase).
    package var averageColorHex: String {
        var sums = (0, 0, 0)
        var index = 0
        while index < pixels.count {
            sums.0 += Int(pixels[index]); sums.1 += Int(pixels[index + 1]); sums.2 += Int(pixels[index + 2])
            index += 3
        }
        let count = width * height
        func channel(_ sum: Int) -> Int { (2 * sum + count) / (2 * count) }
        return RGBImage.hex(channel(sums.0), channel(sums.1), channel(sums.2))
    }

    static func hex(_ red: Int, _ green: Int, _ blue: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = [UInt8(ascii: "#")]
        for value in [red, green, blue] {
            bytes.append(digits[value >> 4])
            bytes.append(digits[value & 0x0F])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

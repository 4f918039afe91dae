import Glibc

/// Turns a BlurHash back into pixels, as an app shows it (woltapp/blurhash's reference decoder:
/// the inverse DCT of the hash's components, in linear light, written back as sRGB).
///
/// gifpack writes the hash of each GIF's still into its packs (``BlurHashEncoder``); a release review
/// (`gifpack review`) decodes it to a small image so the reviewer sees the placeholder an app would
/// draw before the GIF arrives. Invalid hashes (wrong length, a character outside base 83, a
/// component count outside 1...9) are refused rather than drawn.
///
/// ```swift
/// let image = try BlurHashDecoder.decode("LEHV6nWB2yk8pyo0adR*.7kCMdnj", width: 32, height: 24)
/// ```
package enum BlurHashDecoder {
    package enum DecodeError: Error, Equatable, CustomStringConvertible {
        case malformed(String)

        package var description: String {
            switch self {
            case .malformed(let reason): "not a BlurHash: \(reason)"
            }
        }
    }

    /// The largest side decoded: a placeholder is drawn small and scaled up.
    package static let maxSide = 64

    package static func decode(_ hash: String, width: Int, height: Int, punch: Double = 1) throws(DecodeError) -> RGBImage {
        guard (1...maxSide).contains(width), (1...maxSide).contains(height) else {
            throw .malformed("a size of \(width)x\(height) is outside 1...\(maxSide)")
        }
        let digits = try values(of: Array(hash.utf8))
        guard digits.count >= 6 else { throw .malformed("\(digits.count) characters, fewer than 6") }
        let componentsX = digits[0] % 9 + 1
        let componentsY = digits[0] / 9 + 1
        // Size flags 81 and 82 ('}' and '~') would mean ten rows: no encoder makes them (1...9 each way).
        guard BlurHashEncoder.componentRange.contains(componentsY) else {
            throw .malformed("\(componentsX)x\(componentsY) components, outside \(BlurHashEncoder.componentRange)")
        }
        guard digits.count == 4 + 2 * componentsX * componentsY else {
            throw .malformed("\(digits.count) characters for \(componentsX)x\(componentsY) components")
        }
        let maxAC = Double(digits[1] + 1) / 166 * punch
        var colors: [(Double, Double, Double)] = [dcColor(number(digits[2..<6]))]
        for component in 1..<(componentsX * componentsY) {
            let start = 4 + component * 2
            colors.append(acColor(number(digits[start..<(start + 2)]), maxAC: maxAC))
        }
        return render(colors, componentsX: componentsX, componentsY: componentsY, width: width, height: height)
    }

    /// The size to decode for an image of `width` x `height`: its aspect ratio, `longestSide` on
    /// the longer side.
    package static func size(width: Int, height: Int, longestSide: Int = BlurHashEncoder.pixelSide) -> (width: Int, height: Int) {
        AreaDownscaler.size(width: max(1, width), height: max(1, height), longestSide: min(longestSide, maxSide))
    }

    private static func render(
        _ colors: [(Double, Double, Double)], componentsX: Int, componentsY: Int,
        width: Int, height: Int
    ) -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var (red, green, blue) = (0.0, 0.0, 0.0)
                for j in 0..<componentsY {
                    for i in 0..<componentsX {
                        let basis =
                            cos(Double.pi * Double(x) * Double(i) / Double(width))
                            * cos(Double.pi * Double(y) * Double(j) / Double(height))
                        let color = colors[i + j * componentsX]
                        red += color.0 * basis
                        green += color.1 * basis
                        blue += color.2 * basis
                    }
                }
                let offset = (y * width + x) * 3
                pixels[offset] = UInt8(BlurHashEncoder.linearToSRGB(red))
                pixels[offset + 1] = UInt8(BlurHashEncoder.linearToSRGB(green))
                pixels[offset + 2] = UInt8(BlurHashEncoder.linearToSRGB(blue))
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    private static func dcColor(_ value: Int) -> (Double, Double, Double) {
        (
            BlurHashEncoder.srgbToLinear(value >> 16), BlurHashEncoder.srgbToLinear((value >> 8) & 255),
            BlurHashEncoder.srgbToLinear(value & 255)
        )
    }

    private static func acColor(_ value: Int, maxAC: Double) -> (Double, Double, Double) {
        func channel(_ quantised: Int) -> Double {
            BlurHashEncoder.signPow((Double(quantised) - 9) / 9, 2) * maxAC
        }
        return (channel(value / (19 * 19)), channel((value / 19) % 19), channel(value % 19))
    }

    private static func number(_ digits: ArraySlice<Int>) -> Int {
        digits.reduce(0) { $0 * 83 + $1 }
    }

    private static func values(of characters: [UInt8]) throws(DecodeError) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(characters.count)
        for character in characters {
            guard let value = BlurHashEncoder.alphabet.firstIndex(of: character) else {
                throw .malformed("a character outside the base 83 alphabet")
            }
            result.append(value)
        }
        return result
    }
}

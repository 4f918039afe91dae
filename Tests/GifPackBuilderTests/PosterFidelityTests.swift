import Crypto
import ExerciseDBFixture
import Foundation
import GifPackGIF
import Testing
@testable import GifPackTestSupport

/// "Posters are darker than their GIF": giflib's quantiser kept 5 bits per channel and shifted
/// them back, so white came out #f8f8f8 and real posters were off by about 6/255 per channel.
/// Posters are compared with the area downscale they encode (``AreaDownscaler``), decoded back.
@Suite("Posters: full-precision palette, white stays white", .computes, .timeLimit(.minutes(3)))
struct PosterFidelityTests {
    /// A two-dimensional gradient (thousands of colours) on a white background with a red block.
    static func gradientOnWhite(width: Int, height: Int) -> RGBImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                if x < width / 5 || y < height / 6 {
                    pixels += [255, 255, 255]
                } else if x > width * 3 / 5, x < width * 4 / 5, y > height / 3, y < height / 2 {
                    pixels += [200, 30, 40]
                } else {
                    pixels += [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), UInt8((x + y) * 127 / (width + height))]
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// The poster of `image` at `size`, decoded, and the downscale it was made from.
    static func poster(_ image: RGBImage, size: Int) throws -> (poster: RGBImage, downscale: RGBImage) {
        let downscale = AreaDownscaler.downscale(image, longestSide: size)
        let poster = try StillFrameDecoder.decode(bytes: PosterEncoder.encode(downscale)).image
        return (poster, downscale)
    }

    static func meanError(_ a: RGBImage, _ b: RGBImage) -> (all: Double, channels: [Double]) {
        var sums = [0.0, 0.0, 0.0]
        for index in 0..<a.pixels.count { sums[index % 3] += abs(Double(a.pixels[index]) - Double(b.pixels[index])) }
        let pixels = Double(a.width * a.height)
        return (sums.reduce(0, +) / (3 * pixels), sums.map { $0 / pixels })
    }

    @Test func whiteStaysExactlyWhite() throws {
        let image = Self.gradientOnWhite(width: 180, height: 180)
        for size in [80, 200] {
            let (poster, downscale) = try Self.poster(image, size: size)
            var whites = 0
            for index in stride(from: 0, to: downscale.pixels.count, by: 3)
            where downscale.pixels[index..<index + 3].allSatisfy({ $0 == 255 }) {
                whites += 1
                #expect(Array(poster.pixels[index..<index + 3]) == [255, 255, 255], "pixel \(index / 3) of the \(size) px poster")
                if poster.pixels[index] != 255 { break }
            }
            #expect(whites > 1000)
        }
        // An image of few colours keeps them exactly, white included.
        let flat = RGBImage(
            width: 4, height: 2,
            pixels: [
                255, 255, 255, 0, 0, 0, 255, 255, 255, 1, 2, 3,
                254, 254, 254, 255, 255, 255, 200, 100, 50, 255, 255, 255
            ])
        #expect(try StillFrameDecoder.decode(bytes: PosterEncoder.encode(flat)).image == flat)
    }

    /// A diagonal ramp, dark blue to light orange, on a white margin: more than 256 colours once
    /// downscaled, along one direction (a background's or a limb's shading).
    static func diagonalRamp(width: Int, height: Int) -> RGBImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        let span = 2 * (width - 1) + 3 * (height - 1)
        for y in 0..<height {
            for x in 0..<width {
                if x < width / 8 {
                    pixels += [255, 255, 255]
                } else {
                    let t = 2 * x + 3 * y
                    let red = 20 + t * 235 / span
                    let green = 10 + t * 190 / span
                    let blue = 120 + (span - t) * 100 / span
                    pixels += [UInt8(red), UInt8(green), UInt8(blue)]
                }
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    static func distinctColors(_ image: RGBImage) -> Int {
        var colors = Set<Int>()
        for index in stride(from: 0, to: image.pixels.count, by: 3) {
            let red = Int(image.pixels[index]) << 16
            let green = Int(image.pixels[index + 1]) << 8
            colors.insert(red | green | Int(image.pixels[index + 2]))
        }
        return colors.count
    }

    @Test func aGradientPosterIsWithinOneLevelOfTheDownscale() throws {
        for (width, height) in [(180, 180), (360, 240)] {
            let image = Self.diagonalRamp(width: width, height: height)
            for size in [80, 200] {
                let (poster, downscale) = try Self.poster(image, size: size)
                let error = Self.meanError(poster, downscale)
                #expect(Self.distinctColors(downscale) > 256, "the palette has to merge colours")
                #expect(error.all <= 1.0, "\(width)x\(height) at \(size) px: mean error \(error.all), per channel \(error.channels)")
            }
        }
        // The worst case for any 256-colour palette: a gradient over two dimensions (thousands of
        // colours spread evenly) leaves cells of about 4x4 downscaled steps per palette colour.
        for image in [Self.gradientOnWhite(width: 180, height: 180), PlaceholderTests.pattern(width: 180, height: 120)] {
            let (poster, downscale) = try Self.poster(image, size: 80)
            let error = Self.meanError(poster, downscale)
            #expect(error.all <= 3.0, "mean error \(error.all), per channel \(error.channels)")
        }
    }

    @Test func thePaletteIsAFunctionOfThePixelsAndAtMost256Colours() {
        var random = SplitMix64(seed: 11)
        let noise = RGBImage(width: 80, height: 80, pixels: (0..<(80 * 80 * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let first = PaletteQuantizer.quantize(noise)
        #expect(first.palette.count == 256 && first.indices.count == 80 * 80)
        #expect(first.indices.allSatisfy { Int($0) < first.palette.count })
        #expect(PaletteQuantizer.quantize(noise) == first)
        // The same colours in another order give the same palette.
        var shuffled = [Int](0..<(80 * 80))
        shuffled.shuffle(using: &random)
        var pixels = [UInt8](repeating: 0, count: 80 * 80 * 3)
        for (target, source) in shuffled.enumerated() {
            for channel in 0..<3 { pixels[target * 3 + channel] = noise.pixels[source * 3 + channel] }
        }
        #expect(PaletteQuantizer.quantize(RGBImage(width: 80, height: 80, pixels: pixels)).palette == first.palette)
    }

    /// The quantizer's output for images of many colours is pinned (SHA-256 of palette and
    /// indices): a faster implementation must give the same posters, byte for byte, or the
    /// posters a cache holds would differ from those a fresh build makes.
    @Test func theQuantizersOutputIsPinned() {
        var random = SplitMix64(seed: 11)
        let noise = RGBImage(width: 80, height: 80, pixels: (0..<(80 * 80 * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let images: [(String, RGBImage)] = [
            ("noise", noise), ("ramp", Self.diagonalRamp(width: 120, height: 90)),
            ("gradient", Self.gradientOnWhite(width: 80, height: 80)), ("pattern", PlaceholderTests.pattern(width: 180, height: 120))
        ]
        let pinned = [
            "noise": "c5052a70d38e5a8a28e6e111c63dcaa3cfcb756dab0c2fef93872851b60177d7",
            "ramp": "72e6766251def681e48a9924fe67970e1ee34e3625d9e04e35e5e5305b611c44",
            "gradient": "5fb47c4c3d1c1539a3218107cfe123cdba297e9df84fabeda41043cd73c1c37d",
            "pattern": "e72b8f565df2ce8275b5d12d5a6465bc9c874cefa550b040a1ec393c2c00d06e"
        ]
        for (name, image) in images {
            let result = PaletteQuantizer.quantize(image)
            var bytes = [UInt8]()
            for color in result.palette { bytes += [UInt8(color >> 16 & 0xFF), UInt8(color >> 8 & 0xFF), UInt8(color & 0xFF)] }
            bytes += result.indices
            let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            #expect(digest == pinned[name], "\(name): \(result.palette.count) colours")
        }
    }

    /// The quantizer's sort: by 24 bits of each value, equal keys in their order, as a stable
    /// comparison sort gives them; duplicates, one value, and bytes equal across all values
    /// (a skipped pass) included.
    @Test func theColourSortIsAStableSortByItsKey() {
        var random = SplitMix64(seed: 5)
        for (count, shift, spread) in [
            (0, 24, 0xFF_FFFF), (1, 24, 0xFF_FFFF), (2, 32, 0xFF_FFFF), (20, 24, 0x3), (32, 32, 0xFF_FFFF), (500, 24, 0xFF_FFFF),
            (6400, 32, 0xFF), (3000, 32, 0x1F_0000), (4096, 24, 0xFFFF_FFFF)
        ] {
            var values = (0..<count).map { index -> UInt64 in
                let key = random.next() & UInt64(spread)
                return (key & 0xFF_FFFF) << UInt64(shift) | UInt64(index)
            }
            values.shuffle(using: &random)
            let expected = values.enumerated().sorted { a, b in
                let (ka, kb) = (a.element >> UInt64(shift) & 0xFF_FFFF, b.element >> UInt64(shift) & 0xFF_FFFF)
                return ka != kb ? ka < kb : a.offset < b.offset
            }.map(\.element)
            PaletteQuantizer.radixSort24(&values, keyShift: shift)
            #expect(values == expected, "\(count) values, keys in \(spread)")
        }
    }

    /// The real ExerciseDB sample (`../shared/realdata`, see its README), when this machine has it:
    /// every GIF's 80 px poster within 1/255 per channel of its downscale on average, white kept.
    @Test(.enabled(if: RealSample.has("gifs"), RealSample.missing))
    func realSamplePostersAreWithinOneLevel() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: RealSample.gifs).filter { $0.hasSuffix(".gif") }.sorted()
        #expect(names.count > 100)
        var total = 0.0
        for name in names {
            let still = try StillFrameDecoder.decode(path: "\(RealSample.gifs)/\(name)")
            let (poster, downscale) = try Self.poster(still.image, size: 80)
            let error = Self.meanError(poster, downscale).all
            #expect(error <= 1.0, "\(name): \(error)")
            total += error
        }
        let mean = total / Double(names.count)
        print("real sample: \(names.count) posters of 80 px, mean error \(mean)/255 per channel")
        #expect(mean <= 1.0)
    }
}

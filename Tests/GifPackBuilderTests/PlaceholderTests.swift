import ExerciseDBFixture
import Foundation
import GifPackGIF
import Testing
@testable import GifPack
@testable import GifPackTestSupport

/// BlurHash, average colour and posters, unit level.
@Suite("Placeholders and posters: still frame, BlurHash, downscale, poster encoding", .timeLimit(.minutes(5)))
struct PlaceholderTests {
    /// A gradient with a block of colour: structure the hash and posters must keep.
    static func pattern(width: Int, height: Int) -> RGBImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let inBlock = x > width / 3 && x < width * 2 / 3 && y > height / 4 && y < height / 2
                pixels += inBlock ? [200, 30, 40] : [UInt8(x * 255 / max(1, width - 1)), UInt8(y * 255 / max(1, height - 1)), 120]
            }
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    @Test func blurHashMatchesTheReferenceEncoderForEveryComponentCount() async throws {
        var jobs: [(RGBImage, x: Int, y: Int)] = []
        for (x, y) in [(4, 3), (1, 1), (9, 9), (3, 7), (1, 9)] {
            jobs.append((Self.pattern(width: 32, height: 21), x, y))
        }
        for seed in 1...4 {
            let gif = try GIFSynthesizer.animatedGIF(width: 40 + Int(seed) * 7, height: 30, frames: 2, colors: 16, seed: UInt64(seed))
            let still = try StillFrameDecoder.decode(bytes: gif)
            jobs.append((AreaDownscaler.downscale(still.image, longestSide: BlurHashEncoder.pixelSide), 4, 3))
        }
        jobs.append((RGBImage(width: 3, height: 2, pixels: [UInt8](repeating: 255, count: 18)), 4, 3))
        let reference = try await ReferenceBlurHash.encode(jobs)
        #expect(reference.count == jobs.count)
        for (job, expected) in zip(jobs, reference) {
            #expect(try BlurHashEncoder.encode(job.0, componentsX: job.x, componentsY: job.y) == expected)
        }
    }

    @Test(.computes) func blurHashRefusesComponentsOutsideOneToNine() {
        let image = Self.pattern(width: 8, height: 8)
        #expect(throws: BlurHashEncoder.EncodeError.componentsOutOfRange(x: 0, y: 3)) {
            try BlurHashEncoder.encode(image, componentsX: 0, componentsY: 3)
        }
        #expect(throws: BlurHashEncoder.EncodeError.componentsOutOfRange(x: 4, y: 10)) {
            try BlurHashEncoder.encode(image, componentsX: 4, componentsY: 10)
        }
    }

    @Test(.computes) func averageColourIsTheRoundedMeanAsHex() {
        let image = RGBImage(width: 2, height: 1, pixels: [0, 255, 16, 1, 0, 16])
        #expect(image.averageColorHex == "#018010")
    }

    @Test(.computes) func downscaleKeepsTheAspectRatioAndNeverUpscales() {
        #expect(AreaDownscaler.size(width: 180, height: 120, longestSide: 80) == (80, 53))
        #expect(AreaDownscaler.size(width: 120, height: 360, longestSide: 200) == (67, 200))
        #expect(AreaDownscaler.size(width: 60, height: 40, longestSide: 80) == (60, 40))
        #expect(AreaDownscaler.size(width: 1000, height: 1, longestSide: 16) == (16, 1))
    }

    @Test(.computes) func areaDownscaleMatchesAnIndependentAreaIntegration() {
        let image = Self.pattern(width: 181, height: 97)
        let small = AreaDownscaler.downscale(image, longestSide: 50)
        let reference = referenceAreaDownscale(image, width: small.width, height: small.height)
        // Rounding only: every channel within one level.
        #expect(meanAbsoluteError(small.pixels, reference).allSatisfy { $0 <= 0.5 })
        #expect(zip(small.pixels, reference).allSatisfy { abs(Double($0) - $1) <= 1.0 })
    }

    @Test(.computes) func posterIsASingleFrameGIFThatLooksLikeTheStill() throws {
        let image = Self.pattern(width: 180, height: 120)
        for size in [16, 80, 200] {
            let poster = try PosterEncoder.encode(AreaDownscaler.downscale(image, longestSide: size))
            let info = try GIFInspector.inspect(bytes: poster)
            let expected = AreaDownscaler.size(width: 180, height: 120, longestSide: size)
            #expect(info.frameCount == 1 && info.width == expected.width && info.height == expected.height)
            let decoded = try StillFrameDecoder.decode(bytes: poster).image
            let reference = referenceAreaDownscale(image, width: expected.width, height: expected.height)
            // A smooth two-dimensional gradient (thousands of colours) is the worst case for any
            // 256-colour palette (PosterFidelityTests holds posters to the downscale closely).
            let error = meanAbsoluteError(decoded.pixels, reference)
            #expect(error.allSatisfy { $0 < 6 }, "poster \(size) px: MAE \(error)")
        }
        // Deterministic: equal pixels, equal bytes.
        #expect(try PosterEncoder.encode(image) == PosterEncoder.encode(image))
    }

    /// Posters encoded on several threads at once (a build's worker and the posters pack's, or
    /// builds in one process) must still be a function of their pixels alone (giflib's quantiser,
    /// used before ``PaletteQuantizer``, kept its sort axis in a global). Four threads of their own
    /// (not the pool's two) encode side by side, eight posters each.
    @Test(.computes) func postersEncodedOnManyThreadsAtOnceAreTheSameAsAlone() async throws {
        var random = SplitMix64(seed: 5)
        let images = (0..<4).map { index in
            index % 2 == 0
                ? Self.pattern(width: 96 + index * 8, height: 64)
                : RGBImage(width: 80, height: 80, pixels: (0..<(80 * 80 * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        let alone = try images.map { try PosterEncoder.encode($0) }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    await onAThreadOfItsOwn("gifpack.test-posters") {
                        (0..<8).reduce(0) { wrong, round in
                            let index = (worker + round) % images.count
                            return wrong + ((try? PosterEncoder.encode(images[index])) == alone[index] ? 0 : 1)
                        }
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    static let palette: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (10, 20, 200), (220, 30, 30), (0, 0, 0)]

    @Test(.computes) func aBlankFirstFrameIsSkippedForTheFirstNonBlankOne() throws {
        // Frame 1: all white (blank); frame 2: a blue square on it.
        let white = TestFrame(width: 20, height: 20, indices: [UInt8](repeating: 0, count: 400))
        var square = [UInt8](repeating: 0, count: 100)
        for index in 0..<50 { square[index] = 1 }
        let second = TestFrame(left: 5, top: 5, width: 10, height: 10, indices: square)
        let gif = try writeTestGIF(width: 20, height: 20, palette: Self.palette, frames: [white, second])
        let still = try StillFrameDecoder.decode(bytes: gif)
        #expect(still.frameIndex == 1)
        #expect(Array(still.image.pixels[(5 * 20 + 5) * 3..<(5 * 20 + 6) * 3]) == [10, 20, 200])
        #expect(Array(still.image.pixels[(14 * 20 + 14) * 3..<(14 * 20 + 15) * 3]) == [255, 255, 255])
        let placeholders = try GIFPlaceholderDeriver.derive(still: still, settings: PlaceholderSettings(posterSizes: [16]))
        #expect(placeholders.averageColor != "#ffffff")
        let poster = try StillFrameDecoder.decode(bytes: placeholders.posters[16]!).image
        #expect(Set(stride(from: 0, to: poster.pixels.count, by: 3).map { poster.pixels[$0] }).count > 1, "the poster is not blank")
    }

    @Test(.computes) func aFullyTransparentFirstFrameIsBlankAndTransparencyShowsWhite() throws {
        let clear = TestFrame(width: 8, height: 8, indices: [UInt8](repeating: 3, count: 64), transparentIndex: 3)
        var half = [UInt8](repeating: 3, count: 64)
        for index in 0..<32 { half[index] = 2 }
        let second = TestFrame(width: 8, height: 8, indices: half, transparentIndex: 3)
        let gif = try writeTestGIF(width: 8, height: 8, palette: Self.palette, frames: [clear, second])
        let still = try StillFrameDecoder.decode(bytes: gif)
        #expect(still.frameIndex == 1)
        #expect(Array(still.image.pixels[0..<3]) == [220, 30, 30])
        #expect(Array(still.image.pixels[(7 * 8) * 3..<(7 * 8 + 1) * 3]) == [255, 255, 255])
    }

    @Test(.computes) func allBlankFramesGiveTheFirstFrame() throws {
        let red = TestFrame(width: 4, height: 4, indices: [UInt8](repeating: 2, count: 16))
        let black = TestFrame(width: 4, height: 4, indices: [UInt8](repeating: 3, count: 16))
        let still = try StillFrameDecoder.decode(bytes: writeTestGIF(width: 4, height: 4, palette: Self.palette, frames: [red, black]))
        #expect(still.frameIndex == 0 && still.image.averageColorHex == "#dc1e1e")
    }

    @Test(.computes) func disposalAndInterlacingAreHonoured() throws {
        // Frame 1: a blank white screen, disposed to background (transparent, shown white);
        // frame 2: interlaced, rows alternate blue and red.
        let first = TestFrame(width: 6, height: 9, indices: [UInt8](repeating: 0, count: 54), disposal: 2)
        var rows: [UInt8] = []
        for row in 0..<9 { rows += [UInt8](repeating: row % 2 == 0 ? 1 : 2, count: 6) }
        let second = TestFrame(width: 6, height: 9, indices: rows, interlaced: true)
        let still = try StillFrameDecoder.decode(bytes: writeTestGIF(width: 6, height: 9, palette: Self.palette, frames: [first, second]))
        #expect(still.frameIndex == 1)
        for row in 0..<9 {
            let pixel = Array(still.image.pixels[(row * 6) * 3..<(row * 6 + 1) * 3])
            #expect(pixel == (row % 2 == 0 ? [10, 20, 200] : [220, 30, 30]), "row \(row)")
        }
    }

    @Test(.computes) func theCachedRecordRoundTripsAndAnIncompleteOneIsDerivedAgain() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.path)
        let gif = try GIFSynthesizer.animatedGIF(width: 60, height: 40, frames: 3, colors: 8, seed: 9)
        let blob = workspace.file("a.gif")
        try Data(gif).write(to: URL(fileURLWithPath: blob))
        let cache = PlaceholderCache(layout: layout, settings: PlaceholderSettings(posterSizes: [16, 32]))
        let hash = sha256Hex(gif)
        let first = try cache.ensure(sha256: hash, blobPath: blob)
        #expect(try cache.ensure(sha256: hash, blobPath: blob) == first)
        #expect(cache.derivedCount == 1)
        FileSystem.remove(cache.posterPath(sha256: hash, size: 32))
        #expect(try cache.ensure(sha256: hash, blobPath: blob) == first)
        #expect(cache.derivedCount == 2)
        // Other settings live under another key: derived again, the first kept.
        let other = PlaceholderCache(layout: layout, settings: PlaceholderSettings(componentsX: 3, componentsY: 3, posterSizes: [16]))
        #expect(try other.ensure(sha256: hash, blobPath: blob).blurHash != first.blurHash)
        #expect(other.derivedCount == 1 && cache.cached(sha256: hash) == first)
    }
}

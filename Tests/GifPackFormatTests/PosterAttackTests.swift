import GIFSynthesis
import Foundation
import GifPackGIF
import Testing
@testable import GifPackTestSupport

/// A small GIF with a huge logical screen and thousands of blank 1x1 frames
/// made the still decoder composite, flatten and scan the whole screen once per frame (75-309 s
/// and 209 MB for 35-115 KB). The work must follow the frames' areas: it is counted
/// (``StillFrameWork``), not timed.
@Suite("Posters: a huge screen of tiny blank frames costs its frames, not the screen per frame", .computes, .timeLimit(.minutes(5)))
struct PosterAttackTests {
    static let palette: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (0, 0, 0), (220, 30, 30), (10, 20, 200)]

    /// `count` blank 1x1 frames spread over a `side` x `side` screen: white pixels, or transparent
    /// ones, with every disposal method in turn.
    static func blankTinyFrames(side: Int, count: Int) -> [TestFrame] {
        var random = SplitMix64(seed: 25)
        return (0..<count).map { index in
            let left = Int(random.next() % UInt64(side))
            let top = Int(random.next() % UInt64(side))
            let transparent = index % 5 == 4
            return TestFrame(
                left: left, top: top, width: 1, height: 1, indices: [transparent ? 1 : 0],
                transparentIndex: transparent ? 1 : nil, disposal: index % 4)
        }
    }

    @Test func aHugeScreenOfBlankTinyFramesIsDecidedWithWorkFollowingTheFrames() throws {
        let side = 4096
        let frames = Self.blankTinyFrames(side: side, count: 5000)
        let gif = try writeTestGIF(width: side, height: side, palette: Self.palette, frames: frames)
        #expect(gif.count < 120_000, "a small file: \(gif.count) bytes")
        let info = try GIFInspector.inspect(bytes: gif)
        #expect(info.frameCount == 5000 && info.width == side && info.height == side)

        let still = try StillFrameDecoder.decode(bytes: gif)
        // Every frame is blank: the still is the first one, a white screen.
        #expect(still.frameIndex == 0)
        #expect(still.image.width == side && still.image.height == side)
        #expect(still.image.pixels.allSatisfy { $0 == 255 })
        #expect(still.work.frames == 5000)
        // The screen filled at the start and once more for the all-blank answer, plus a few
        // touches per frame pixel. Flattening and scanning per frame was 5000 x 16.8 million.
        let screen = side * side
        #expect(still.work.pixels <= 2 * screen + 4 * 5000, "\(still.work.pixels) pixels touched")

        let placeholders = try GIFPlaceholderDeriver.derive(still: still, settings: PlaceholderSettings(posterSizes: [80]))
        let poster = try #require(placeholders.posters[80])
        let decoded = try StillFrameDecoder.decode(bytes: poster)
        #expect(decoded.image.width == 80 && decoded.image.height == 80)
        #expect(decoded.image.pixels.allSatisfy { $0 == 255 }, "white stays white")
        #expect(placeholders.averageColor == "#ffffff")
    }

    @Test func aNonBlankFrameAfterThousandsOfBlankOnesIsTheStillAndCostsOnlyItsArea() throws {
        let side = 4096
        var frames = Self.blankTinyFrames(side: side, count: 4999)
        // The last frame: a black pixel in the bottom right corner.
        frames.append(TestFrame(left: side - 1, top: side - 1, width: 1, height: 1, indices: [1]))
        let gif = try writeTestGIF(width: side, height: side, palette: Self.palette, frames: frames)
        let still = try StillFrameDecoder.decode(bytes: gif)
        #expect(still.frameIndex == 4999)
        #expect(still.work.frames == 5000)
        #expect(still.work.pixels <= side * side + 4 * 5000, "\(still.work.pixels) pixels touched")
        let pixels = still.image.pixels
        #expect(Array(pixels[(pixels.count - 3)...]) == [0, 0, 0])
        #expect(pixels.dropLast(3).allSatisfy { $0 == 255 })
    }

    /// A large frame (half the screen or more) is tested by one scan of the screen: at most twice
    /// its own area, whatever the number of frames.
    @Test func largeBlankFramesCostAScanEachWhichIsAtMostTwiceTheirArea() throws {
        let white = TestFrame(width: 64, height: 64, indices: [UInt8](repeating: 0, count: 64 * 64), disposal: 3)
        let half = TestFrame(width: 64, height: 32, indices: [UInt8](repeating: 0, count: 64 * 32), disposal: 2)
        let gif = try writeTestGIF(width: 64, height: 64, palette: Self.palette, frames: Array(repeating: [white, half], count: 50).flatMap { $0 })
        let still = try StillFrameDecoder.decode(bytes: gif)
        #expect(still.frameIndex == 0 && still.work.frames == 100)
        let framesArea = 50 * (64 * 64 + 64 * 32)
        #expect(still.work.pixels <= 2 * 64 * 64 + 4 * framesArea, "\(still.work.pixels) pixels touched")
    }

    /// The still is unchanged by how it is computed: random frames (sizes from 1x1 to the whole
    /// screen, positions, transparency, every disposal method, interlacing, several blank frames
    /// first) against a plain compositor that flattens and scans the whole screen per frame.
    @Test func theStillMatchesAPlainWholeScreenCompositor() throws {
        var random = SplitMix64(seed: 77)
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        for round in 0..<60 {
            let (width, height) = (1 + below(24), 1 + below(24))
            var frames: [TestFrame] = []
            // A few blank frames first (white, transparent or one colour covering the screen).
            for _ in 0..<below(4) {
                let color = UInt8(below(3))
                frames.append(
                    TestFrame(
                        width: width, height: height, indices: [UInt8](repeating: color, count: width * height),
                        transparentIndex: below(3) == 0 ? Int(color) : nil, disposal: below(4)))
            }
            for _ in 0..<(1 + below(6)) {
                let (w, h) = (1 + below(width), 1 + below(height))
                let (left, top) = (below(width - w + 1), below(height - h + 1))
                // Mostly one colour (so screens often stay blank), sometimes mixed.
                let base = UInt8(below(4))
                let indices = (0..<(w * h)).map { _ in below(5) == 0 ? UInt8(below(4)) : base }
                frames.append(
                    TestFrame(
                        left: left, top: top, width: w, height: h, indices: indices,
                        transparentIndex: below(3) == 0 ? below(4) : nil, disposal: below(4),
                        interlaced: below(4) == 0))
            }
            let gif = try writeTestGIF(width: width, height: height, palette: Self.palette, frames: frames)
            let still = try StillFrameDecoder.decode(bytes: gif)
            let expected = plainStill(width: width, height: height, frames: frames)
            #expect(still.frameIndex == expected.frameIndex, "round \(round)")
            #expect(still.image.pixels == expected.pixels, "round \(round)")
        }
    }

    /// The rule of docs/FORMAT.md, "Placeholders and posters", the plain way: RGBA screen, every
    /// frame flattened over white and scanned.
    func plainStill(width: Int, height: Int, frames: [TestFrame]) -> (frameIndex: Int, pixels: [UInt8]) {
        var screen = [UInt8](repeating: 0, count: width * height * 4)
        var first: [UInt8]?
        for (index, frame) in frames.enumerated() {
            let saved = screen
            for y in 0..<frame.height {
                for x in 0..<frame.width {
                    let value = Int(frame.indices[y * frame.width + x])
                    guard value != frame.transparentIndex else { continue }
                    let color = Self.palette[value]
                    let offset = ((frame.top + y) * width + frame.left + x) * 4
                    screen[offset] = color.0; screen[offset + 1] = color.1; screen[offset + 2] = color.2; screen[offset + 3] = 255
                }
            }
            var flat: [UInt8] = []
            for pixel in 0..<(width * height) {
                flat += screen[pixel * 4 + 3] == 0 ? [255, 255, 255] : Array(screen[(pixel * 4)..<(pixel * 4 + 3)])
            }
            let blank = (0..<(width * height)).allSatisfy { flat[$0 * 3..<$0 * 3 + 3] == flat[0..<3] }
            if !blank { return (index, flat) }
            if first == nil { first = flat }
            switch frame.disposal {
            case 2:
                for y in frame.top..<(frame.top + frame.height) {
                    for x in frame.left..<(frame.left + frame.width) { screen[(y * width + x) * 4 + 3] = 0 }
                }
            case 3: screen = saved
            default: break
            }
        }
        return (0, first ?? [])
    }
}

import GIFSynthesis
import Foundation
import GifPackGIF
import GifPackWebP
import Testing
@testable import GifPackTestSupport

/// The WebP codec: each GIF's animated WebP, encoded with libwebp under pinned settings,
/// decoded back with libwebp and compared frame by frame with the GIF's composited frames (canvas,
/// frame count, delays, loop count, SSIM), climbing to a higher quality and then lossless when the
/// gate refuses, and listing the GIF when even that is not smaller. Real encodes and decodes on
/// GIFs written by giflib.
@Suite("WebP codec: libwebp encodes, decodes back and gates on SSIM", .computes, .timeLimit(.minutes(5)))
struct WebPCodecTests {
    /// 216 colours of a 6x6x6 cube, 39 greys, and index 255 (magenta) for transparency.
    static let palette: [(UInt8, UInt8, UInt8)] = {
        var colors: [(UInt8, UInt8, UInt8)] = []
        for red in 0..<6 { for green in 0..<6 { for blue in 0..<6 { colors.append((UInt8(red * 51), UInt8(green * 51), UInt8(blue * 51))) } } }
        for grey in 0..<39 { colors.append((UInt8(grey * 255 / 38), UInt8(grey * 255 / 38), UInt8(grey * 255 / 38))) }
        colors.append((255, 0, 255))
        return colors
    }()

    static func cube(_ red: Double, _ green: Double, _ blue: Double) -> UInt8 {
        func level(_ value: Double) -> Int { min(5, max(0, Int((value * 5).rounded()))) }
        return UInt8(level(red) * 36 + level(green) * 6 + level(blue))
    }

    /// A picture like an exercise GIF's: a still gradient background and a disc moving round it
    /// (`transparent`: no background, the disc alone on a transparent screen, each frame disposed
    /// to the background). `pose` places the disc.
    static func picture(width: Int, height: Int, pose: Int, poses: Int, transparent: Bool) -> [UInt8] {
        let angle = 2 * Double.pi * Double(pose) / Double(max(1, poses))
        let (centerX, centerY) = (Double(width) / 2 + Double(width) / 4 * cos(angle), Double(height) / 2 + Double(height) / 4 * sin(angle))
        let radius = Double(min(width, height)) / 5 + 1
        var indices = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let distance = ((Double(x) - centerX) * (Double(x) - centerX) + (Double(y) - centerY) * (Double(y) - centerY)).squareRoot()
                if distance <= radius {
                    indices[y * width + x] = cube(0.2, 0.2, 0.8)
                } else if transparent {
                    indices[y * width + x] = 255
                } else {
                    indices[y * width + x] = cube(0.9, 0.6 + 0.4 * Double(y) / Double(height), 0.5 + 0.3 * Double(x) / Double(width))
                }
            }
        }
        return indices
    }

    /// `frames` full-screen frames; `delays` cycles through per frame; `hold` shows each pose that many frames.
    static func animation(
        width: Int, height: Int, frames: Int, transparent: Bool = false, delays: [Int] = [8],
        hold: Int = 1, loopCount: Int? = 0
    ) throws -> [UInt8] {
        let poses = max(1, frames / hold)
        let testFrames = (0..<frames).map { index in
            TestFrame(
                width: width, height: height,
                indices: picture(width: width, height: height, pose: index / hold, poses: poses, transparent: transparent),
                transparentIndex: transparent ? 255 : nil, disposal: transparent ? 2 : 0,
                delayCentiseconds: delays[index % delays.count])
        }
        return try writeTestGIF(width: width, height: height, palette: palette, frames: testFrames, loopCount: loopCount)
    }

    /// Every frame of the WebP as RGBA, with its duration (libwebp's animation decoder).
    static func decodeGIF(_ gif: [UInt8]) throws -> [(pixels: [UInt8], delay: Int)] {
        let reader = try GIFAnimationReader(bytes: gif)
        var frames: [(pixels: [UInt8], delay: Int)] = []
        while let delay = try reader.nextFrame() { frames.append((reader.canvas, delay)) }
        return frames
    }

    @Test func anOpaqueAnimationIsSmallerWithEveryFrameAtTheBar() throws {
        let gif = try Self.animation(width: 96, height: 64, frames: 12)
        let info = try GIFInspector.inspect(bytes: gif)
        let rendition = try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: info.loopCount, policy: .standard)
        guard case .webp(let webp, let settings, let comparison) = rendition.choice else {
            Issue.record("the GIF was kept: \(rendition.attempts)")
            return
        }
        #expect(settings == .q75 && rendition.outcomeLabel == "q75")
        #expect(Array(webp.prefix(4)) == Array("RIFF".utf8) && Array(webp[8..<12]) == Array("WEBP".utf8))
        #expect(webp.count < gif.count, "\(webp.count) bytes against the GIF's \(gif.count)")
        #expect(comparison.mismatch == nil && comparison.frames == 12)
        #expect(comparison.worstSSIM >= 0.98 && comparison.meanSSIM >= comparison.worstSSIM && comparison.meanSSIM <= 1)
        #expect(rendition.attempts.count == 1 && rendition.attempts[0].passedGate)
    }

    @Test func transparencyIsKeptExactly() throws {
        let gif = try Self.animation(width: 64, height: 48, frames: 8, transparent: true)
        let webp = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: 0, settings: .q75)
        let comparison = try WebPComparison.compare(webp: webp, gif: gif, gifLoopCount: 0)
        #expect(comparison.mismatch == nil && comparison.frames == 8 && comparison.worstSSIM >= 0.98, "\(comparison)")
        // The decoded WebP's alpha is the GIF's, pixel for pixel, on every frame.
        let gifFrames = try Self.decodeGIF(gif)
        let webpFrames = try WebPFrames.decode(webp)
        #expect(webpFrames.count == gifFrames.count)
        for (gifFrame, webpFrame) in zip(gifFrames, webpFrames) {
            let gifAlpha = stride(from: 3, to: gifFrame.pixels.count, by: 4).map { gifFrame.pixels[$0] }
            let webpAlpha = stride(from: 3, to: webpFrame.pixels.count, by: 4).map { webpFrame.pixels[$0] }
            #expect(gifAlpha == webpAlpha)
            #expect(gifAlpha.contains(0) && gifAlpha.contains(255))
        }
    }

    @Test func oneFrameOfAnOddSize() throws {
        let gif = try Self.animation(width: 37, height: 23, frames: 1, loopCount: nil)
        let info = try GIFInspector.inspect(bytes: gif)
        #expect(info.loopCount == nil)
        let webp = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: nil, settings: .q75)
        let comparison = try WebPComparison.compare(webp: webp, gif: gif, gifLoopCount: nil)
        #expect(comparison.mismatch == nil, "\(comparison)")
        #expect(comparison.frames == 1 && comparison.worstSSIM >= 0.98, "\(comparison)")
        // libwebp writes one full-canvas frame as a still image: no ANIM chunk, one frame.
        #expect(!webp.indices.dropLast(4).contains { Array(webp[$0..<($0 + 4)]) == Array("ANIM".utf8) })
        #expect(try WebPFrames.decode(webp).count == 1)
        #expect(WebPAnimationEncoder.webPLoopCount(gifLoopCount: nil) == 1)
    }

    /// 200 frames of an odd size, each pose held for two frames (libwebp merges an unchanged frame
    /// into the one before: it is put back) and some delays 0 (which libwebp's encoder cannot be
    /// given): the WebP has the GIF's 200 frames and its delays, one for one.
    @Test func twoHundredFramesKeepTheirCountAndDelays() throws {
        let gif = try Self.animation(width: 21, height: 15, frames: 200, delays: [4, 0, 7, 12], hold: 2, loopCount: 3)
        let webp = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: 3, settings: .q75)
        let frames = try WebPFrames.decode(webp)
        #expect(frames.count == 200)
        #expect(frames.map(\.duration) == (0..<200).map { [40, 0, 70, 120][$0 % 4] })
        // A NETSCAPE2.0 count of 3 repeats the animation 3 times after the first showing.
        #expect(try WebPFrames.loopCount(webp) == 4)
        let comparison = try WebPComparison.compare(webp: webp, gif: gif, gifLoopCount: 3)
        #expect(comparison.mismatch == nil && comparison.frames == 200, "\(comparison)")
        // The rendition climbs the rungs until every one of the 200 frames clears the bar.
        let rendition = try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: 3, policy: .standard)
        guard case .webp(let chosen, _, let chosenComparison) = rendition.choice else {
            Issue.record("no WebP cleared the bar: \(rendition.attempts)")
            return
        }
        #expect(try WebPFrames.decode(chosen).map(\.duration) == frames.map(\.duration))
        #expect(chosenComparison.frames == 200 && chosenComparison.worstSSIM >= 0.98, "\(chosenComparison)")
    }

    @Test func theSameGIFGivesTheSameBytes() throws {
        let gif = try Self.animation(width: 50, height: 40, frames: 6, transparent: true)
        for settings in WebPEncodingPolicy.standard.rungs {
            let first = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: 0, settings: settings)
            let second = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: 0, settings: settings)
            #expect(first == second, "\(settings.key)")
        }
        let lossless = try WebPAnimationEncoder.encode(gif: gif, gifLoopCount: 0, settings: .lossless)
        let comparison = try WebPComparison.compare(webp: lossless, gif: gif, gifLoopCount: 0)
        #expect(comparison.worstSSIM == 1 && comparison.mismatch == nil)
    }

    /// A deliberately degraded setting (quality 5) injected through the policy: the gate refuses
    /// it on SSIM, the next rung (lossless) is chosen; with no other rung the rendition lists the GIF.
    @Test func theGateRefusesADegradedSetting() throws {
        let gif = try Self.animation(width: 96, height: 64, frames: 6)
        // Lossy frames only (the default): a mixed encode would keep these flat-coloured frames lossless.
        let degraded = WebPEncoderSettings(quality: 5, method: 0)
        let withLossless = try WebPRenditionEncoder.encode(
            gif: gif, gifLoopCount: 0,
            policy: WebPEncodingPolicy(rungs: [degraded, .lossless]))
        #expect(withLossless.attempts.count == 2)
        #expect(!withLossless.attempts[0].passedGate && withLossless.attempts[0].comparison.mismatch == nil)
        #expect(withLossless.attempts[0].comparison.worstSSIM < 0.98, "\(withLossless.attempts[0].comparison)")
        if case .webp(_, let settings, let comparison) = withLossless.choice {
            #expect(settings == .lossless && comparison.worstSSIM == 1)
        } else {
            Issue.record("lossless should have been chosen: \(withLossless.attempts)")
        }
        let alone = try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: 0, policy: WebPEncodingPolicy(rungs: [degraded]))
        #expect(alone.choice == .useGIF && alone.outcomeLabel == "gif" && alone.attempts.count == 1)
    }

    /// A WebP that passes the gate but is not smaller than the GIF is not used: a one-colour GIF
    /// is a few dozen bytes, less than any WebP of it.
    @Test func aWebPNoSmallerThanTheGIFListsTheGIF() throws {
        let frames = (0..<3).map { _ in TestFrame(width: 8, height: 8, indices: [UInt8](repeating: 1, count: 64)) }
        let gif = try writeTestGIF(width: 8, height: 8, palette: [(10, 20, 30), (200, 100, 0)], frames: frames, loopCount: 0)
        let rendition = try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: 0, policy: .standard)
        #expect(rendition.choice == .useGIF)
        #expect(
            rendition.attempts.count == WebPEncodingPolicy.standard.rungs.count && rendition.attempts.allSatisfy { $0.passedGate && $0.bytes >= gif.count },
            "\(gif.count) bytes: \(rendition.attempts.map { "\($0.settings.label) \($0.bytes)" })")
    }

    @Test func aDifferentStructureIsAMismatch() throws {
        let twelve = try Self.animation(width: 40, height: 30, frames: 12)
        let six = try Self.animation(width: 40, height: 30, frames: 6)
        let webp = try WebPAnimationEncoder.encode(gif: twelve, gifLoopCount: 0, settings: .q75)
        #expect(try WebPComparison.compare(webp: webp, gif: six, gifLoopCount: 0).mismatch == "more frames than the GIF's 6")
        #expect(try WebPComparison.compare(webp: webp, gif: twelve, gifLoopCount: nil).mismatch == "loop count 0, the GIF's gives 1")
        let slower = try Self.animation(width: 40, height: 30, frames: 12, delays: [9])
        #expect(try WebPComparison.compare(webp: webp, gif: slower, gifLoopCount: 0).mismatch == "frame 1 lasts 80 ms, the GIF's 90 ms")
    }

    /// The composited frames honour each disposal method: 3 restores what was under the frame, 2
    /// clears its rectangle to transparent.
    @Test func theGIFReaderHonoursDisposal() throws {
        let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 0, 0)]
        let frames = [
            TestFrame(width: 3, height: 1, indices: [0, 0, 0]),
            TestFrame(left: 1, top: 0, width: 1, height: 1, indices: [1], disposal: 3),
            TestFrame(left: 2, top: 0, width: 1, height: 1, indices: [2], disposal: 2),
            TestFrame(left: 0, top: 0, width: 1, height: 1, indices: [3], transparentIndex: 3)
        ]
        let decoded = try Self.decodeGIF(try writeTestGIF(width: 3, height: 1, palette: palette, frames: frames))
        let red: [UInt8] = [255, 0, 0, 255], green: [UInt8] = [0, 255, 0, 255], blue: [UInt8] = [0, 0, 255, 255], clear: [UInt8] = [0, 0, 0, 0]
        #expect(decoded.map(\.pixels) == [red + red + red, red + green + red, red + red + blue, red + red + clear])
        #expect(decoded.map(\.delay) == [100, 100, 100, 100])
    }

    @Test func ssimIsOneForEqualFramesAndFallsWithNoise() {
        let width = 24, height = 17
        let frame = (0..<(width * height)).flatMap { index -> [UInt8] in [UInt8(index % 251), UInt8(index % 13 * 19), 90, 255] }
        var noisy = frame
        var random = SplitMix64(seed: 47)
        for index in stride(from: 0, to: noisy.count, by: 4) { noisy[index] = UInt8(truncatingIfNeeded: random.next()) }
        frame.withUnsafeBufferPointer { first in
            #expect(abs(SSIM.frameSSIM(first, first, width: width, height: height) - 1) < 1e-6)
            noisy.withUnsafeBufferPointer { second in
                #expect(SSIM.frameSSIM(first, second, width: width, height: height) < 0.9)
            }
        }
    }

    /// The gate's SSIM (padded planes, eight pixels at a time, one workspace for every frame pair)
    /// gives, to the last bit, the figures of the direct definition: each pixel's 11 x 11 Gaussian
    /// window as two 11-tap passes with the borders clamped, over white and, when a pixel is not
    /// opaque, over black. Sizes below the window, of one pixel, and with rows that are not a
    /// multiple of eight pixels included.
    @Test func ssimIsTheDirectFilterToTheLastBit() {
        var random = SplitMix64(seed: 1987)
        for (width, height) in [(24, 17), (3, 5), (1, 1), (9, 30), (180, 12), (17, 8)] {
            let workspace = SSIM.Workspace(width: width, height: height)
            for transparent in [false, true] {
                let first = (0..<(width * height * 4)).map { index -> UInt8 in
                    index % 4 == 3 ? (transparent && index % 7 == 0 ? UInt8(truncatingIfNeeded: random.next()) : 255) : UInt8(truncatingIfNeeded: random.next())
                }
                let second = first.enumerated().map { index, value in
                    index % 4 == 3 ? value : UInt8(clamping: Int(value) + Int(random.next() % 41) - 20)
                }
                first.withUnsafeBufferPointer { first in
                    second.withUnsafeBufferPointer { second in
                        let direct = Self.directSSIM(first, second, width: width, height: height)
                        #expect(SSIM.frameSSIM(first, second, workspace: workspace) == direct, "\(width)x\(height), transparent: \(transparent)")
                        #expect(SSIM.frameSSIM(first, second, width: width, height: height) == direct)
                        #expect(direct < 1 && direct > 0.1, "\(direct)")
                    }
                }
            }
        }
    }

    /// SSIM by its definition, pixel by pixel, with clamped borders.
    static func directSSIM(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> Double {
        let weights: [Float] = {
            let weights = (-5...5).map { offset in Float(exp(-Double(offset * offset) / (2 * 1.5 * 1.5))) }
            let total = weights.reduce(0, +)
            return weights.map { $0 / total }
        }()
        func luma(_ pixels: UnsafeBufferPointer<UInt8>, _ background: Float) -> [Float] {
            (0..<(width * height)).map { index in
                let alpha = Float(pixels[index * 4 + 3]) / 255
                let under = background * (1 - alpha)
                let red = Float(pixels[index * 4]) * alpha + under
                let green = Float(pixels[index * 4 + 1]) * alpha + under
                let blue = Float(pixels[index * 4 + 2]) * alpha + under
                return 0.299 * red + 0.587 * green + 0.114 * blue
            }
        }
        func blur(_ plane: [Float]) -> [Float] {
            var rows = [Float](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    for tap in 0..<11 { sum += weights[tap] * plane[y * width + min(width - 1, max(0, x + tap - 5))] }
                    rows[y * width + x] = sum
                }
            }
            var result = [Float](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    for tap in 0..<11 { sum += weights[tap] * rows[min(height - 1, max(0, y + tap - 5)) * width + x] }
                    result[y * width + x] = sum
                }
            }
            return result
        }
        func ssim(_ a: [Float], _ b: [Float]) -> Double {
            let (meanA, meanB) = (blur(a), blur(b))
            let (squaresA, squaresB, cross) = (blur(a.map { $0 * $0 }), blur(b.map { $0 * $0 }), blur(zip(a, b).map { $0 * $1 }))
            let c1: Float = (0.01 * 255) * (0.01 * 255)
            let c2: Float = (0.03 * 255) * (0.03 * 255)
            var total = 0.0
            for index in 0..<(width * height) {
                let (muA, muB) = (meanA[index], meanB[index])
                let varianceA = squaresA[index] - muA * muA
                let varianceB = squaresB[index] - muB * muB
                let covariance = cross[index] - muA * muB
                let numerator = (2 * muA * muB + c1) * (2 * covariance + c2)
                let denominator = (muA * muA + muB * muB + c1) * (varianceA + varianceB + c2)
                total += Double(numerator / denominator)
            }
            return total / Double(width * height)
        }
        let overWhite = ssim(luma(first, 255), luma(second, 255))
        let opaque = (0..<(width * height)).allSatisfy { first[$0 * 4 + 3] == 255 && second[$0 * 4 + 3] == 255 }
        return opaque ? overWhite : min(overWhite, ssim(luma(first, 0), luma(second, 0)))
    }
}

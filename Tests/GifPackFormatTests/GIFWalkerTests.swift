import GIFSynthesis
import Foundation
import GifPackGIF
import GifPackGIFCore
import Testing
@testable import GifPackTestSupport

/// The client checks GIFs with ``GIFWalker`` (pure Swift); the builder with giflib (`GIFInspector`).
/// These tests hold the walker to giflib: the same ``GIFInfo`` for every valid GIF, and the same
/// verdict (accepted, or refused with the same rejection kind) for broken, truncated and damaged
/// ones, on GIFs of every shape the fixture's synthesizer and a hand-written LZW encoder make, and on
/// the real ExerciseDB sample when it is on this machine.
@Suite("GIF walker (pure Swift) against giflib", .computes, .timeLimit(.minutes(3)))
struct GIFWalkerTests {
    /// What a check says about a GIF: its info, or the rejection's kind (the wording differs).
    enum Verdict: Equatable, CustomStringConvertible {
        case accepted(GIFInfo)
        case refused(String)

        var description: String {
            switch self {
            case .accepted(let info): "accepted \(info)"
            case .refused(let reason): "refused (\(reason))"
            }
        }
    }

    static func walker(_ bytes: [UInt8], _ limits: GIFLimits = .standard) -> Verdict {
        do { return .accepted(try GIFWalker.inspect(bytes: bytes, limits: limits)) } catch { return .refused(error.reason) }
    }

    static func giflib(_ bytes: [UInt8], _ limits: GIFLimits = .standard) -> Verdict {
        do { return .accepted(try GIFInspector.inspect(bytes: bytes, limits: limits)) } catch { return .refused(error.reason) }
    }

    /// Synthesized GIFs: sizes, frame counts, palettes, delays and loop counts (none, forever, n).
    static func synthesized() throws -> [[UInt8]] {
        var gifs: [[UInt8]] = []
        var seed: UInt64 = 1
        for (width, height) in [(1, 1), (7, 3), (64, 48), (180, 180), (301, 97)] {
            for frames in [1, 2, 12] {
                for colors in [2, 5, 16, 256] {
                    for loop in [nil, 0, 3] as [Int?] {
                        seed += 1
                        gifs.append(
                            try GIFSynthesizer.animatedGIF(
                                width: width, height: height, frames: frames, colors: colors,
                                seed: seed, delayCentiseconds: Int(seed % 17), loopCount: loop))
                    }
                }
            }
        }
        return gifs
    }

    /// Streams no encoder of giflib's makes: no clear code first, no end code, a full table kept.
    static func handEncoded() -> [[UInt8]] {
        var gifs: [[UInt8]] = []
        for size in [1, 2, 4, 8] {
            let shapes = [
                LZWPixelCounterTests.Encoder(minimumCodeSize: size),
                LZWPixelCounterTests.Encoder(minimumCodeSize: size, clearFirst: false, endCode: false),
                LZWPixelCounterTests.Encoder(minimumCodeSize: size, clearWhenFull: false)
            ]
            for (number, encoder) in shapes.enumerated() {
                for runs in [false, true] {
                    let pixels = LZWPixelCounterTests.pixels(count: 97 * 61, minimumCodeSize: size, runs: runs, seed: UInt64(number * 2 + 1))
                    gifs.append(LZWPixelCounterTests.gif(width: 97, height: 61, minimumCodeSize: size, data: encoder.encode(pixels)))
                }
            }
        }
        return gifs
    }

    /// Found by the `gif` fuzz target: a frame with no colour table and an LZW code size of 10 that
    /// ends right after it; giflib refuses it as `bad-frame` at the image descriptor.
    @Test func aFrameWithoutAColourTableAndAnOversizedCodeSizeGetsGiflibsVerdict() throws {
        let bytes = try #require(Data(base64Encoded: "R0lGODlhCAEGAAMAACwAAAAACAAGAAAK")).map { $0 }
        #expect(Self.walker(bytes) == Self.giflib(bytes))
    }

    @Test func everyValidGIFGivesTheSameInfoAsGiflib() throws {
        let gifs = try Self.synthesized() + Self.handEncoded()
        var accepted = 0
        for (number, bytes) in gifs.enumerated() {
            let expected = Self.giflib(bytes)
            #expect(Self.walker(bytes) == expected, "GIF \(number)")
            if case .accepted = expected { accepted += 1 }
            // Bytes after the trailer are ignored by both.
            #expect(Self.walker(bytes + [0x00, 0x21, 0xFF]) == expected, "GIF \(number) with trailing bytes")
        }
        #expect(accepted == gifs.count)
    }

    /// The real sample (``RealSample``, never copied into the project): every GIF, when the folder is
    /// on this machine (otherwise skipped, visibly).
    @Test(.enabled(if: RealSample.has("gifs"), RealSample.missing))
    func theRealSampleGivesTheSameInfoAsGiflib() throws {
        let folder = RealSample.gifs
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        var compared = 0
        for name in names.sorted() where name.hasSuffix(".gif") {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)")))
            let expected = Self.giflib(bytes)
            #expect(Self.walker(bytes) == expected, "\(name)")
            if case .accepted = expected { compared += 1 }
        }
        #expect(compared > 200)
    }

    @Test func everyCutOfAGIFIsRefusedAsGiflibRefusesIt() throws {
        let gifs = [
            try GIFSynthesizer.animatedGIF(width: 23, height: 17, frames: 3, colors: 7, seed: 5, loopCount: 2),
            LZWPixelCounterTests.gif(
                width: 40, height: 30, minimumCodeSize: 4,
                data: LZWPixelCounterTests.Encoder(minimumCodeSize: 4, endCode: false)
                    .encode(LZWPixelCounterTests.pixels(count: 1200, minimumCodeSize: 4, runs: true, seed: 2)))
        ]
        for bytes in gifs {
            for length in 0..<bytes.count {
                let cut = Array(bytes.prefix(length))
                let expected = Self.giflib(cut)
                #expect(Self.walker(cut) == expected, "cut at \(length) of \(bytes.count)")
                #expect(expected != .accepted(try GIFInspector.inspect(bytes: bytes)) || length == bytes.count)
            }
        }
    }

    @Test func damagedGIFsGetGiflibsVerdict() throws {
        // Bits flipped and bytes replaced anywhere (headers, tables, extensions, LZW data, length
        // bytes), files cut short: the walker's verdict is giflib's on every one, and all three
        // outcomes (accepted, refused in a frame, refused elsewhere) occur.
        var random = SplitMix64(seed: 2027)
        let sources =
            try [
                GIFSynthesizer.animatedGIF(width: 48, height: 40, frames: 3, colors: 5, seed: 11),
                GIFSynthesizer.animatedGIF(width: 40, height: 40, frames: 2, colors: 256, seed: 12, loopCount: nil),
                GIFSynthesizer.animatedGIF(width: 9, height: 31, frames: 4, colors: 2, seed: 13, loopCount: 7)
            ]
            + Self.handEncoded().enumerated().filter { $0.offset % 4 == 0 }.map(\.element)
        var outcomes: [String: Int] = [:]
        for round in 0..<3_000 {
            var bytes = sources[round % sources.count]
            switch random.next() % 8 {
            case 0: bytes.removeLast(Int(random.next() % UInt64(bytes.count - 1)) + 1)
            case 1: bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes[6 + Int(random.next() % 40)] = UInt8(truncatingIfNeeded: random.next())  // screen, tables, extensions
            default:
                let start = bytes.count / 4
                for _ in 0..<(Int(random.next() % 3) + 1) {
                    bytes[start + Int(random.next() % UInt64(bytes.count - start - 2))] ^= UInt8(1 << (random.next() % 8))
                }
            }
            let expected = Self.giflib(bytes)
            #expect(Self.walker(bytes) == expected, "round \(round)")
            switch expected {
            case .accepted: outcomes["accepted", default: 0] += 1
            case .refused(let reason): outcomes[reason, default: 0] += 1
            }
        }
        #expect(
            (outcomes["accepted"] ?? 0) > 100 && (outcomes["bad-frame"] ?? 0) > 100 && (outcomes["truncated"] ?? 0) > 100,
            "\(outcomes)")
    }

    @Test func irregularLZWStreamsGetGiflibsVerdict() throws {
        // Codes neither in the table nor next (giflib decodes some as the next code and calls others
        // defective), the end code early, an empty sub-block early, minimum code sizes 0 and 9 to 12.
        var random = SplitMix64(seed: 99)
        var kinds: [String: Int] = [:]
        for round in 0..<2_000 {
            let size = [0, 1, 2, 3, 8, 9, 10, 11, 12][round % 9]
            let width = Int(random.next() % 20) + 1, height = Int(random.next() % 12) + 1
            var data: [UInt8] = []
            for _ in 0..<(Int(random.next() % 60) + 1) { data.append(UInt8(truncatingIfNeeded: random.next())) }
            if round % 5 == 0 {
                let pixels = LZWPixelCounterTests.pixels(count: width * height, minimumCodeSize: min(size, 8), runs: true, seed: UInt64(round))
                data = LZWPixelCounterTests.Encoder(minimumCodeSize: max(1, min(size, 8))).encode(pixels)
                data[Int(random.next() % UInt64(data.count))] ^= UInt8(1 << (random.next() % 8))
            }
            let bytes = LZWPixelCounterTests.gif(width: width, height: height, minimumCodeSize: size, data: data)
            let expected = Self.giflib(bytes)
            #expect(Self.walker(bytes) == expected, "round \(round): code size \(size), \(width)x\(height)")
            kinds["\(expected)".hasPrefix("accepted") ? "accepted" : "\(expected)", default: 0] += 1
        }
        #expect((kinds["accepted"] ?? 0) > 50 && (kinds["refused (bad-frame)"] ?? 0) > 50, "\(kinds)")
    }

    @Test func limitsAndOddFilesAreRefusedAsGiflibRefusesThem() throws {
        let gif = try GIFSynthesizer.animatedGIF(width: 64, height: 48, frames: 5, colors: 16, seed: 3)
        for limits in [
            GIFLimits(maxWidth: 63), GIFLimits(maxHeight: 47), GIFLimits(maxFrames: 4),
            GIFLimits(maxTotalPixels: 64 * 48 * 5 - 1), GIFLimits(maxFrames: 5, maxTotalPixels: 64 * 48 * 5)
        ] {
            #expect(Self.walker(gif, limits) == Self.giflib(gif, limits), "\(limits)")
        }
        #expect(Self.walker(gif, GIFLimits(maxFrames: 4)) == .refused("too-large"))
        let screenOnly = Array(gif.prefix(13 + 3 * 16)) + [0x3B]
        let odd: [[UInt8]] = [
            [], Array("GIF8".utf8), Array("<html>".utf8), Array("GIF89b".utf8), Array("GIF87a".utf8),
            screenOnly,  // no frames
            Array(gif.prefix(13)) + [0x3B],  // table cut short
            Array("GIF89a".utf8) + [0, 0, 0, 0, 0, 0, 0, 0x3B],  // zero-size screen
            Array(gif.prefix(13 + 48)) + [0x99]
        ]  // unknown record
        for bytes in odd {
            let expected = Self.giflib(bytes)
            #expect(Self.walker(bytes) == expected, "\(bytes.prefix(16))")
            #expect(expected != .accepted(try GIFInspector.inspect(bytes: gif)))
        }
        #expect(Self.walker(Array("<html>".utf8)) == .refused("not-a-gif"))
        #expect(Self.walker(screenOnly) == .refused("bad-frame"))
    }
}

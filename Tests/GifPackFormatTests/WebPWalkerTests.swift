import GIFSynthesis
import Foundation
import GifPackGIF
import GifPackGIFCore
import Testing
@testable import GifPackTestSupport

/// The client's structural check of a WebP container (`WebPWalker`, pure Swift),
/// on real files made by libwebp's own tools (Debian's `webp`: `gif2webp`, `cwebp`, checked against
/// `webpmux -info`) and on containers written by hand to be truncated, oversized or malformed.
@Suite("WebP container walker", .timeLimit(.minutes(3)))
struct WebPWalkerTests {
    static let toolsPresent =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/gif2webp")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/cwebp") && FileManager.default.isExecutableFile(atPath: "/usr/bin/webpmux")

    /// What `webpmux -info` (libwebp's demuxer) says of a file: canvas, frames, loop count, the durations' sum.
    static func muxInfo(_ path: String) async throws -> (width: Int, height: Int, frames: Int, loop: Int?, duration: Int) {
        let result = try await run("/usr/bin/webpmux", ["-info", path])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        let canvas = try #require(lines.first { $0.hasPrefix("Canvas size:") }).split(separator: " ").compactMap { Int($0) }
        let frames = lines.first { $0.hasPrefix("Number of frames:") }.flatMap { Int($0.split(separator: " ").last ?? "") }
        let loop = lines.first { $0.contains("Loop Count :") }.flatMap { Int($0.split(separator: " ").last ?? "") }
        // Frame rows: "  1:    32    32    no        0        0       80 …": the duration is the seventh field.
        let durations = lines.filter { $0.trimmingCharacters(in: .whitespaces).first?.isNumber == true && $0.contains(":") }
            .compactMap { line in Int(line.split(separator: " ", omittingEmptySubsequences: true)[6]) }
        return (canvas[0], canvas[1], frames ?? 1, loop, durations.reduce(0, +))
    }

    @Test(.enabled(if: toolsPresent, "needs Debian's webp package (make test-deps)"))
    func realAnimatedAndStillWebPsWalkAsLibwebpReadsThem() async throws {
        let workspace = try TemporaryDirectory()
        // Opaque, one frame, many frames, odd sizes, a loop count, no loop extension; lossy, lossless and mixed.
        let gifs: [(String, [UInt8], [String])] = [
            ("opaque", try GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: 6, colors: 4, seed: 1), ["-q", "75", "-m", "4", "-mixed"]),
            ("one-frame", try GIFSynthesizer.animatedGIF(width: 33, height: 17, frames: 1, colors: 16, seed: 2), ["-lossy"]),
            ("many", try GIFSynthesizer.animatedGIF(width: 21, height: 9, frames: 200, colors: 3, seed: 3, delayCentiseconds: 3), []),
            ("looping-3", try GIFSynthesizer.animatedGIF(width: 64, height: 48, frames: 3, colors: 8, seed: 4, loopCount: 3), ["-lossy", "-q", "90"]),
            ("no-loop", try GIFSynthesizer.animatedGIF(width: 15, height: 31, frames: 2, colors: 2, seed: 5, loopCount: nil), []),
            ("fixture", try fileBytes(PublishServers.repositoryRoot + "/Fuzz/seeds/fixture-0007.gif"), ["-mixed"])
        ]
        for (name, gif, options) in gifs {
            let (gifPath, webpPath) = (workspace.file("\(name).gif"), workspace.file("\(name).webp"))
            try Data(gif).write(to: URL(fileURLWithPath: gifPath))
            let converted = try await run("/usr/bin/gif2webp", options + [gifPath, "-o", webpPath])
            #expect(converted.status == 0, "\(name): \(converted.error)")
            let bytes = try fileBytes(webpPath)
            let info = try WebPWalker.inspect(bytes: bytes)
            let mux = try await Self.muxInfo(webpPath)
            let source = try GIFWalker.inspect(bytes: gif)
            #expect(info.width == mux.width && info.height == mux.height && info.width == source.width && info.height == source.height, "\(name): \(info)")
            #expect(info.frameCount == mux.frames && info.durationMilliseconds == mux.duration, "\(name): \(info) vs \(mux)")
            #expect(info.loopCount == mux.loop || (!info.isAnimated && mux.loop == nil), "\(name): \(info) vs \(mux)")
            #expect(info.isAnimated == (mux.frames > 1 || mux.loop != nil), "\(name)")
            #expect(WebPWalker.hasSignature(bytes) && !WebPWalker.hasSignature(gif))
            // Every cut of a real file is refused, and so is a byte after it.
            for length in 0..<bytes.count {
                #expect(throws: WebPRejection.self, "\(name) cut to \(length) bytes") { try WebPWalker.inspect(bytes: Array(bytes.prefix(length))) }
            }
            #expect(throws: WebPRejection.corrupt("1 bytes follow the RIFF chunk")) { try WebPWalker.inspect(bytes: bytes + [0]) }
        }

        // Stills from cwebp: a simple lossy (VP8) and a simple lossless (VP8L) file of an odd size.
        let ppm = workspace.file("still.ppm")
        try Data(Array("P6\n7 5\n255\n".utf8) + (0..<105).map { UInt8(truncatingIfNeeded: $0 * 37) }).write(to: URL(fileURLWithPath: ppm))
        for options in [["-q", "80"], ["-lossless"], ["-q", "50", "-alpha_q", "50"]] {
            let path = workspace.file("still\(options.joined()).webp")
            let converted = try await run("/usr/bin/cwebp", options + [ppm, "-o", path])
            #expect(converted.status == 0, "\(converted.error)")
            let info = try WebPWalker.inspect(bytes: try fileBytes(path))
            #expect(info == WebPInfo(width: 7, height: 5, frameCount: 1, durationMilliseconds: 0, loopCount: nil, isAnimated: false), "\(options)")
        }
    }

    /// The fuzz target's seeds (Fuzz/corpus/webp, written by Fuzz/make-corpus.py) walk as their names say.
    @Test(.computes) func theFuzzSeedsWalkAsTheirNamesSay() throws {
        let folder = PublishServers.repositoryRoot + "/Fuzz/corpus/webp"
        let refused = ["frame-past-canvas": "bad-frame", "truncated": "truncated", "trailing": "corrupt"]
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count >= 10, "\(names)")
        for name in names {
            let bytes = try fileBytes("\(folder)/\(name)")
            let walked = Result { () throws(WebPRejection) in try WebPWalker.inspect(bytes: bytes) }
            switch (walked, refused[name]) {
            case (.success, nil): break
            case (.failure(let error), let reason?): #expect(error.reason == reason, "\(name): \(error)")
            default: Issue.record("\(name): \(walked)")
            }
        }
    }

    @Test(.computes) func handWrittenContainersOfEveryAcceptedLayout() throws {
        let animated = HandWebP.animated(width: 30, height: 20, frames: 4, delay: 70, loopCount: 5)
        #expect(
            try WebPWalker.inspect(bytes: animated)
                == WebPInfo(width: 30, height: 20, frameCount: 4, durationMilliseconds: 280, loopCount: 5, isAnimated: true))
        // Frames smaller than the canvas, at even offsets; an ALPH before a VP8 image; metadata after the frames.
        let offsets = HandWebP.riff([
            HandWebP.vp8x(width: 40, height: 40, animation: true, alpha: true), HandWebP.anim(loopCount: 0),
            HandWebP.anmf(x: 10, y: 20, width: 30, height: 20, duration: 40, image: HandWebP.vp8l(width: 30, height: 20, alpha: true)),
            HandWebP.anmf(
                x: 0, y: 0, width: 1, height: 1, duration: 60,
                image: HandWebP.chunk("ALPH", [0, 1, 2]) + HandWebP.vp8(width: 1, height: 1)),
            HandWebP.chunk("EXIF", [1, 2, 3, 4, 5]), HandWebP.chunk("XMP ", [7])
        ])
        #expect(
            try WebPWalker.inspect(bytes: offsets)
                == WebPInfo(width: 40, height: 40, frameCount: 2, durationMilliseconds: 100, loopCount: 0, isAnimated: true))
        let still = WebPInfo(width: 7, height: 5, frameCount: 1, durationMilliseconds: 0, loopCount: nil, isAnimated: false)
        #expect(try WebPWalker.inspect(bytes: HandWebP.riff([HandWebP.vp8l(width: 7, height: 5)])) == still)
        #expect(try WebPWalker.inspect(bytes: HandWebP.riff([HandWebP.vp8(width: 7, height: 5)])) == still)
        #expect(
            try WebPWalker.inspect(
                bytes: HandWebP.riff([
                    HandWebP.vp8x(width: 7, height: 5, animation: false, alpha: true),
                    HandWebP.chunk("ALPH", [0, 9]), HandWebP.vp8(width: 7, height: 5)
                ])) == still)
        // A VP8L chunk of an odd length, padded.
        #expect(try WebPWalker.inspect(bytes: HandWebP.riff([HandWebP.vp8l(width: 3, height: 3, filler: 4)])).width == 3)
    }

    @Test(.computes) func truncatedContainersAreRefusedAsTruncated() throws {
        let animated = HandWebP.animated(width: 16, height: 16, frames: 3)
        for length in 0..<animated.count {
            do {
                _ = try WebPWalker.inspect(bytes: Array(animated.prefix(length)))
                Issue.record("accepted \(length) of \(animated.count) bytes")
            } catch {
                // The RIFF size says more than there is: truncated, at every cut (never "not a WebP").
                #expect(error.reason == "truncated", "cut to \(length): \(error)")
            }
        }
        // A RIFF size that fits, with a chunk inside that says more than the RIFF chunk holds.
        var chunkTooLong = HandWebP.riff([HandWebP.vp8l(width: 4, height: 4)])
        chunkTooLong[16] = 200
        #expect(throws: WebPRejection.truncated("chunk \"VP8L\" at byte 12 says 200 bytes; the RIFF chunk has 14 left")) {
            try WebPWalker.inspect(bytes: chunkTooLong)
        }
        // A frame whose image chunk runs past the ANMF chunk.
        let frame = HandWebP.anmf(width: 4, height: 4, duration: 10, image: HandWebP.vp8l(width: 4, height: 4))
        var inner = frame
        inner[8 + 16 + 4] = 99  // the VP8L chunk's size, inside the frame
        let file = HandWebP.riff([HandWebP.vp8x(width: 4, height: 4, animation: true), HandWebP.anim(loopCount: 0), inner])
        #expect(throws: WebPRejection.truncated("chunk \"VP8L\" at byte 68 says 99 bytes; frame 1 has 14 left")) { try WebPWalker.inspect(bytes: file) }
    }

    @Test(.computes) func oversizedContainersAreRefusedBeforeTheirFramesAreWalked() throws {
        #expect(throws: WebPRejection.tooLarge("canvas 5000x20 exceeds 4096x4096")) {
            try WebPWalker.inspect(bytes: HandWebP.animated(width: 5000, height: 20, frames: 1))
        }
        #expect(throws: WebPRejection.tooLarge("canvas 16384x16384 exceeds 4096x4096")) {
            try WebPWalker.inspect(bytes: HandWebP.riff([HandWebP.vp8l(width: 16384, height: 16384)]))
        }
        let small = GIFLimits(maxWidth: 64, maxHeight: 64, maxFrames: 4, maxTotalPixels: 1000)
        #expect(throws: WebPRejection.tooLarge("5 frames exceed 4")) {
            try WebPWalker.inspect(bytes: HandWebP.animated(width: 8, height: 8, frames: 5), limits: small)
        }
        #expect(throws: WebPRejection.tooLarge("the frames' pixels exceed 1000")) {
            try WebPWalker.inspect(bytes: HandWebP.animated(width: 20, height: 20, frames: 3), limits: small)
        }
        // The largest a VP8X canvas can say (2^24 a side) is refused by the limits, not overflowed.
        var huge = HandWebP.animated(width: 8, height: 8, frames: 1)
        for at in 24..<30 { huge[at] = 0xFF }
        #expect(throws: WebPRejection.tooLarge("canvas 16777216x16777216 exceeds 4096x4096")) { try WebPWalker.inspect(bytes: huge) }
    }

    @Test(.computes) func malformedContainersAreRefusedWithTheirReason() throws {
        let image = HandWebP.vp8l(width: 8, height: 8)
        func frame(x: Int = 0, y: Int = 0, width: Int = 8, height: Int = 8, image: [UInt8]? = nil) -> [UInt8] {
            HandWebP.anmf(x: x, y: y, width: width, height: height, duration: 50, image: image ?? HandWebP.vp8l(width: width, height: height))
        }
        let header = HandWebP.vp8x(width: 8, height: 8, animation: true), anim = HandWebP.anim(loopCount: 0)
        var oddSize = HandWebP.riff([image])
        oddSize[4] += 1
        oddSize.append(0)
        var notWEBP = HandWebP.riff([image])
        notWEBP[8] = UInt8(ascii: "A")
        var badSignature = HandWebP.riff([image])
        badSignature[20] = 0x2E
        var version1 = HandWebP.riff([image])
        version1[24] |= 0x20
        var vp8NotKey = HandWebP.riff([HandWebP.vp8(width: 8, height: 8)])
        vp8NotKey[20] |= 1
        var vp8NoStartCode = HandWebP.riff([HandWebP.vp8(width: 8, height: 8)])
        vp8NoStartCode[23] = 0
        var shortVP8X = HandWebP.riff([header, anim, frame()])
        shortVP8X[16] = 9
        let cases: [(String, [UInt8], String)] = [
            ("a GIF", try GIFSynthesizer.animatedGIF(width: 8, height: 8, frames: 1, colors: 2, seed: 1), "not-a-webp"),
            ("an HTML page", Array("<!doctype html><html><body>Not found</body></html>".utf8), "not-a-webp"),
            ("RIFF of another kind", notWEBP, "not-a-webp"),
            ("an odd RIFF size", oddSize, "corrupt"),
            ("trailing bytes", HandWebP.riff([image]) + [0, 0], "corrupt"),
            ("no chunk at all", HandWebP.riff([]), "corrupt"),
            ("a first chunk that is no image", HandWebP.riff([anim]), "corrupt"),
            ("two simple images", HandWebP.riff([image, image]), "corrupt"),
            ("VP8L without its signature", badSignature, "corrupt"),
            ("VP8L of version 1", version1, "corrupt"),
            ("VP8 that is not a key frame", vp8NotKey, "corrupt"),
            ("VP8 without its start code", vp8NoStartCode, "corrupt"),
            ("VP8X of 9 bytes", shortVP8X, "corrupt"),
            ("animation without ANIM", HandWebP.riff([header, frame()]), "corrupt"),
            ("animation without frames", HandWebP.riff([header, anim]), "corrupt"),
            ("ANMF without the animation flag", HandWebP.riff([HandWebP.vp8x(width: 8, height: 8, animation: false), anim, frame()]), "corrupt"),
            ("an image between frames", HandWebP.riff([header, anim, frame(), image, frame()]), "corrupt"),
            ("a second ANIM after the frames", HandWebP.riff([header, anim, frame(), anim]), "corrupt"),
            ("a frame past the canvas's right edge", HandWebP.riff([header, anim, frame(x: 2, width: 8)]), "bad-frame"),
            ("a frame past the canvas's bottom", HandWebP.riff([header, anim, frame(y: 4, height: 6)]), "bad-frame"),
            ("a frame whose image is another size", HandWebP.riff([header, anim, frame(image: HandWebP.vp8l(width: 4, height: 8))]), "bad-frame"),
            ("a frame without an image", HandWebP.riff([header, anim, frame(image: HandWebP.chunk("ALPH", [0]))]), "bad-frame"),
            ("a frame with two images", HandWebP.riff([header, anim, frame(image: image + image)]), "corrupt"),
            ("ALPH with a VP8L frame", HandWebP.riff([header, anim, frame(image: HandWebP.chunk("ALPH", [0]) + image)]), "corrupt"),
            ("an ANMF shorter than its header", HandWebP.riff([header, anim, HandWebP.chunk("ANMF", [0, 0, 0])]), "corrupt"),
            (
                "a still whose image is not the canvas's size",
                HandWebP.riff([HandWebP.vp8x(width: 9, height: 8, animation: false), image]), "bad-frame"
            )
        ]
        for (label, bytes, reason) in cases {
            do {
                let info = try WebPWalker.inspect(bytes: bytes)
                Issue.record("\(label): accepted as \(info)")
            } catch {
                #expect(error.reason == reason, "\(label): \(error)")
            }
        }
    }
}

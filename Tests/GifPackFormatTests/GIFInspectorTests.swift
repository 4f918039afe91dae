import GIFSynthesis
import Foundation
import GifPackGIF
import Testing
@testable import GifPackTestSupport

@Suite("GIF inspector and synthesizer", .computes, .timeLimit(.minutes(3)))
struct GIFInspectorTests {
    private static func gif(
        frames: Int = 12, colors: Int = 4, seed: UInt64 = 1, delay: Int = 8,
        loop: Int? = 0
    ) throws -> [UInt8] {
        try GIFSynthesizer.animatedGIF(
            width: 180, height: 180, frames: frames, colors: colors, seed: seed,
            delayCentiseconds: delay, loopCount: loop)
    }

    /// Offset of the first image descriptor (0x2C), found by walking the GIF block structure.
    private static func firstImageDescriptor(in bytes: [UInt8]) -> Int {
        let packed = bytes[10]
        var offset = 13 + (packed & 0x80 != 0 ? 3 << (Int(packed & 0x07) + 1) : 0)
        while bytes[offset] == 0x21 {
            offset += 2
            while bytes[offset] != 0 { offset += Int(bytes[offset]) + 1 }
            offset += 1
        }
        precondition(bytes[offset] == 0x2C)
        return offset
    }

    @Test func synthesizedGIFIsDeterministicAndSeedDependent() throws {
        let first = try Self.gif(seed: 9)
        #expect(first == (try Self.gif(seed: 9)))
        #expect(first != (try Self.gif(seed: 10)))
        #expect(Array(first.prefix(6)) == Array("GIF89a".utf8))
        #expect(first.last == 0x3B)
        // Random pixels keep the size in the real service's range (46-233 KB).
        #expect((90_000...130_000).contains(first.count))
    }

    @Test(arguments: [(2, 1, 0, Int?.some(0)), (4, 12, 8, 0), (3, 7, 10, 5), (256, 3, 0, nil), (5, 2, 65535, 65535)])
    func synthesizedGIFInspectsWithItsParameters(colors: Int, frames: Int, delay: Int, loop: Int?) throws {
        let bytes = try GIFSynthesizer.animatedGIF(
            width: 31, height: 17, frames: frames, colors: colors, seed: 3,
            delayCentiseconds: delay, loopCount: loop)
        let info = try GIFInspector.inspect(bytes: bytes)
        #expect(
            info
                == GIFInfo(
                    width: 31, height: 17, frameCount: frames, durationMilliseconds: frames * delay * 10,
                    loopCount: loop, version: "89a"))
    }

    @Test func synthesizerRejectsInvalidArguments() {
        #expect(throws: GIFSynthesisError.invalidArgument("colors must be 2...256, got 1")) {
            try GIFSynthesizer.animatedGIF(width: 2, height: 2, frames: 1, colors: 1, seed: 0)
        }
        #expect(throws: GIFSynthesisError.invalidArgument("width must be 1...65535, got 0")) {
            try GIFSynthesizer.animatedGIF(width: 0, height: 2, frames: 1, colors: 2, seed: 0)
        }
    }

    @Test func truncationAtAnyOffsetIsReportedAsTruncated() throws {
        let bytes = try Self.gif(frames: 3)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        let cuts = [
            0, 3, 6, 10, 13, 40, descriptor, descriptor + 5, descriptor + 11, descriptor + 500,
            bytes.count / 2, bytes.count - 2, bytes.count - 1
        ]
        for cut in cuts {
            #expect(throws: GIFRejection.truncated, "cut at \(cut) of \(bytes.count)") {
                try GIFInspector.inspect(bytes: Array(bytes[..<cut]))
            }
        }
    }

    @Test func dataAfterTheTrailerIsAccepted() throws {
        let bytes = try Self.gif(frames: 2)
        let info = try GIFInspector.inspect(bytes: bytes + Array("trailing garbage".utf8))
        #expect(info.frameCount == 2)
    }

    @Test func htmlIsNotAGIF() {
        let html = Array("<!DOCTYPE html><html><body>Rate limit exceeded</body></html>".utf8)
        #expect(throws: GIFRejection.notAGIF) { try GIFInspector.inspect(bytes: html) }
        #expect(throws: GIFRejection.notAGIF) { try GIFInspector.inspect(bytes: Array("GIF90a".utf8) + [0, 0]) }
        #expect(GIFRejection.notAGIF.reason == "not-a-gif")
    }

    @Test func frameOutsideTheLogicalScreenIsABadFrame() throws {
        var bytes = try Self.gif(frames: 2)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        bytes[descriptor + 1] = 1  // Left = 1: a 180-wide frame now ends at x = 181.
        do {
            _ = try GIFInspector.inspect(bytes: bytes)
            Issue.record("a frame outside the screen was accepted")
        } catch {
            #expect(error.reason == "bad-frame")
            #expect(error.detail.contains("outside the 180x180 logical screen"))
        }
    }

    @Test func zeroSizedFrameIsABadFrame() throws {
        var bytes = try Self.gif(frames: 1)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        bytes[descriptor + 7] = 0  // Height = 0.
        bytes[descriptor + 8] = 0
        #expect(throws: GIFRejection.badFrame("frame 1 has zero size (180x0)")) {
            try GIFInspector.inspect(bytes: bytes)
        }
    }

    @Test func corruptPixelDataIsABadFrame() throws {
        var bytes = try Self.gif(frames: 1)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        bytes[descriptor + 11] = 0  // The first data sub-block now claims zero length: data ends early.
        do {
            _ = try GIFInspector.inspect(bytes: bytes)
            Issue.record("corrupt pixel data was accepted")
        } catch {
            #expect(error.reason == "bad-frame")
        }
    }

    @Test func invalidLZWCodeSizeIsABadFrame() throws {
        var bytes = try Self.gif(frames: 1)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        bytes[descriptor + 10] = 12  // LZW minimum code size must be at most 8.
        let expected = "reading the image descriptor of frame 1: invalid field value (giflib error 102)"
        #expect(throws: GIFRejection.badFrame(expected)) {
            try GIFInspector.inspect(bytes: bytes)
        }
    }

    @Test func interlacedAndGIF87aFilesAreAccepted() throws {
        var bytes = try Self.gif(frames: 2, loop: nil)
        let descriptor = Self.firstImageDescriptor(in: bytes)
        bytes[descriptor + 9] |= 0x40  // Interlace flag: same LZW data, rows in interlaced order.
        bytes.replaceSubrange(3..<6, with: Array("87a".utf8))
        let info = try GIFInspector.inspect(bytes: bytes)
        #expect(
            info
                == GIFInfo(
                    width: 180, height: 180, frameCount: 2, durationMilliseconds: 160,
                    loopCount: nil, version: "87a"))
    }

    @Test func limitsAreEnforcedBeforeDecoding() throws {
        let bytes = try Self.gif(frames: 4)
        let cases: [(GIFLimits, String)] = [
            (GIFLimits(maxWidth: 179), "logical screen 180x180 exceeds 179x4096"),
            (GIFLimits(maxHeight: 100), "logical screen 180x180 exceeds 4096x100"),
            (GIFLimits(maxFrames: 3), "more than 3 frames"),
            (GIFLimits(maxTotalPixels: 180 * 180 * 3), "frames hold more than 97200 pixels in total")
        ]
        for (limits, message) in cases {
            #expect(throws: GIFRejection.tooLarge(message)) { try GIFInspector.inspect(bytes: bytes, limits: limits) }
        }
        let exact = GIFLimits(maxWidth: 180, maxHeight: 180, maxFrames: 4, maxTotalPixels: 180 * 180 * 4)
        #expect(try GIFInspector.inspect(bytes: bytes, limits: exact).frameCount == 4)
    }

    @Test func pathBasedInspectionMatchesInMemoryInspection() throws {
        let directory = try TemporaryDirectory()
        // 40 frames make the file larger than the 64 KiB read chunk.
        let bytes = try Self.gif(frames: 40, delay: 4)
        let path = directory.file("a.gif")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let info = try GIFInspector.inspect(path: path)
        #expect(info == (try GIFInspector.inspect(bytes: bytes)))
        #expect(
            info
                == GIFInfo(
                    width: 180, height: 180, frameCount: 40, durationMilliseconds: 1600,
                    loopCount: 0, version: "89a"))

        let truncated = directory.file("t.gif")
        try Data(bytes[..<100_000]).write(to: URL(fileURLWithPath: truncated))
        #expect(throws: GIFRejection.truncated) { try GIFInspector.inspect(path: truncated) }

        do {
            _ = try GIFInspector.inspect(path: directory.file("missing.gif"))
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.reason == "corrupt")
            #expect(error.detail.contains("No such file"))
        }
    }
}

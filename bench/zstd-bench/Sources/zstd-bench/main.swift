// zstd-bench: decode throughput of GifPackZstd against libzstd, in-process, on the same frames.
//
//     zstd-bench FRAMES.zst [ITERATIONS]
//
// FRAMES.zst is a sequence of zstd frames (a pack, or GIFs compressed one frame each, back to
// back). Every frame is decoded by libzstd (ZSTD_decompressDCtx into one reused buffer), by
// ZstdDecoder.decompress (one shot, a new array per frame) and by ZstdDecoder.decompressFrame
// (streamed to a sink that only counts), one decoder reused for all frames. Each pass is timed
// in thread CPU time (steady on a busy machine) and wall time; the best of ITERATIONS (default 7)
// passes counts. Every decoded frame is checked against libzstd's bytes once, before timing.
// Prints one line per decoder and a JSON summary line.
import CLibzstd
import Foundation
import GifPackZstd

struct Frame {
    let offset: Int
    let size: Int
    let contentSize: Int
}

func clock(_ id: clockid_t) -> Double {
    var ts = timespec()
    clock_gettime(id, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("zstd-bench: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: zstd-bench FRAMES.zst [ITERATIONS]") }
guard let data = FileManager.default.contents(atPath: arguments[1]) else { fail("cannot read \(arguments[1])") }
let iterations = arguments.count > 2 ? max(1, Int(arguments[2]) ?? 7) : 7
let input = [UInt8](data)

// Frames, by libzstd's reading of the headers; every frame must declare its size.
var frames: [Frame] = []
input.withUnsafeBytes { raw in
    guard let base = raw.baseAddress else { return }
    var offset = 0
    while offset < raw.count {
        let size = ZSTD_findFrameCompressedSize(base + offset, raw.count - offset)
        if ZSTD_isError(size) != 0 { fail("frame at \(offset): \(String(cString: ZSTD_getErrorName(size)))") }
        let content = ZSTD_getFrameContentSize(base + offset, size)
        if content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR {
            fail("frame at \(offset) does not declare its content size")
        }
        frames.append(Frame(offset: offset, size: size, contentSize: Int(content)))
        offset += size
    }
}
let totalOutput = frames.reduce(0) { $0 + $1.contentSize }
let largest = frames.map(\.contentSize).max() ?? 0
let reference = UnsafeMutableRawPointer.allocate(byteCount: max(1, largest), alignment: 64)
defer { reference.deallocate() }
guard let dctx = ZSTD_createDCtx() else { fail("ZSTD_createDCtx failed") }
defer { ZSTD_freeDCtx(dctx) }
let decoder = ZstdDecoder()

// Correctness first: both Swift paths against libzstd, frame by frame.
input.withUnsafeBytes { raw in
    for frame in frames {
        let source = UnsafeRawBufferPointer(rebasing: raw[frame.offset..<(frame.offset + frame.size)])
        let n = ZSTD_decompressDCtx(dctx, reference, frame.contentSize, source.baseAddress, source.count)
        guard ZSTD_isError(n) == 0, n == frame.contentSize else { fail("libzstd cannot decode the frame at \(frame.offset)") }
        let expected = UnsafeRawBufferPointer(start: reference, count: n)
        do {
            let oneShot = try decoder.decompress(source, maxOutput: frame.contentSize)
            guard oneShot.elementsEqual(expected) else { fail("one-shot output differs at frame \(frame.offset)") }
            var streamed: [UInt8] = []
            try decoder.decompressFrame(source, maxOutput: frame.contentSize) { streamed.append(contentsOf: $0) }
            guard streamed.elementsEqual(expected) else { fail("streamed output differs at frame \(frame.offset)") }
        } catch {
            fail("frame at \(frame.offset): \(error)")
        }
    }
}

/// Best (cpu, wall) seconds of `iterations` passes of `pass` over all frames.
@MainActor func best(_ pass: (UnsafeRawBufferPointer, Frame) -> Void) -> (cpu: Double, wall: Double) {
    var bestCPU = Double.infinity
    var bestWall = Double.infinity
    input.withUnsafeBytes { raw in
        for _ in 0..<iterations {
            let cpu0 = clock(CLOCK_THREAD_CPUTIME_ID), wall0 = clock(CLOCK_MONOTONIC)
            for frame in frames {
                pass(UnsafeRawBufferPointer(rebasing: raw[frame.offset..<(frame.offset + frame.size)]), frame)
            }
            bestCPU = min(bestCPU, clock(CLOCK_THREAD_CPUTIME_ID) - cpu0)
            bestWall = min(bestWall, clock(CLOCK_MONOTONIC) - wall0)
        }
    }
    return (bestCPU, bestWall)
}

let libzstd = best { source, frame in
    _ = ZSTD_decompressDCtx(dctx, reference, frame.contentSize, source.baseAddress, source.count)
}
let oneShot = best { source, frame in
    _ = try? decoder.decompress(source, maxOutput: frame.contentSize)
}
let streaming = best { source, frame in
    var produced = 0
    _ = try? decoder.decompressFrame(source, maxOutput: frame.contentSize) { produced += $0.count }
}

let megabytes = Double(totalOutput) / 1e6
func rate(_ seconds: Double) -> Double { megabytes / seconds }
print(String(format: "%d frames, %.1f MB compressed, %.1f MB decoded, best of %d passes (thread CPU time; wall in brackets)",
             frames.count, Double(input.count) / 1e6, megabytes, iterations))
print(String(format: "libzstd %@          %7.0f MB/s  [%7.0f MB/s]", String(cString: ZSTD_versionString()), rate(libzstd.cpu), rate(libzstd.wall)))
print(String(format: "GifPackZstd one-shot    %7.0f MB/s  [%7.0f MB/s]  %.3fx libzstd [%.3fx]",
             rate(oneShot.cpu), rate(oneShot.wall), libzstd.cpu / oneShot.cpu, libzstd.wall / oneShot.wall))
print(String(format: "GifPackZstd streaming   %7.0f MB/s  [%7.0f MB/s]  %.3fx libzstd [%.3fx]",
             rate(streaming.cpu), rate(streaming.wall), libzstd.cpu / streaming.cpu, libzstd.wall / streaming.wall))
print(String(format: "{\"frames\":%d,\"decoded_bytes\":%d,\"libzstd_mbps\":%.1f,\"oneshot_mbps\":%.1f,\"streaming_mbps\":%.1f,\"oneshot_ratio\":%.4f,\"streaming_ratio\":%.4f}",
             frames.count, totalOutput, rate(libzstd.cpu), rate(oneShot.cpu), rate(streaming.cpu),
             libzstd.cpu / oneShot.cpu, libzstd.cpu / streaming.cpu))

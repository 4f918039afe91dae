import CZstd
import FuzzSupport
@testable import GifPackZstd

/// The pure-Swift zstd decoder (GifPackZstd) against libzstd on every input: both accept and give
/// identical bytes, or both refuse. Both get the same limits (1 MiB window, 1 MiB output); a refusal
/// for a limit on one side counts as a refusal. The Swift decoder's two ways in (one shot over all
/// frames, and frame by frame streaming into a sink) must agree with each other too.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZstdDiff(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = Fuzz.bytes(data, size)
    guard !input.isEmpty else { return 0 }
    let maxOutput = 1 << 20, maxWindow = 1 << 20
    let swift: Result<[UInt8], ZstdDecodingError> = Result { () throws(ZstdDecodingError) -> [UInt8] in
        try ZstdDecoder.decompress(input, maxOutput: maxOutput, maxWindow: maxWindow)
    }
    let reference = LibZstd.decompress(input, maxOutput: maxOutput, windowLogMax: 20)
    let streamed = SwiftStreaming.decompress(input, maxOutput: maxOutput, maxWindow: maxWindow)
    switch (swift, reference) {
    case (.success(let ours), .success(let theirs)):
        Fuzz.require(ours == theirs, "GifPackZstd and libzstd decode to different bytes (\(ours.count) vs \(theirs.count))")
    case (.failure(let error), .success(let theirs)):
        // One difference is on purpose (docs/apps.md, "Decoding zstd in Swift"): a match that reaches
        // before the frame's first byte or beyond its window copies bytes the frame never wrote;
        // libzstd's streaming decoder copies whatever its buffers hold there, GifPackZstd refuses.
        if "\(error)".contains("reaches before the frame's start or window") { break }
        // Another is the format's rule (RFC 8878, 3.1.2.5): an offset of 0, reached as
        // Repeated_Offset1 - 1 with Repeated_Offset1 = 1, is corrupt data. libzstd refuses it since
        // 1.5.5; before (the machine's 1.5.4) it took 1. GifPackZstd follows the format.
        if error.reason.hasPrefix("match offset 0 (Repeated_Offset1 - 1"), ZSTD_versionNumber() < 10505 { break }
        // libzstd is built with legacy support: frames of the pre-1.0 formats (magic numbers
        // 0xFD2FB521...0xFD2FB527, and v0.1's 0x1EB52FFD) are no RFC 8878 frames, which is all GifPackZstd reads.
        if LegacyMagic.starts(input, at: error.offset) { break }
        // A table description that needs more bits than the bytes left for it: libzstd keeps its read
        // position modulo 32 at the end of its buffer, reads the last bytes again and can accept the
        // description; GifPackZstd refuses it (LibzstdTableDescription checks that this is the case).
        if LibzstdTableDescription.explains(error, input: input) { break }
        Fuzz.require(false, "GifPackZstd refuses what libzstd decodes (\(theirs.count) bytes): \(error)")
    case (.success(let ours), .failure(let reason)):
        Fuzz.require(false, "GifPackZstd decodes \(ours.count) bytes of what libzstd refuses: \(reason)")
    case (.failure, .failure):
        break
    }
    switch (swift, streamed) {
    case (.success(let ours), .success(let frames)):
        Fuzz.require(ours == frames, "one shot and streaming give different bytes")
    case (.failure, .failure):
        break
    default:
        Fuzz.require(false, "one shot and streaming disagree: \(swift.map(\.count)) vs \(streamed.map(\.count))")
    }
    return 0
}

/// libzstd's streaming decoder over every frame of the input, with the same limits.
enum LibZstd {
    struct Refusal: Error, CustomStringConvertible { var description: String }

    static func decompress(_ input: [UInt8], maxOutput: Int, windowLogMax: Int32) -> Result<[UInt8], Refusal> {
        guard let context = ZSTD_createDCtx() else { return .failure(Refusal(description: "ZSTD_createDCtx failed")) }
        defer { ZSTD_freeDCtx(context) }
        ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 17)
        return input.withUnsafeBytes { raw -> Result<[UInt8], Refusal> in
            var source = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
            var last = 0
            repeat {
                let (result, produced) = chunk.withUnsafeMutableBytes { out -> (Int, Int) in
                    var target = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let result = ZSTD_decompressStream(context, &target, &source)
                    return (result, target.pos)
                }
                if ZSTD_isError(result) != 0 { return .failure(Refusal(description: String(cString: ZSTD_getErrorName(result)))) }
                output += chunk[0..<produced]
                if output.count > maxOutput { return .failure(Refusal(description: "more than \(maxOutput) bytes")) }
                last = result
                if produced == chunk.count { continue }   // more may be pending inside zstd
                if source.pos == source.size { break }
            } while true
            // A non-zero hint after all input: the last frame is not complete.
            return last == 0 ? .success(output) : .failure(Refusal(description: "truncated frame"))
        }
    }
}

/// GifPackZstd frame by frame, each streamed into a sink.
enum SwiftStreaming {
    static func decompress(_ input: [UInt8], maxOutput: Int, maxWindow: Int) -> Result<[UInt8], any Error> {
        let decoder = ZstdDecoder()
        var output: [UInt8] = []
        return input.withUnsafeBytes { raw -> Result<[UInt8], any Error> in
            var offset = 0
            do {
                while offset < raw.count {
                    let frame = try decoder.decompressFrame(UnsafeRawBufferPointer(rebasing: raw[offset...]),
                                                            maxOutput: maxOutput - output.count, maxWindow: maxWindow) { chunk in
                        output += chunk
                    }
                    Fuzz.require(frame.inputBytes > 0 && frame.inputBytes <= raw.count - offset, "frame of \(frame.inputBytes) bytes")
                    offset += frame.inputBytes
                }
                return .success(output)
            } catch {
                return .failure(error)
            }
        }
    }
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzZstdDiff) }
}

/// The magic numbers of zstd's pre-1.0 frame formats, which libzstd still decodes when built with
/// legacy support (Debian's is) and RFC 8878 does not describe.
enum LegacyMagic {
    static func starts(_ input: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + 4 <= input.count else { return false }
        let magic = UInt32(input[offset]) | UInt32(input[offset + 1]) << 8 | UInt32(input[offset + 2]) << 16 | UInt32(input[offset + 3]) << 24
        return (0xFD2F_B521...0xFD2F_B527).contains(magic) || magic == 0x1EB5_2FFD
    }
}

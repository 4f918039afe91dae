import FuzzSupport
@testable import GifPackFormat

/// The zstd frame scanner (a pack file cut into frame extents) and the frame reader on each extent
/// it finds. Byte 0 even: the rest is the file as it is. Odd: the rest is cut at every "\u{1}" byte
/// into contents, each compressed as a pack frame, and byte 1 picks how many bytes of the last frame
/// are cut off or how many are appended (so the scanner sees valid frames, then damage).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZstdFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let mode = input.byte()
    var file: [UInt8]
    if mode & 1 == 0 {
        file = input.remaining
    } else {
        let damage = Int(input.byte())
        let contents = input.remaining.split(separator: 1, omittingEmptySubsequences: false).prefix(16)
        file = contents.flatMap { Fuzz.zstdFrame(Array($0)) }
        if damage < 128 { file.removeLast(min(file.count, damage % 32)) } else { file += [UInt8](repeating: UInt8(damage), count: damage % 32) }
    }
    let path = Fuzz.scratchFile(holding: file)
    let extents: [ZstdFrameExtent]
    do { extents = try ZstdFrames.frameExtents(in: path) } catch {
        _ = error.description
        return 0
    }
    var next: Int64 = 0
    for extent in extents {
        Fuzz.require(extent.offset == next, "extent at \(extent.offset), expected \(next)")
        Fuzz.require(extent.compressedLength > 0, "empty extent at \(extent.offset)")
        next = extent.offset + extent.compressedLength
    }
    Fuzz.require(next == Int64(file.count), "extents cover \(next) of \(file.count) bytes")
    guard let reader = try? PackFrameReader(path: path) else { return 0 }
    for extent in extents.prefix(16) {
        do {
            let (header, entry) = try reader.readEntry(frameOffset: extent.offset, frameLength: extent.compressedLength, maxSize: 1 << 16)
            Fuzz.require(Int64(entry.count) == header.size, "\(entry.count) bytes for size \(header.size)")
        } catch {
            _ = error.description
        }
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzZstdFrames) }
}

import FuzzSupport
@testable import GifPackFormat

/// The ustar header parser and the entry splitter that checks a frame's content is exactly one
/// entry. Byte 0: bit 0 set writes a correct checksum into the header first (so the fuzzer gets past
/// it), bits 1-7 pick the chunk size the content is fed in; byte 1 picks the entry size limit. The
/// same content is then compressed into a pack frame and read through PackFrameReader: the streaming
/// result must be the splitter's.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTar(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let flags = input.byte()
    let maxSize = Int64(input.byte()) * 64
    var content = input.remaining
    if flags & 1 != 0, content.count >= TarHeader.blockSize {
        for index in 148..<156 { content[index] = 0x20 }
        let sum = content.prefix(TarHeader.blockSize).reduce(0) { $0 + Int($1) }
        let octal = Array(String(sum, radix: 8).utf8)
        if octal.count <= 7 {
            for index in 148..<156 { content[index] = 0 }
            for (offset, digit) in octal.enumerated() { content[148 + offset] = digit }
        }
    }
    if content.count >= TarHeader.blockSize {
        if let header = try? TarHeader.parse(Array(content.prefix(TarHeader.blockSize))) {
            Fuzz.require(header.size >= 0, "negative size \(header.size)")
            Fuzz.require(header.entryLength >= Int64(TarHeader.blockSize), "entry length \(header.entryLength)")
        }
    }
    let chunk = Int(flags >> 1) + 1
    var splitter = TarEntrySplitter(maxSize: maxSize)
    var delivered: [UInt8] = []
    let split: Result<TarHeader, PackReadError> = content.withUnsafeBytes { all in
        do throws(PackReadError) {
            var start = 0
            while start < all.count {
                let end = min(all.count, start + chunk)
                try splitter.consume(UnsafeRawBufferPointer(rebasing: all[start..<end]), onHeader: { header in
                    Fuzz.require(header.size <= maxSize, "a header over the size limit was handed on")
                }, into: { data in delivered.append(contentsOf: data) })
                start = end
            }
            return .success(try splitter.finish())
        } catch {
            return .failure(error)
        }
    }
    if case .success(let header) = split {
        Fuzz.require(Int64(delivered.count) == header.size, "\(delivered.count) data bytes for size \(header.size)")
        Fuzz.require(Int64(content.count) == header.entryLength, "\(content.count) bytes for an entry of \(header.entryLength)")
        Fuzz.require(delivered == Array(content[TarHeader.blockSize..<TarHeader.blockSize + Int(header.size)]), "data bytes differ")
    }
    guard !content.isEmpty else { return 0 }
    let frame = Fuzz.zstdFrame(content)
    let path = Fuzz.scratchFile(holding: frame)
    do {
        let reader = try PackFrameReader(path: path)
        let (header, entryData) = try reader.readEntry(frameOffset: 0, frameLength: Int64(frame.count), maxSize: maxSize)
        guard case .success(let splitHeader) = split else {
            Fuzz.require(false, "the frame reader accepts an entry the splitter refuses: \(split)")
            return 0
        }
        Fuzz.require(header == splitHeader && entryData == delivered, "the frame reader and the splitter disagree")
        // The same frame held in memory (a range answer, LazyGIFCache) reads the same.
        let inMemory = try PackFrameReader(bytes: frame, name: "frame").readEntry(frameOffset: 0, frameLength: Int64(frame.count), maxSize: maxSize)
        Fuzz.require(inMemory.header == header && inMemory.data == entryData, "the frame read from memory differs from the file's")
    } catch {
        _ = error.description
        if case .success = split {
            Fuzz.require(false, "the frame reader refuses an entry the splitter accepts: \(error)")
        }
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzTar) }
}

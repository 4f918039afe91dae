import FuzzSupport
@testable import GifPackGIFCore

/// The LZW pixel counter alone, on any code stream: byte 0 picks the minimum code size (0...8),
/// bytes 1-2 the frame's pixels, byte 3 the sub-block length the rest is cut into. It may call a
/// stream irregular, never crash, and once complete it stays complete.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLZW(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var input = FuzzInput(Fuzz.bytes(data, size))
    let codeSize = Int(input.byte() % 9)
    let pixels = input.uint16() * Int(1 + input.byte() % 4)
    let blockLength = Int(input.byte() % 255) + 1
    let stream = input.remaining
    var counter = LZWPixelCounter(minimumCodeSize: codeSize, pixels: pixels)
    var start = 0
    var complete = false
    while start < stream.count {
        let end = min(stream.count, start + blockLength)
        let block = stream[start..<end]
        do {
            complete = try block.withUnsafeBufferPointer { buffer throws(LZWPixelCounter.Irregular) in try counter.consume(buffer) }
        } catch {
            return 0
        }
        if complete {
            Fuzz.require(counter.isComplete, "consume said complete, isComplete disagrees")
            let again = (try? [UInt8](repeating: 0xFF, count: 3).withUnsafeBufferPointer { buffer throws(LZWPixelCounter.Irregular) in
                try counter.consume(buffer)
            }) ?? false
            Fuzz.require(again, "a complete counter read more")
            return 0
        }
        start = end
    }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzLZW) }
}

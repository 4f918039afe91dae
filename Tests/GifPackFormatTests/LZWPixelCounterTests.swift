import GIFSynthesis
@testable import GifPackGIF
import GifPackGIFCore
import Testing
@testable import GifPackTestSupport

/// The inspector counts each frame's LZW pixels (``LZWPixelCounter``) instead of decoding them, and
/// hands any frame it cannot vouch for to giflib's decoder. These tests hold it to giflib: on
/// well-formed streams of every shape an encoder makes, and on thousands of damaged ones, counting
/// gives exactly the verdict (info, or rejection with its message) that decoding every row gives.
@Suite("LZW pixel counting against giflib's decoder", .computes, .timeLimit(.minutes(3)))
struct LZWPixelCounterTests {
    /// An LZW encoder of the test's own, so streams can take shapes giflib's encoder never makes: no
    /// clear code at the start, a table left full (a "deferred clear"), no end code.
    struct Encoder {
        var minimumCodeSize: Int
        var clearFirst = true
        var clearWhenFull = true
        var endCode = true

        func encode(_ pixels: [UInt8]) -> [UInt8] {
            let clear = 1 << minimumCodeSize, end = clear + 1
            var writer = BitWriter()
            var bits = minimumCodeSize + 1
            var next = clear + 2
            var table: [Int: Int] = [:]
            func reset() { table.removeAll(keepingCapacity: true); next = clear + 2; bits = minimumCodeSize + 1 }
            if clearFirst { writer.write(clear, bits: bits) }
            guard var current = pixels.first.map(Int.init) else { return writer.finish() }
            for pixel in pixels.dropFirst() {
                let key = current << 8 | Int(pixel)
                if let code = table[key] { current = code; continue }
                writer.write(current, bits: bits)
                if next < 4096 {
                    table[key] = next
                    if next == 1 << bits, bits < 12 { bits += 1 }
                    next += 1
                } else if clearWhenFull {
                    writer.write(clear, bits: bits)
                    reset()
                }
                current = Int(pixel)
            }
            writer.write(current, bits: bits)
            // The decoder counts the last code as it reads it: the end code may be one bit wider.
            if next < 4096, next == 1 << bits, bits < 12 { bits += 1 }
            if endCode { writer.write(end, bits: bits) }
            return writer.finish()
        }
    }

    struct BitWriter {
        var bytes: [UInt8] = []
        var buffer = 0, count = 0
        mutating func write(_ code: Int, bits: Int) {
            buffer |= code << count
            count += bits
            while count >= 8 { bytes.append(UInt8(buffer & 0xFF)); buffer >>= 8; count -= 8 }
        }
        mutating func finish() -> [UInt8] { if count > 0 { bytes.append(UInt8(buffer & 0xFF)) }; return bytes }
    }

    /// A one-frame GIF89a of `width`x`height` whose image data is `data` in 255-byte sub-blocks.
    static func gif(width: Int, height: Int, minimumCodeSize: Int, data: [UInt8]) -> [UInt8] {
        let tableBits = max(1, minimumCodeSize)
        var bytes = Array("GIF89a".utf8)
        func word(_ value: Int) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        word(width); word(height)
        bytes += [0x80 | UInt8(tableBits - 1), 0, 0]
        for index in 0..<(1 << tableBits) { bytes += [UInt8(index & 0xFF), UInt8(index * 7 & 0xFF), UInt8(index * 13 & 0xFF)] }
        bytes.append(0x2C); word(0); word(0); word(width); word(height); bytes.append(0)
        bytes.append(UInt8(minimumCodeSize))
        var offset = 0
        while offset < data.count {
            let length = min(255, data.count - offset)
            bytes.append(UInt8(length))
            bytes += data[offset..<(offset + length)]
            offset += length
        }
        bytes += [0, 0x3B]
        return bytes
    }

    /// Pixels below `1 << minimumCodeSize`: runs (which make KwKwK codes) or noise (which fills tables).
    static func pixels(count: Int, minimumCodeSize: Int, runs: Bool, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        let colors = UInt64(1 << max(1, minimumCodeSize))
        var pixels: [UInt8] = []
        pixels.reserveCapacity(count)
        while pixels.count < count {
            let value = UInt8(random.next() % colors)
            let length = runs ? Int(random.next() % 40) + 1 : 1
            pixels += repeatElement(value, count: min(length, count - pixels.count))
        }
        return pixels
    }

    /// One walk with the given check: its verdict and whether counting handed the GIF on (never,
    /// for a file refused before its first record).
    static func walk(_ bytes: [UInt8], _ check: GIFRecordWalker.PixelCheck) -> (Result<GIFInfo, GIFRejection>, irregular: Bool) {
        do {
            let once = try GIFInspector.inspectOnce(GIFByteSource(bytes: bytes), limits: .standard, check: check)
            return (once.result, once.irregularFrame)
        } catch {
            return (.failure(error), false)
        }
    }

    static func verdict(_ bytes: [UInt8], _ check: GIFRecordWalker.PixelCheck) -> Result<GIFInfo, GIFRejection> {
        Result { () throws(GIFRejection) in try GIFInspector.inspect(bytes: bytes, limits: .standard, check: check) }
    }

    @Test(arguments: [2, 3, 5, 8])
    func wellFormedStreamsAreCountedWithoutGiflibsDecoder(minimumCodeSize: Int) throws {
        let (width, height) = (97, 61)
        let shapes = [
            Encoder(minimumCodeSize: minimumCodeSize),
            Encoder(minimumCodeSize: minimumCodeSize, clearFirst: false, endCode: false),
            Encoder(minimumCodeSize: minimumCodeSize, clearWhenFull: false)
        ]
        for (number, encoder) in shapes.enumerated() {
            for runs in [false, true] {
                let pixels = Self.pixels(count: width * height, minimumCodeSize: minimumCodeSize, runs: runs, seed: UInt64(number * 2 + 1))
                let bytes = Self.gif(width: width, height: height, minimumCodeSize: minimumCodeSize, data: encoder.encode(pixels))
                let (counted, irregular) = Self.walk(bytes, .counting)
                let expected = GIFInfo(width: width, height: height, frameCount: 1, durationMilliseconds: 0, loopCount: nil, version: "89a")
                #expect(!irregular, "shape \(number), runs \(runs)")
                #expect(try counted.get() == expected)
                #expect(try Self.verdict(bytes, .decoding).get() == expected)
            }
        }
    }

    @Test func aFullTableKeptWithoutAClearIsCountedAsGiflibDecodesIt() throws {
        // Noise over 256 colours fills the 4,096-code table after a few thousand pixels; then every
        // code is 12 bits wide and no new code is defined, for 40,000 more pixels.
        let (width, height) = (220, 200)
        let pixels = Self.pixels(count: width * height, minimumCodeSize: 8, runs: false, seed: 7)
        let data = Encoder(minimumCodeSize: 8, clearWhenFull: false).encode(pixels)
        let bytes = Self.gif(width: width, height: height, minimumCodeSize: 8, data: data)
        let (counted, irregular) = Self.walk(bytes, .counting)
        #expect(!irregular)
        #expect(try counted.get().width == width)
        #expect(Self.verdict(bytes, .decoding) == counted)
    }

    @Test func oneMissingPixelGetsGiflibsVerdictAndOneExtraIsIgnored() throws {
        let (width, height) = (40, 30)
        let encoder = Encoder(minimumCodeSize: 4)
        let pixels = Self.pixels(count: width * height + 3, minimumCodeSize: 4, runs: true, seed: 3)
        // Short by one pixel: the end code comes before the last one.
        let short = Self.gif(width: width, height: height, minimumCodeSize: 4, data: encoder.encode(Array(pixels.prefix(width * height - 1))))
        #expect(Self.walk(short, .counting).irregular)
        let verdict = Self.verdict(short, .counting)
        #expect(verdict == Self.verdict(short, .decoding))
        #expect(throws: GIFRejection.self) { try verdict.get() }
        // Short by one pixel and no end code: the data ends first.
        let cut = Self.gif(
            width: width, height: height, minimumCodeSize: 4,
            data: Encoder(minimumCodeSize: 4, endCode: false).encode(Array(pixels.prefix(width * height - 1))))
        #expect(Self.verdict(cut, .counting) == Self.verdict(cut, .decoding))
        #expect(throws: GIFRejection.self) { try Self.verdict(cut, .counting).get() }
        // Three pixels too many: giflib stops at the last one and skips the rest.
        let long = Self.gif(width: width, height: height, minimumCodeSize: 4, data: encoder.encode(pixels))
        #expect(!Self.walk(long, .counting).irregular)
        #expect(try Self.verdict(long, .counting).get().frameCount == 1)
    }

    @Test func damagedStreamsGetGiflibsVerdict() throws {
        // Damage where it matters, in the LZW data, to streams of every shape; and now and then to the
        // length bytes, the code size or the end of the file. Counting must agree with decoding on
        // every one, and both paths must be taken.
        var random = SplitMix64(seed: 42)
        var sources: [[UInt8]] = []
        for size in [2, 4, 8] {
            for (number, encoder) in [Encoder(minimumCodeSize: size), Encoder(minimumCodeSize: size, clearFirst: false, clearWhenFull: false, endCode: false)].enumerated() {
                let pixels = Self.pixels(count: 64 * 48, minimumCodeSize: size, runs: number == 0, seed: UInt64(size))
                sources.append(Self.gif(width: 64, height: 48, minimumCodeSize: size, data: encoder.encode(pixels)))
            }
        }
        sources.append(try GIFSynthesizer.animatedGIF(width: 48, height: 40, frames: 3, colors: 5, seed: 11))
        sources.append(try GIFSynthesizer.animatedGIF(width: 40, height: 40, frames: 2, colors: 256, seed: 12))
        var (regular, irregular, rejected) = (0, 0, 0)
        for round in 0..<1_500 {
            var bytes = sources[round % sources.count]
            let dataStart = bytes.count / 4
            switch random.next() % 10 {
            case 0: bytes.removeLast(Int(random.next() % UInt64(bytes.count - 20)) + 1)  // cut short
            case 1: bytes[dataStart + Int(random.next() % 40)] = UInt8(truncatingIfNeeded: random.next())
            default:
                for _ in 0..<(Int(random.next() % 3) + 1) {
                    let at = dataStart + Int(random.next() % UInt64(bytes.count - dataStart - 2))
                    bytes[at] ^= UInt8(1 << (random.next() % 8))
                }
            }
            let counted = Self.verdict(bytes, .counting)
            #expect(counted == Self.verdict(bytes, .decoding), "round \(round)")
            if Self.walk(bytes, .counting).irregular { irregular += 1 } else { regular += 1 }
            if case .failure = counted { rejected += 1 }
        }
        #expect(regular > 100 && irregular > 100 && rejected > 100, "regular \(regular), irregular \(irregular), rejected \(rejected)")
    }

    @Test func aCodeNeitherKnownNorNextIsLeftToGiflib() throws {
        // Codes 1, 2, 3, 1 (the width grows to 4 bits after the third), then code 15 where 9 is the
        // next free code: giflib reads it as the previous string plus a pixel, so the verdict is its
        // own, not the counter's.
        var writer = BitWriter()
        writer.write(4, bits: 3); writer.write(1, bits: 3); writer.write(2, bits: 3); writer.write(3, bits: 3)
        writer.write(1, bits: 4); writer.write(15, bits: 4); writer.write(0, bits: 4); writer.write(0, bits: 4)
        let bytes = Self.gif(width: 8, height: 1, minimumCodeSize: 2, data: writer.finish())
        #expect(Self.walk(bytes, .counting).irregular)
        #expect(Self.verdict(bytes, .counting) == Self.verdict(bytes, .decoding))
    }

    /// giflib's reading, one byte at a time (the counter before it read 8 bytes at once): the
    /// codes a stream gives and what they count to, as ``LZWPixelCounter/consume(_:)`` must give them.
    struct ByteByByteCounter {
        let clear: Int, startBits: Int
        var remaining: Int
        var running: Int, bits: Int, max1: Int, last = -1
        var buffer: UInt64 = 0, count = 0
        var table = [UInt16](repeating: 0, count: 4096)

        init(minimumCodeSize: Int, pixels: Int) {
            clear = 1 << minimumCodeSize
            startBits = minimumCodeSize + 1
            remaining = pixels
            running = clear + 2
            bits = startBits
            max1 = 1 << bits
            for code in 0..<clear { table[code] = 1 }
        }

        /// true: complete; false: wants more; nil: irregular.
        mutating func consume(_ block: ArraySlice<UInt8>) -> Bool? {
            if remaining <= 0 { return true }
            for byte in block {
                buffer |= UInt64(byte) << UInt64(count)
                count += 8
                while count >= bits {
                    let code = Int(buffer & ((1 << UInt64(bits)) - 1))
                    buffer >>= UInt64(bits)
                    count -= bits
                    if running < 4097 {
                        running += 1
                        if running > max1, bits < 12 { max1 <<= 1; bits += 1 }
                    }
                    if code == clear {
                        for index in (clear + 2)..<4096 { table[index] = 0 }
                        running = clear + 2; bits = startBits; max1 = 1 << bits; last = -1
                        continue
                    }
                    let next = running - 2
                    var produced = Int(table[code])
                    if produced == 0 {
                        guard code == next, last >= 0 else { return nil }
                        produced = Int(table[last]) + 1
                    }
                    if produced >= 4095 { return nil }
                    if last >= 0, next <= 4095, table[next] == 0 { table[next] = UInt16(Int(table[last]) + 1) }
                    last = code
                    remaining -= produced
                    if remaining <= 0 { return true }
                }
            }
            return false
        }
    }

    @Test func eightBytesAtOnceReadTheCodesOneByteAtATimeReads() {
        // Streams of every shape, whole and damaged, cut into sub-blocks of random lengths (1 to 255,
        // so blocks end both inside and outside an 8-byte load): every call's answer — complete,
        // wanting more, irregular — is the byte-by-byte reading's, call by call.
        var random = SplitMix64(seed: 45)
        var (complete, irregular, short) = (0, 0, 0)
        for round in 0..<600 {
            let size = [2, 3, 5, 8][round % 4]
            let encoder = [
                Encoder(minimumCodeSize: size), Encoder(minimumCodeSize: size, clearFirst: false, endCode: false),
                Encoder(minimumCodeSize: size, clearWhenFull: false)
            ][round / 4 % 3]
            let pixelCount = Int(random.next() % 30_000) + 1
            let pixels = Self.pixels(count: pixelCount, minimumCodeSize: size, runs: round % 2 == 0, seed: UInt64(round))
            var data = encoder.encode(pixels)
            if round % 3 == 0, !data.isEmpty {
                for _ in 0..<(Int(random.next() % 4) + 1) { data[Int(random.next() % UInt64(data.count))] ^= UInt8(1 << (random.next() % 8)) }
            }
            if round % 5 == 0 { data.removeLast(Int(random.next() % UInt64(data.count / 2 + 1))) }
            // Asked for a little more or fewer pixels than encoded now and then: ends inside a load.
            let asked = round % 7 == 0 ? pixelCount + Int(random.next() % 5) : pixelCount - (round % 11 == 0 ? 1 : 0)
            var counter = LZWPixelCounter(minimumCodeSize: size, pixels: asked)
            var reference = ByteByByteCounter(minimumCodeSize: size, pixels: asked)
            var offset = 0
            var outcome: Bool? = false
            while offset < data.count {
                let length = min(data.count - offset, Int(random.next() % 255) + 1)
                let block = data[offset..<(offset + length)]
                offset += length
                let expected = reference.consume(block)
                let got: Bool? = block.withUnsafeBufferPointer { pointer in
                    do throws(LZWPixelCounter.Irregular) { return try counter.consume(pointer) } catch { return nil }
                }
                #expect(got == expected, "round \(round), block at \(offset - length)")
                outcome = got
                if got != false { break }
            }
            switch outcome {
            case true?: complete += 1
            case nil: irregular += 1
            case false?: short += 1
            }
        }
        #expect(complete > 100 && irregular > 20 && short > 20, "complete \(complete), irregular \(irregular), short \(short)")
    }
}

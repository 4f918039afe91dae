import Foundation
import GifPackFormat
import GifPackGIF
import GifPackZstd
import Testing
@testable import GifPackTestSupport

/// Inputs `make fuzz` found (Fuzz/README.md), each minimised and kept in the fuzz corpus, checked here
/// without a fuzzer.
@Suite("Fuzz regressions", .timeLimit(.minutes(5)))
struct FuzzRegressionTests {
    /// Fuzz/corpus/json/int64-min-boundary: digits just below Int64.min are a double, -2^63, which
    /// canonical JSON writes as -9.223372036854776e+18; that text read back as the integer
    /// Int64.min (the double is integral and "fits"), so the canonical bytes were not a fixed point:
    /// parse, encode, parse, encode gave -9223372036854775808, a different value and digest.
    @Test(.computes) func canonicalJSONOfNumbersJustBelowInt64MinIsAFixedPoint() throws {
        for text in ["[-9223372036854775809]", "[-9223372036854776000]", "[-9.223372036854776e18]", "[-9223372036854775808.5]"] {
            let first = try CanonicalJSON.encode(try JSONParser.parse(Array(text.utf8)))
            let second = try CanonicalJSON.encode(try JSONParser.parse(first))
            #expect(second == first, "\(text): \(String(decoding: first, as: UTF8.self)) -> \(String(decoding: second, as: UTF8.self))")
            #expect(String(decoding: first, as: UTF8.self) == "[-9.223372036854776e+18]", "\(text)")
        }
        // What does fit Int64 still reads as an integer, written with digits, a fraction or an exponent.
        for text in ["[-9223372036854775808]", "[-9223372036854775808.0]", "[-9.223372036854775808e18]"] {
            #expect(try JSONParser.parse(Array(text.utf8)) == .array([.integer(Int64.min)]), "\(text)")
        }
        #expect(try JSONParser.parse(Array("[-9.223372036854776e+18]".utf8)) == .array([.number(-0x1p63)]))
    }
}

// MARK: GifPackZstd against libzstd (fuzz target zstd-diff)

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/huffman-end-of-stream: one compressed block (no checksum) whose literals
    /// are four Huffman streams of 72, 73, 71 and 75 bytes for 495 literals; the third stream does not
    /// end exactly with its last literal. libzstd (1.5.x, 64-bit) decodes four streams whose first is
    /// at least 16 bytes and the others at least 8 with its fast loop, which finishes each stream
    /// without that check, so `zstd -d` gives 1,440 bytes; GifPackZstd refused the frame ("Huffman
    /// stream does not end with its last literal").
    static let huffmanEndOfStreamFrame =
        "KLUv/WCgBGURAPaeUiBgTZoDQ1vfUhKbUMfJ3TqJqD4u+IeAYMo6VBQNAQCCB0gASQBHAEneei9tWmwYXUmG5Bdf8eQlbp8V/WQ1ZSXPV8lCtVI3RmnITwyL4S6YR4/SJuu5OpEs+d45vDg0uXJ+WdrhgmPzEiYQMwdFQ9nYhL807xeOBhccelquLgEGg4FwXVmwRXxVO4ggGKD/wsv19/C70LrY1GvggGThKqqqw3QuzerTMVpnRciMwlIuFF2L8NNa9wFHyRDvfblC0lim9QS6rzpZmPae5nLblyHOmeU/WFgib0rwDT/tXnkbQ2KL81bZemXbKyzmdhjiBVOMrhTLXex40WBqJTzZcQ8Vh5oztzZvOadF2ADYH7kytwT5tTC5ySPVWFJzaN34CNUMw2A0B4KBVbyGFxXH1dGGMJGHFjvXK7cOLx6OAN0vTyPMeaO0ZfREDVmowZEhyhgpEZqghQUaAyBCghBj9RIg1TEinSKKUCBHQYGSkvJJoTGVGDbystK+3O6zaO3Nu0W9yCHCzyf4acI22YDgKntl6kwSDyrVuVyice7p+bh1On+XcAh5CtnvkrFBxsHCCIedmwjTLCSxpiaaUHxySNHKsorgDDJ/WDG4i4/DifgidmB4+zwNVxG7HXuYnr0seV8eCbVJUewCWUZIApsYjyE8o8agfNYxikkFwuuUlwg6GS1Gh11/iU1TskX2IHVNX88TDafMNL+/vae7k5bPYP8FvfKGda+N5FU="

    /// The frame's bytes.
    static func huffmanEndOfStream() throws -> [UInt8] {
        try [UInt8](#require(Data(base64Encoded: huffmanEndOfStreamFrame)))
    }

    @Test func fourHuffmanStreamsEndAsLibzstdAllows() async throws {
        let frame = try Self.huffmanEndOfStream()
        let reference = try #require(try await LibzstdTool.decode(frame), "zstd -d refuses the frame")
        #expect(reference.count == 1440)
        let ours = try ZstdDecoder.decompress(frame, maxOutput: 1 << 20, maxWindow: 1 << 20)
        #expect(ours == reference)
        // The seed kept for the fuzzer is the same frame.
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/huffman-end-of-stream"))
        #expect(seed == frame)
    }

    /// The whole class around that frame: its Huffman streams' last and first bytes, its jump table
    /// (stream sizes either side of libzstd's fast-loop thresholds, 16 bytes for the first stream and
    /// 8 for the others) and a spread of other bytes, changed one at a time; GifPackZstd must give
    /// what `zstd -d` gives (the same bytes, or a refusal), in one shot and streamed.
    @Test func changedHuffmanStreamsGetLibzstdsVerdict() async throws {
        let frame = try Self.huffmanEndOfStream()
        // Block content at 10; literals header 3 bytes, Huffman tree 33 bytes, jump table at 46,
        // streams from 52: 72, 73, 71, 75 bytes, to 343.
        #expect(Array(frame[46..<52]) == [72, 0, 73, 0, 71, 0])
        let starts = [52, 124, 197, 268], ends = [124, 197, 268, 343]
        var mutants: [(String, [UInt8])] = []
        func mutant(_ label: String, _ change: (inout [UInt8]) -> Void) {
            var bytes = frame
            change(&bytes)
            mutants.append((label, bytes))
        }
        for k in 0..<4 {
            for value: UInt8 in [0x00, 0x01, 0x02, 0x80, 0xFF] {
                mutant("stream \(k + 1) last byte \(value)") { $0[ends[k] - 1] = value }
            }
            for i in 0..<3 {
                mutant("stream \(k + 1) byte \(i) inverted") { $0[starts[k] + i] ^= 0xFF }
            }
        }
        // Stream sizes moved (the fourth takes what the first three leave).
        for (entry, sizes) in [(0, [8, 15, 16, 17, 60, 71, 73, 80]), (1, [7, 8, 9, 70, 74]), (2, [7, 8, 9, 70, 72, 140])] {
            for size in sizes {
                mutant("jump table entry \(entry + 1) = \(size)") {
                    $0[46 + 2 * entry] = UInt8(size)
                    $0[47 + 2 * entry] = 0
                }
            }
        }
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<120 {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            let position = 52 + Int((random >> 33) % UInt64(343 - 52))
            let bit = UInt8(1) << UInt8((random >> 20) & 7)
            mutant("byte \(position) bit \(bit) flipped") { $0[position] ^= bit }
        }
        for (label, bytes) in mutants {
            let reference = try await LibzstdTool.decode(bytes)
            let ours = try? ZstdDecoder.decompress(bytes, maxOutput: 1 << 20, maxWindow: 1 << 20)
            let same = ours == reference
            #expect(same, "\(label): GifPackZstd \(ours.map { "\($0.count) bytes" } ?? "refuses"), zstd -d \(reference.map { "\($0.count) bytes" } ?? "refuses")")
            let streamed = bytes.withUnsafeBytes { raw -> [UInt8]? in
                var output: [UInt8] = []
                let decoder = ZstdDecoder()
                guard (try? decoder.decompressFrame(raw, maxOutput: 1 << 20, maxWindow: 1 << 20, sink: { output += $0 })) != nil else { return nil }
                return output
            }
            let agree = streamed == ours
            #expect(agree, "\(label): streamed and one-shot differ")
        }
    }
}

/// The `zstd` tool (libzstd) as the reference decoder.
enum LibzstdTool {
    /// What `zstd -d` makes of `frame`: its output, or nil when it refuses the input.
    static func decode(_ frame: [UInt8]) async throws -> [UInt8]? {
        let workspace = try TemporaryDirectory()
        let input = workspace.file("input.zst")
        let output = workspace.file("output")
        try Data(frame).write(to: URL(fileURLWithPath: input))
        let status = try await ChildProcess("/usr/bin/zstd", ["-q", "-d", "-c"], stdin: .file(input), stdout: .file(output)).exitStatus()
        return status == 0 ? try fileBytes(output) : nil
    }
}

extension FuzzRegressionTests {
    /// A frame of an 8-byte raw block "ABCDEFGH" and a compressed block with no literals and one
    /// sequence, all three codes RLE: literal length code 0, offset code 1 (one extra bit), match
    /// length code 0 (3 bytes); `stream` is the sequences bitstream.
    static func oneSequenceFrame(stream: [UInt8]) -> [UInt8] {
        let content: [UInt8] = [0x00, 0x01, 0x54, 0x00, 0x01, 0x00] + stream
        let header = content.count << 3 | 2 << 1 | 1
        return [0x28, 0xB5, 0x2F, 0xFD, 0x20, 11, 8 << 3, 0, 0] + Array("ABCDEFGH".utf8)
            + [UInt8(header & 0xFF), UInt8(header >> 8), 0] + content
    }

    /// Offset code 1 with its extra bit 1 after a literal length of 0 is Repeated_Offset1 - 1, which
    /// is 0 when Repeated_Offset1 is 1 (as at a frame's start). RFC 8878 (3.1.2.5) calls the data
    /// corrupt and libzstd refuses it since 1.5.5; the machine's 1.5.4 takes 1 (the frame gives
    /// "ABCDEFGHHHH"), as GifPackZstd once did. It is refused, naming the offset (the
    /// zstd-diff target names this difference from 1.5.4); the same sequence with extra bit 0
    /// (Repeated_Offset3) decodes as libzstd decodes it.
    @Test func repeatedOffsetMinusOneOfZeroIsRefusedAsTheFormatSays() async throws {
        let corrupt = Self.oneSequenceFrame(stream: [0b11])
        #expect(try await LibzstdTool.decode(corrupt) == Array("ABCDEFGHHHH".utf8), "libzstd 1.5.4 takes 1")
        #expect {
            try ZstdDecoder.decompress(corrupt, maxOutput: 1 << 20)
        } throws: { error in
            guard let error = error as? ZstdDecodingError else { return false }
            return error.kind == .corrupt && error.reason.hasPrefix("match offset 0 (Repeated_Offset1 - 1")
        }
        let fine = Self.oneSequenceFrame(stream: [0b01])
        let reference = try await LibzstdTool.decode(fine)
        #expect(reference == Array("ABCDEFGHABC".utf8))
        #expect(try ZstdDecoder.decompress(fine, maxOutput: 1 << 20) == reference)
    }

    /// A sequences bitstream read past its first bit: libzstd 1.5.4 accepts it (its end check only
    /// refuses bits left unread) and takes the missing bits from where its reader wraps round to, here
    /// a 0, so the offset is Repeated_Offset3 = 8 ("ABCDEFGHABC"); GifPackZstd refused it. One byte
    /// more in the stream leaves bits unread, which both refuse.
    /// Found by the zstd-diff target: one sequence whose match lengths use the predefined table
    /// (6-bit states) and a 2-byte bitstream with one bit left after the sequence's fields. libzstd
    /// 1.5.4 updates the states after the last sequence too before it checks the end, so it reads
    /// those 6 bits (past the start) and gives "ABCDEFGHABC"; GifPackZstd refused "does not end with its
    /// last sequence". More unread bits than the updates read are refused by both.
    @Test func bitsLeftAfterTheLastSequenceGetLibzstdsVerdict() async throws {
        func frame(_ stream: [UInt8]) -> [UInt8] {
            let content: [UInt8] = [0x00, 0x01, 0x50, 0x00, 0x01] + stream
            let header = content.count << 3 | 2 << 1 | 1
            return [0x28, 0xB5, 0x2F, 0xFD, 0x20, 11, 8 << 3, 0, 0] + Array("ABCDEFGH".utf8)
                + [UInt8(header & 0xFF), UInt8(header >> 8), 0] + content
        }
        let found = frame([0x00, 0x01])
        #expect(found == Array(try #require(Data(hexString: "28b52ffd200b40000041424344454647483d000000015000010001"))))
        #expect(try await LibzstdTool.decode(found) == Array("ABCDEFGHABC".utf8))
        for stream: [UInt8] in [[0x00, 0x01], [0x00, 0x02], [0x00, 0x00, 0x01], [0x00, 0x00, 0x00, 0x01], [0x80, 0x01], [0x01]] {
            let bytes = frame(stream)
            let reference = try await LibzstdTool.decode(bytes)
            let decoded = try? ZstdDecoder.decompress(bytes, maxOutput: 1 << 20)
            #expect(decoded == reference, "stream \(stream): libzstd \(reference.map { String(decoding: $0, as: UTF8.self) } ?? "refuses")")
        }
    }

    /// Found by the zstd-diff target: the sequence compression modes byte with its reserved low bits
    /// set (0x51). libzstd 1.5.4 ignores them and gives "ABCDEFGHABC"; GifPackZstd refused "reserved bits
    /// of the sequence compression modes are set".
    @Test func reservedBitsOfTheSequenceModesAreIgnoredAsLibzstdDoes() async throws {
        let content: [UInt8] = [0x00, 0x01, 0x51, 0x00, 0x01, 0x00, 0x01]
        let header = content.count << 3 | 2 << 1 | 1
        let frame: [UInt8] =
            [0x28, 0xB5, 0x2F, 0xFD, 0x20, 11, 8 << 3, 0, 0] + Array("ABCDEFGH".utf8)
            + [UInt8(header & 0xFF), UInt8(header >> 8), 0] + content
        #expect(frame == Array(try #require(Data(hexString: "28b52ffd200b40000041424344454647483d000000015100010001"))))
        let reference = try await LibzstdTool.decode(frame)
        #expect(reference == Array("ABCDEFGHABC".utf8))
        #expect(try ZstdDecoder.decompress(frame, maxOutput: 1 << 20) == reference)
    }

    @Test func sequencesBitstreamReadPastItsStartIsAcceptedAsLibzstdDoes() async throws {
        let overread = Self.oneSequenceFrame(stream: [0b1])
        let reference = try await LibzstdTool.decode(overread)
        #expect(reference == Array("ABCDEFGHABC".utf8))
        #expect(try ZstdDecoder.decompress(overread, maxOutput: 1 << 20) == reference)
        let unread = Self.oneSequenceFrame(stream: [0, 0b1])
        #expect(try await LibzstdTool.decode(unread) == nil)
        #expect(throws: ZstdDecodingError.self) { try ZstdDecoder.decompress(unread, maxOutput: 1 << 20) }
    }
}

extension FuzzRegressionTests {
    /// A Huffman tree with 12-bit codes (direct weights 12, 11, ..., 1 for bytes 0...11, byte 12
    /// implied): RFC 8878 caps code lengths at 11, but libzstd decodes trees of up to 12 bits
    /// (HUF_TABLELOG_MAX), so `zstd -d` gives 0x0C 0x00 0x00; GifPackZstd refused "Huffman weight 12
    /// exceeds 11". Then the same tree with four streams (the careful decoder: libzstd's fast loop
    /// takes only 11-bit tables), and a cut version of each, which both refuse.
    @Test func twelveBitHuffmanTreesAreDecodedAsLibzstdDoes() async throws {
        let weights: [UInt8] = [0x8B, 0xCB, 0xA9, 0x87, 0x65, 0x43, 0x21]
        func frame(literals: [UInt8], fourStreams: Bool, streams: [UInt8]) -> [UInt8] {
            let compressed = weights.count + streams.count
            let header = 2 | (fourStreams ? 1 : 0) << 2 | literals.count << 4 | compressed << 14
            let content = [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16)] + weights + streams + [0]
            let block = content.count << 3 | 2 << 1 | 1
            // No content size and a 1 KiB window (a single-segment frame's window would be the few bytes
            // of content, less than the block's size).
            return [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00, UInt8(block & 0xFF), UInt8(block >> 8), 0] + content
        }
        // Byte 0 is code "1", byte 12 is "000000000001" (12 bits); one stream: 12, 0, 0.
        let single = frame(literals: [12, 0, 0], fourStreams: false, streams: [0x07, 0x40])
        // Four streams of 2, 2, 2 and 2 literals: (12, 0), (0, 12), (0, 0), (12, 12).
        func stream(_ codes: [(UInt32, Int)]) -> [UInt8] {
            var value: UInt32 = 1, length = 0
            for (code, bits) in codes { value = value << UInt32(bits) | code; length += bits }
            return (0..<(length + 8) / 8).map { UInt8(truncatingIfNeeded: value >> UInt32(8 * $0)) }
        }
        let s1 = stream([(1, 12), (1, 1)]), s2 = stream([(1, 1), (1, 12)]), s3 = stream([(1, 1), (1, 1)]), s4 = stream([(1, 12), (1, 12)])
        let jump = [UInt8(s1.count), 0, UInt8(s2.count), 0, UInt8(s3.count), 0]
        let four = frame(literals: [12, 0, 0, 12, 0, 0, 12, 12], fourStreams: true, streams: jump + s1 + s2 + s3 + s4)
        for (label, bytes, expected) in [("one stream", single, [UInt8]([12, 0, 0])), ("four streams", four, [12, 0, 0, 12, 0, 0, 12, 12])] {
            let reference = try await LibzstdTool.decode(bytes)
            #expect(reference == expected, "\(label): zstd -d")
            let ours = Result { () throws(ZstdDecodingError) in try ZstdDecoder.decompress(bytes, maxOutput: 1 << 20) }
            #expect((try? ours.get()) == reference, "\(label): \(ours)")
        }
        // The one stream without its first literal's last code bit: both refuse.
        let cut = frame(literals: [12, 0, 0], fourStreams: false, streams: [0x03, 0x20])
        #expect(try await LibzstdTool.decode(cut) == nil)
        #expect((try? ZstdDecoder.decompress(cut, maxOutput: 1 << 20)) == nil)
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/big-window-empty-frame: a frame declaring a 6 MiB window (and a dictionary
    /// ID of 0) and a content size of 0, with one empty RLE block. libzstd decodes a frame that declares
    /// its content size in one pass without looking at the window (0 bytes); GifPackZstd refused it
    /// under a 1 MiB window limit, though no match can reach further back than the content size.
    /// The limit now counts the smaller of the window and the declared content size.
    @Test func declaredContentSizeBoundsTheWindowCounted() async throws {
        let frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x92, 0x64, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0]
        #expect(try await LibzstdTool.decode(frame) == [])
        #expect(try ZstdDecoder.decompress(frame, maxOutput: 1 << 20, maxWindow: 1 << 20) == [])
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/big-window-empty-frame"))
        #expect(seed == frame)
        // 200 bytes (one RLE block) declared, 6 MiB window: decoded in one shot and streamed.
        let small: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x82, 0x64, 0, 0, 200, 0, 0, 0, UInt8((200 << 3 | 3) & 0xFF), UInt8((200 << 3) >> 8), 0, 0x41]
        #expect(try await LibzstdTool.decode(small) == [UInt8](repeating: 0x41, count: 200))
        #expect(try ZstdDecoder.decompress(small, maxOutput: 1 << 20, maxWindow: 1 << 20) == [UInt8](repeating: 0x41, count: 200))
        var streamed: [UInt8] = []
        _ = try small.withUnsafeBytes { raw in
            try ZstdDecoder().decompressFrame(raw, maxOutput: 1 << 20, maxWindow: 1 << 20) { streamed += $0 }
        }
        #expect(streamed == [UInt8](repeating: 0x41, count: 200))
        // A declared size above the limit still counts the window: refused.
        do {
            _ = try ZstdDecoder.decompress(small, maxOutput: 1 << 20, maxWindow: 100)
            Issue.record("a 200-byte frame with a 6 MiB window decoded under a 100-byte window limit")
        } catch {
            #expect(error.kind == .windowTooLarge)
        }
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hex digits; nil for an odd count or a non-hex character.
    init?(hexString: String) {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hexString {
            guard let nibble = character.hexDigitValue else { return nil }
            if let h = high { bytes.append(h << 4 | UInt8(nibble)); high = nil } else { high = UInt8(nibble) }
        }
        guard high == nil else { return nil }
        self.init(bytes)
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/table-description-wraps (found by the zstd-diff target): one compressed
    /// block, 6 RLE literals '@' and 2 sequences whose match lengths table description (FSE-compressed)
    /// needs more bits than the 6 bytes left in the block. libzstd 1.5.4's FSE_readNCount copies a short
    /// description into a zero-filled 8-byte buffer and, at its end, keeps the bit position modulo 32:
    /// it reads the last 4 bytes again from their start, ends inside the 6 bytes and accepts a table made
    /// of bits it read twice, so `zstd -d` gives 16 '@'. That is no reading RFC 8878 defines (libzstd's
    /// own check for a description running past its end, `bitCount > 32`, only sees where the wrapped
    /// position ended), so GifPackZstd refuses the frame and says how many bytes the description had;
    /// the zstd-diff target names this difference (LibzstdTableDescription, a step-for-step copy of
    /// libzstd's reader) instead of following it.
    @Test func tableDescriptionRunningPastItsBytesIsRefused() async throws {
        let frame = [UInt8](try #require(Data(base64Encoded: "KLUv/QAAbQAAMUACi0Av/WQAAAAAsw==")))
        #expect(try await LibzstdTool.decode(frame) == [UInt8](repeating: 0x40, count: 16))
        do {
            let decoded = try ZstdDecoder.decompress(frame, maxOutput: 1 << 20, maxWindow: 1 << 20)
            Issue.record("a table description read past its bytes decoded to \(decoded.count) bytes")
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.reason == "match lengths table description runs past the 6 bytes left for it")
            #expect(error.offset == 16)
        }
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/table-description-wraps"))
        #expect(seed == frame)
    }

    /// Fuzz/corpus/zstd-diff/state-read-past-start: the same block with other last 6 bytes (a match
    /// lengths description of 3 bytes, then a 3-byte sequences bitstream too short for its 2 sequences).
    /// libzstd 1.5.4 reads the extra bits of a sequence with BIT_readBitsFast but the FSE states with
    /// BIT_readBits (BIT_getMiddleBits), and the two differ once a read reaches past the stream's start:
    /// the fast one wraps round to the container's bottom bits, the other gives its top bits with zeros
    /// above. GifPackZstd read the states the fast way, so its states after the overread, and its
    /// verdict, were not libzstd's: it refused the first frame (`zstd -d`: 12 '@'), gave 17 bytes for
    /// the second (13) and decoded the third, which libzstd refuses.
    @Test func statesReadPastTheStreamsStartAreReadAsLibzstdReadsThem() async throws {
        let prefix = "28b52ffd00006d00003140028b402ffd"
        let cases: [(String, [UInt8]?)] = [
            ("741ffd5fed7e", [UInt8](repeating: 0x40, count: 12)),
            ("d269de7b0d58", [UInt8](repeating: 0x40, count: 13)),
            ("6095039b1214", nil)
        ]
        for (tail, expected) in cases {
            let frame = [UInt8](try #require(Data(hexString: prefix + tail)))
            #expect(try await LibzstdTool.decode(frame) == expected, "\(tail): zstd -d")
            let ours = try? ZstdDecoder.decompress(frame, maxOutput: 1 << 20, maxWindow: 1 << 20)
            #expect(ours == expected, "\(tail): GifPackZstd \(ours.map { "\($0.count) bytes" } ?? "refuses")")
        }
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/state-read-past-start"))
        #expect(seed == [UInt8](try #require(Data(hexString: prefix + "741ffd5fed7e"))))
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/small-content-size-block (found by the zstd-diff target): a single-segment
    /// frame declaring a content size of 0 (so a window of 0), two empty raw blocks and a compressed block
    /// of 2 bytes (no literals, no sequences). Block_Maximum_Size is min(window, 128 KiB) = 0, but libzstd
    /// 1.5.4 decodes a frame that declares a content size of at most 128 KiB in one pass (`zstd -d` gives
    /// it a 128 KiB buffer), which holds blocks to 128 KiB and to the content size only, so `zstd -d` gives
    /// 0 bytes; GifPackZstd refused "block of 2 bytes exceeds the block size limit 0". Then the other
    /// sides of that rule: a 2,000-byte RLE block under a 1 KiB window is decoded in a frame that
    /// declares 2,000 bytes, refused in one that declares no size or more than 128 KiB (libzstd decodes
    /// those block by block and holds each to the window), and that bigger frame decodes when its first
    /// 2,000 bytes come in blocks of at most 1 KiB.
    @Test func smallDeclaredContentSizeHoldsBlocksTo128KiBAsLibzstdDoes() async throws {
        let found: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x15, 0, 0, 0, 0]
        #expect(try await LibzstdTool.decode(found) == [])
        #expect(try ZstdDecoder.decompress(found, maxOutput: 1 << 20, maxWindow: 1 << 20) == [])
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/small-content-size-block"))
        #expect(seed == found)

        func rle(_ count: Int, last: Bool) -> [UInt8] {
            let header = count << 3 | 1 << 1 | (last ? 1 : 0)
            return [UInt8(header & 0xFF), UInt8((header >> 8) & 0xFF), UInt8(header >> 16), 0x41]
        }
        /// A frame with a 1 KiB window (not single-segment), `size` declared in 4 bytes or not at all.
        func frame(declaring size: Int?, _ blocks: [[UInt8]]) -> [UInt8] {
            var bytes: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, size == nil ? 0x00 : 0x80, 0x00]
            if let size { bytes += (0..<4).map { UInt8((size >> (8 * $0)) & 0xFF) } }
            return bytes + blocks.joined()
        }
        let ones = (0..<194).map { rle(1024, last: $0 == 193) }
        let cases: [(String, [UInt8], Int?)] = [
            ("2,000 declared, one 2,000-byte block", frame(declaring: 2000, [rle(2000, last: true)]), 2000),
            ("no size declared, one 2,000-byte block", frame(declaring: nil, [rle(2000, last: true)]), nil),
            ("200,656 declared, a 2,000-byte block first", frame(declaring: 200_656, [rle(2000, last: false)] + ones), nil),
            ("200,656 declared, blocks of at most 1 KiB", frame(declaring: 200_656, [rle(1024, last: false), rle(976, last: false)] + ones), 200_656)
        ]
        for (label, bytes, expected) in cases {
            let reference = try await LibzstdTool.decode(bytes)
            #expect(reference?.count == expected, "\(label): zstd -d")
            let ours = try? ZstdDecoder.decompress(bytes, maxOutput: 1 << 20, maxWindow: 1 << 20)
            #expect(ours == reference, "\(label): GifPackZstd \(ours.map { "\($0.count) bytes" } ?? "refuses")")
            var streamed: [UInt8] = []
            let frameResult = try? bytes.withUnsafeBytes { raw in
                try ZstdDecoder().decompressFrame(raw, maxOutput: 1 << 20, maxWindow: 1 << 20) { streamed += $0 }
            }
            #expect(frameResult == nil ? reference == nil : streamed == reference, "\(label): streamed")
        }
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/empty-compressed-block (the zstd-diff target found a longer one): a frame that
    /// declares no content size, with an RLE block, a compressed block of 0 bytes (so no literals section)
    /// and a last RLE block. libzstd 1.5.4 decodes such a frame block by block and takes any block of
    /// 0 bytes for an empty one, so `zstd -d` gives 15 'A' and 5 'B'; GifPackZstd refused "compressed block
    /// has no literals section". libzstd's one pass (a frame declaring at most 128 KiB) refuses that block,
    /// and so does GifPackZstd there; a frame declaring more is decoded block by block again.
    @Test func compressedBlockOfNoBytesIsEmptyWhereLibzstdDecodesBlockByBlock() async throws {
        func block(_ type: Int, _ size: Int, last: Bool, _ payload: [UInt8] = []) -> [UInt8] {
            let header = size << 3 | type << 1 | (last ? 1 : 0)
            return [UInt8(header & 0xFF), UInt8((header >> 8) & 0xFF), UInt8(header >> 16)] + payload
        }
        let blocks = block(1, 15, last: false, [0x41]) + block(2, 0, last: false) + block(1, 5, last: true, [0x42])
        let found: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00] + blocks
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/empty-compressed-block"))
        #expect(seed == found)
        let text = [UInt8](repeating: 0x41, count: 15) + [UInt8](repeating: 0x42, count: 5)
        func declaring(_ size: Int, window: UInt8) -> [UInt8] {
            [0x28, 0xB5, 0x2F, 0xFD, 0x80, window] + (0..<4).map { UInt8((size >> (8 * $0)) & 0xFF) }
        }
        let big =
            declaring(200_000, window: 0x70) + block(1, 100_000, last: false, [0x41]) + block(2, 0, last: false)
            + block(1, 100_000, last: true, [0x42])
        let cases: [(String, [UInt8], [UInt8]?)] = [
            ("no size declared", found, text),
            (
                "no size declared, the empty compressed block last", [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00] + block(1, 15, last: false, [0x41]) + block(2, 0, last: true),
                [UInt8](repeating: 0x41, count: 15)
            ),
            ("20 bytes declared (one pass)", declaring(20, window: 0) + blocks, nil),
            ("200,000 bytes declared", big, [UInt8](repeating: 0x41, count: 100_000) + [UInt8](repeating: 0x42, count: 100_000))
        ]
        for (label, bytes, expected) in cases {
            #expect(try await LibzstdTool.decode(bytes) == expected, "\(label): zstd -d")
            let ours = try? ZstdDecoder.decompress(bytes, maxOutput: 1 << 20, maxWindow: 1 << 20)
            #expect(ours == expected, "\(label): GifPackZstd \(ours.map { "\($0.count) bytes" } ?? "refuses")")
        }
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/zstd-diff/window-log-above-31 (found by the zstd-diff target): a frame declaring a
    /// content size of 0 and a window log of 34, with one empty RLE block. libzstd 1.5.4 refuses any
    /// window log above 31 (ZSTD_WINDOWLOG_MAX on 64 bits) when it reads the frame header, whatever the
    /// content size; GifPackZstd counted only the content size against the window limit and decoded
    /// 0 bytes. Window logs 31 (0xA8, 0xAF) are decoded by both, 32 (0xB0) and 33 (0xBF) refused.
    @Test func windowLogsAbove31AreRefusedAsLibzstdRefusesThem() async throws {
        func frame(window descriptor: UInt8) -> [UInt8] {
            [0x28, 0xB5, 0x2F, 0xFD, 0x92, descriptor, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0]
        }
        let found = frame(window: 0xC7)
        let seed = try fileBytes(#filePath.replacingOccurrences(of: "Tests/GifPackFormatTests/FuzzRegressionTests.swift", with: "Fuzz/corpus/zstd-diff/window-log-above-31"))
        #expect(seed == found)
        for (descriptor, accepted) in [(UInt8(0xA8), true), (0xAF, true), (0xB0, false), (0xBF, false), (0xC7, false)] {
            let bytes = frame(window: descriptor)
            #expect(try await LibzstdTool.decode(bytes) == (accepted ? [] : nil), "window descriptor \(descriptor): zstd -d")
            do {
                let decoded = try ZstdDecoder.decompress(bytes, maxOutput: 1 << 20, maxWindow: 1 << 20)
                #expect(accepted && decoded.isEmpty, "window descriptor \(descriptor): GifPackZstd decoded \(decoded.count) bytes")
            } catch {
                #expect(!accepted && error.kind == .windowTooLarge, "window descriptor \(descriptor): \(error)")
            }
        }
    }
}

extension FuzzRegressionTests {
    /// Fuzz/corpus/blurhash/ten-rows: a first character of '}' or '~' (size flag 81 or 82) declares
    /// ten rows of components. BlurHashDecoder drew such a hash (1x10 or 2x10 components), one no
    /// encoder makes (1...9 each way) and that fuzz-blurhash's property (a decoded picture encodes
    /// again with its components) breaks on; it is refused now, like any other malformed hash.
    @Test(.computes) func aBlurHashDeclaringTenRowsOfComponentsIsRefused() throws {
        for hash in ["}" + String(repeating: "0", count: 23), "~" + String(repeating: "0", count: 43)] {
            #expect(throws: BlurHashDecoder.DecodeError.self) { try BlurHashDecoder.decode(hash, width: 8, height: 8) }
        }
        // Nine by nine, the most there is, still decodes and encodes again.
        let nine = "|" + String(repeating: "0", count: 3) + String(repeating: "fQ", count: 2) + String(repeating: "00", count: 79)
        let image = try BlurHashDecoder.decode(nine, width: 8, height: 8)
        #expect(try BlurHashEncoder.encode(image, componentsX: 9, componentsY: 9).utf8.count == nine.utf8.count)
    }
}

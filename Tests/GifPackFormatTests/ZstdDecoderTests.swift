import GIFSynthesis
import Foundation
import GifPackSystem
import GifPackZstd
import Testing
@testable import GifPackTestSupport

/// The pure-Swift zstd decoder against the reference encoder: frames written at test time by the
/// `zstd` tool (levels, strategies, window logs, long-distance matching, with and without content
/// size and checksum, from files and from standard input) and by python-zstandard (block flushes,
/// no content size, several frames with a skippable frame between, a dictionary frame), decoded in
/// one shot and streamed frame by frame, compared byte for byte with the original; and hostile
/// input (truncated, corrupted, over-limit frames) refused with the right error and no crash.
@Suite(.timeLimit(.minutes(5))) struct ZstdDecoderTests {
    // MARK: Differential: the zstd tool

    @Test(arguments: ZstdToolCase.all)
    func decodesWhatTheZstdToolWrites(_ testCase: ZstdToolCase) async throws {
        let original = ZstdCorpus.data(testCase.data)
        let compressed = try await ZstdCorpus.compressWithTool(original, arguments: testCase.arguments, fromStandardInput: testCase.fromStandardInput)
        try expectRoundTrip(compressed, original, testCase.description)
    }

    @Test func windowLogsFrom10To27AreHonoured() async throws {
        // From standard input the tool does not know the size, so the header keeps the window log asked for.
        let original = ZstdCorpus.data(.mixed)
        for log in [10, 14, 17, 20, 24, 27] {
            let compressed = try await ZstdCorpus.compressWithTool(
                original, arguments: ["-3", "--zstd=wlog=\(log)"] + (log == 27 ? ["--long=27"] : []), fromStandardInput: true)
            let header = try #require(compressed.withUnsafeBytes { try? ZstdDecoder.frameHeader($0) })
            #expect(header.windowSize == 1 << log)
            #expect(header.contentSize == nil)
            try expectRoundTrip(compressed, original, "wlog=\(log)")
            if log > 10 {
                let error = decodingError { try ZstdDecoder.decompress(compressed, maxOutput: original.count, maxWindow: (1 << log) - 1) }
                #expect(error?.kind == .windowTooLarge)
            }
        }
    }

    // MARK: Differential: python-zstandard

    @Test func decodesWhatPythonZstandardWrites() async throws {
        let workspace = try TemporaryDirectory()
        let kinds: [ZstdCorpus.Kind] = [.text, .gifs, .runs, .tiny, .empty, .random]
        for kind in kinds {
            try Data(ZstdCorpus.data(kind)).write(to: URL(fileURLWithPath: workspace.file("\(kind).orig")))
        }
        let python = "\(PublishServers.repositoryRoot)/.venv-test/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            Issue.record("python-zstandard is missing: \(python) does not exist; run `make test-venv`")
            return
        }
        let script = """
            import sys, os, random, zstandard as zstd
            from importlib.metadata import version
            assert version("zstandard") == "0.25.0", version("zstandard")
            d = sys.argv[1]
            for kind in sys.argv[2:]:
                data = open(os.path.join(d, kind + ".orig"), "rb").read()
                def out(name, frames):
                    open(os.path.join(d, kind + "." + name + ".zst"), "wb").write(frames)
                for level in (-5, 3, 19):
                    for size in (True, False):
                        for check in (True, False):
                            c = zstd.ZstdCompressor(level=level, write_content_size=size, write_checksum=check)
                            out("l%d-size%d-check%d" % (level, size, check), c.compress(data))
                # Many small blocks (repeat-mode tables, reused Huffman trees), no content size.
                for level in (3, 19):
                    o = zstd.ZstdCompressor(level=level, write_checksum=True).compressobj()
                    rnd, pos, parts = random.Random(7), 0, []
                    while pos < len(data):
                        n = rnd.randrange(1, 5000)
                        parts += [o.compress(data[pos:pos + n]), o.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)]
                        pos += n
                    parts.append(o.flush())
                    out("flushes-l%d" % level, b"".join(parts))
                # Two frames with a skippable frame between them.
                half, c = len(data) // 2, zstd.ZstdCompressor(level=3)
                skippable = (0x184D2A5A).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"skip!"
                out("frames", c.compress(data[:half]) + skippable + c.compress(data[half:]))
                p = zstd.ZstdCompressionParameters(window_log=12, strategy=zstd.STRATEGY_BTULTRA2, min_match=3, write_checksum=1)
                out("btultra2-wlog12", zstd.ZstdCompressor(compression_params=p).compress(data))
                p = zstd.ZstdCompressionParameters.from_level(5, enable_ldm=True, window_log=24)
                out("ldm", zstd.ZstdCompressor(compression_params=p).compress(data))
            samples = [open(os.path.join(d, "text.orig"), "rb").read()[i:i + 1000] for i in range(0, 200000, 1000)]
            dictionary = zstd.train_dictionary(4096, samples)
            open(os.path.join(d, "dictionary.zst"), "wb").write(zstd.ZstdCompressor(dict_data=dictionary).compress(samples[3]))
            print(dictionary.dict_id())
            """
        let result = try await run(python, ["-c", script, workspace.path] + kinds.map { "\($0)" })
        try #require(result.status == 0, "python-zstandard failed: \(result.error)")
        var decoded = 0
        for kind in kinds {
            let original = ZstdCorpus.data(kind)
            let prefix = "\(kind)."
            for name in try FileManager.default.contentsOfDirectory(atPath: workspace.path).sorted()
            where name.hasPrefix(prefix) && name.hasSuffix(".zst") {
                let compressed = try fileBytes(workspace.file(name))
                try expectRoundTrip(compressed, original, name)
                decoded += 1
            }
        }
        #expect(decoded == kinds.count * 17)
        // A frame that needs a dictionary is refused with the dictionary's id.
        let dictionaryID = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let error = decodingError { try ZstdDecoder.decompress(try fileBytes(workspace.file("dictionary.zst")), maxOutput: 1 << 20) }
        #expect(error?.kind == .unsupported)
        #expect(error?.reason == "frame needs dictionary \(dictionaryID); dictionaries are not supported")
    }

    // MARK: Streaming

    @Test func streamsFramesInBlocksAndPassesSinkErrorsThrough() async throws {
        let original = ZstdCorpus.data(.mixed)
        let compressed = try await ZstdCorpus.compressWithTool(original, arguments: ["-19", "--long=27"], fromStandardInput: true)
        let decoder = ZstdDecoder()
        var chunks: [Int] = []
        var streamed: [UInt8] = []
        let result = try compressed.withUnsafeBytes { raw in
            try decoder.decompressFrame(raw, maxOutput: original.count) { chunk in
                chunks.append(chunk.count)
                streamed.append(contentsOf: chunk)
            }
        }
        #expect(streamed == original)
        #expect(result == ZstdDecoder.FrameResult(inputBytes: compressed.count, outputBytes: original.count))
        #expect(chunks.count > 1 && chunks.allSatisfy { $0 <= 128 * 1024 })

        struct SinkFull: Error {}
        #expect(throws: SinkFull.self) {
            try compressed.withUnsafeBytes { raw in
                try decoder.decompressFrame(raw, maxOutput: original.count) { _ in throw SinkFull() }
            }
        }
        // The same decoder still decodes afterwards.
        #expect(try ZstdDecoder.decompress(compressed, maxOutput: original.count) == original)
    }

    // MARK: Hostile input

    @Test func truncatedFramesAreRefusedWithAReason() async throws {
        let original = ZstdCorpus.data(.text)
        for arguments in [["-19"], ["-3", "--no-check"], ["--fast=3", "--no-content-size"]] {
            let compressed = try await ZstdCorpus.compressWithTool(original, arguments: arguments, fromStandardInput: false)
            let step = max(1, compressed.count / 400)
            for cut in Array(stride(from: 0, to: compressed.count, by: step)) + Array(compressed.count - 8..<compressed.count) {
                let prefix = Array(compressed[0..<cut])
                let error = decodingError { try ZstdDecoder.decompress(prefix, maxOutput: original.count) }
                #expect(error != nil, "a frame cut at \(cut) of \(compressed.count) bytes decoded (\(arguments))")
                #expect(error.map { !$0.reason.isEmpty && $0.offset <= cut } ?? true)
            }
        }
    }

    @Test func corruptedFramesNeverCrashAndChecksummedOnesNeverDecodeWrong() async throws {
        let original = ZstdCorpus.data(.mixed)
        var rng = ZstdCorpus.SplitMix(seed: 42)
        for (arguments, checked) in [(["-19"], true), (["-3", "--no-check"], false), (["--fast=2", "--no-check"], false)] {
            let compressed = try await ZstdCorpus.compressWithTool(original, arguments: arguments, fromStandardInput: false)
            for _ in 0..<150 {
                var damaged = compressed
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let at = Int(rng.next() % UInt64(damaged.count))
                    damaged[at] ^= UInt8(truncatingIfNeeded: 1 | rng.next())
                }
                do {
                    let decoded = try ZstdDecoder.decompress(damaged, maxOutput: original.count + 1000)
                    if checked { #expect(decoded == original, "a damaged frame with a checksum decoded to other bytes") }
                } catch {
                    #expect(!error.reason.isEmpty)
                }
                // The streaming path sees the same damage.
                _ = try? damaged.withUnsafeBytes { raw in
                    try ZstdDecoder().decompressFrame(raw, maxOutput: original.count + 1000) { _ in }
                }
            }
        }
    }

    @Test func limitsAndBadHeadersGiveTheRightError() async throws {
        let original = ZstdCorpus.data(.text)
        let sized = try await ZstdCorpus.compressWithTool(original, arguments: ["-3"], fromStandardInput: false)
        let unsized = try await ZstdCorpus.compressWithTool(original, arguments: ["-3"], fromStandardInput: true)

        // Output limit: declared size over the limit, and an undeclared size that runs over it.
        #expect(decodingError { try ZstdDecoder.decompress(sized, maxOutput: original.count - 1) }?.kind == .outputLimitExceeded)
        #expect(decodingError { try ZstdDecoder.decompress(unsized, maxOutput: original.count - 1) }?.kind == .outputLimitExceeded)
        #expect(
            decodingError {
                try unsized.withUnsafeBytes { raw in try ZstdDecoder().decompressFrame(raw, maxOutput: 1000) { _ in } }
            }?.kind == .outputLimitExceeded)

        // Not zstd, empty, trailing garbage.
        #expect(
            decodingError { try ZstdDecoder.decompress(Array("GIF89a-not-zstd".utf8), maxOutput: 100) }?.reason
                == "not a zstd frame (magic number 0x38464947)")
        #expect(decodingError { try ZstdDecoder.decompress([UInt8](), maxOutput: 100) }?.kind == .truncated)
        let trailing = decodingError { try ZstdDecoder.decompress(sized + [1, 2, 3, 4, 5], maxOutput: original.count + 10) }
        #expect(trailing?.kind == .corrupt && trailing?.offset == sized.count)

        // A content size of 2^64 - 1 and a skippable frame longer than the input.
        let huge: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x00] + [UInt8](repeating: 0xFF, count: 8) + [0x01, 0x00, 0x00]
        #expect(decodingError { try ZstdDecoder.decompress(huge, maxOutput: Int.max) }?.kind == .outputLimitExceeded)
        let longSkippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        #expect(
            decodingError { try ZstdDecoder.decompress(longSkippable, maxOutput: 100) }?.reason
                == "skippable frame of 4294967295 bytes runs past the input")

        // Reserved descriptor bit; a crafted dictionary id; a reserved block type.
        var reserved = sized
        reserved[4] |= 0x08
        #expect(
            decodingError { try ZstdDecoder.decompress(reserved, maxOutput: original.count) }?.reason
                == "reserved bit of the frame header descriptor is set")
        let withDictionary: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x07, 0x01, 0x01, 0x00, 0x00]
        #expect(decodingError { try ZstdDecoder.decompress(withDictionary, maxOutput: 100) }?.kind == .unsupported)
        let reservedBlock: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x04, 0x07, 0x00, 0x00]
        #expect(decodingError { try ZstdDecoder.decompress(reservedBlock, maxOutput: 100) }?.reason == "reserved block type")

        // Checksum: the stored value altered.
        let checked = try await ZstdCorpus.compressWithTool(Array(original[0..<5000]), arguments: ["-3"], fromStandardInput: false)
        var badChecksum = checked
        badChecksum[badChecksum.count - 1] ^= 0x40
        #expect(decodingError { try ZstdDecoder.decompress(badChecksum, maxOutput: 5000) }?.kind == .checksumMismatch)

        // A declared content size (4-byte field, 1 KB window) that the blocks do not match: one
        // RLE block of 5 bytes declared as 4 or 6; declared as 5 it decodes.
        func rleFrame(declaring size: UInt8) -> [UInt8] {
            [0x28, 0xB5, 0x2F, 0xFD, 0x80, 0x00, size, 0x00, 0x00, 0x00, 0x2B, 0x00, 0x00, 0x61]
        }
        #expect(
            decodingError { try ZstdDecoder.decompress(rleFrame(declaring: 4), maxOutput: 100) }?.reason
                == "frame decodes to more bytes than its declared content size 4")
        #expect(
            decodingError { try ZstdDecoder.decompress(rleFrame(declaring: 6), maxOutput: 100) }?.reason
                == "frame decodes to 5 bytes but declares 6")
        #expect(try ZstdDecoder.decompress(rleFrame(declaring: 5), maxOutput: 100) == Array("aaaaa".utf8))
        // An RLE block larger than a single-segment frame's window (its content size) is corrupt: held to
        // the content size, as libzstd's one pass holds a frame declaring at most 128 KiB.
        let overBlock: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x04, 0x2B, 0x00, 0x00, 0x61]
        #expect(
            decodingError { try ZstdDecoder.decompress(overBlock, maxOutput: 100) }?.reason
                == "frame decodes to more bytes than its declared content size 4")
    }

    @Test(.computes) func xxh64MatchesReferenceVectorsInAnyChunking() {
        #expect(XXH64.hash(UnsafeRawBufferPointer(start: nil, count: 0)) == 0xEF46_DB37_51D8_E999)
        #expect(Array("abc".utf8).withUnsafeBytes { XXH64.hash($0) } == 0x44BC_2CF5_AD77_0999)
        let data = ZstdCorpus.data(.random)
        let whole = data.withUnsafeBytes { XXH64.hash($0) }
        var rng = ZstdCorpus.SplitMix(seed: 3)
        var state = XXH64()
        var at = 0
        data.withUnsafeBytes { raw in
            while at < raw.count {
                let n = min(raw.count - at, Int(rng.next() % 70))
                state.update(UnsafeRawBufferPointer(rebasing: raw[at..<(at + n)]))
                at += n
            }
        }
        #expect(state.digest() == whole)
    }

    // MARK: Helpers

    /// Decodes `compressed` in one shot, and frame by frame through the streaming form, and
    /// compares both with `original`; a limit one byte short must be refused.
    private func expectRoundTrip(
        _ compressed: [UInt8], _ original: [UInt8], _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let oneShot = try ZstdDecoder.decompress(compressed, maxOutput: original.count)
        #expect(oneShot == original, "one-shot decode of \(label) differs", sourceLocation: sourceLocation)
        var streamed: [UInt8] = []
        let decoder = ZstdDecoder()
        try compressed.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let frame = try decoder.decompressFrame(
                    UnsafeRawBufferPointer(rebasing: raw[offset...]), maxOutput: original.count - streamed.count
                ) { chunk in streamed.append(contentsOf: chunk) }
                offset += frame.inputBytes
            }
        }
        #expect(streamed == original, "streamed decode of \(label) differs", sourceLocation: sourceLocation)
        if !original.isEmpty {
            let error = decodingError { try ZstdDecoder.decompress(compressed, maxOutput: original.count - 1) }
            #expect(error?.kind == .outputLimitExceeded, "\(label) with a limit one byte short", sourceLocation: sourceLocation)
        }
    }
}

/// The error of `body`, if it throws a ``ZstdDecodingError``.
private func decodingError(_ body: () throws -> Any) -> ZstdDecodingError? {
    do {
        _ = try body()
        return nil
    } catch let error as ZstdDecodingError {
        return error
    } catch {
        return nil
    }
}

/// One compression by the `zstd` tool.
struct ZstdToolCase: Sendable, CustomStringConvertible {
    let data: ZstdCorpus.Kind
    let arguments: [String]
    let fromStandardInput: Bool

    var description: String { "\(data) \(arguments.joined(separator: " "))\(fromStandardInput ? " <stdin" : "")" }

    static let all: [ZstdToolCase] = {
        var cases: [ZstdToolCase] = []
        // Every level range and strategy, window logs, long-distance matching, with and without
        // content size and checksum, on mixed data (text, GIFs, runs, random bytes: several blocks).
        let mixed: [[String]] =
            [
                ["--fast=7"], ["--fast=1"], ["-1"], ["-3"], ["-9"], ["-19"], ["--ultra", "-22"],
                ["-19", "--no-check"], ["-3", "--no-content-size"], ["--zstd=wlog=10"], ["-5", "--zstd=wlog=17"],
                ["-19", "--zstd=wlog=24"], ["--long", "-19"],
                ["-3", "--zstd=wlog=10,hlog=6,clog=6,slog=1,mml=3"], ["-19", "--zstd=mml=3,tlen=999"]
            ] + (1...9).map { ["--zstd=strategy=\($0)"] }
        cases += mixed.map { ZstdToolCase(data: .mixed, arguments: $0, fromStandardInput: false) }
        cases += [["-3"], ["--long=27", "-19"]].map { ZstdToolCase(data: .mixed, arguments: $0, fromStandardInput: true) }
        // Each kind of data alone.
        for (kind, levels) in [
            (ZstdCorpus.Kind.text, ["-1", "-19"]), (.gifs, ["-3", "-19"]), (.runs, ["-3", "-19"]),
            (.zeros, ["-3"]), (.random, ["-3"]), (.tiny, ["-3", "-19"]), (.empty, ["-3"])
        ] {
            cases += levels.map { ZstdToolCase(data: kind, arguments: [$0], fromStandardInput: false) }
        }
        cases.append(ZstdToolCase(data: .tiny, arguments: ["-19", "--no-check"], fromStandardInput: true))
        cases.append(ZstdToolCase(data: .empty, arguments: ["-3"], fromStandardInput: true))
        return cases
    }()
}

/// Deterministic test data, and the `zstd` tool run on it.
enum ZstdCorpus {
    enum Kind: String, Sendable, CustomStringConvertible {
        case text, gifs, runs, zeros, random, tiny, empty, mixed
        var description: String { rawValue }
    }

    /// The fixture's deterministic generator (ExerciseDBFixture's `SplitMix64`).
    typealias SplitMix = SplitMix64

    static func data(_ kind: Kind) -> [UInt8] {
        switch kind {
        case .text: text
        case .gifs: gifs
        case .runs: runs
        case .zeros: [UInt8](repeating: 0, count: 300_000)
        case .random: random
        case .tiny: Array("hello, zstd\n".utf8)
        case .empty: []
        case .mixed: mixed
        }
    }

    /// Pseudo-English with long repeats (matches of every length and distance).
    private static let text: [UInt8] = {
        let words = [
            "exercise", "squat", "barbell", "dumbbell", "the", "and", "of", "lateral", "raise", "push", "up",
            "target", "muscle", "body", "part", "equipment", "cable", "machine", "a", "to", "with", "gif"
        ]
        var rng = SplitMix(seed: 1)
        var out: [UInt8] = []
        while out.count < 250_000 {
            if out.count > 5000 && rng.next() % 10 == 0 {
                let length = 20 + Int(rng.next() % 300)
                let from = Int(rng.next() % UInt64(out.count - length))
                out += out[from..<(from + length)]
            } else {
                out += Array(words[Int(rng.next() % UInt64(words.count))].utf8)
                out.append(rng.next() % 12 == 0 ? 10 : 32)
            }
        }
        return out
    }()

    /// Animated GIFs from the fixture's synthesizer (LZW data: mostly Huffman-coded literals).
    private static let gifs: [UInt8] = {
        var out: [UInt8] = []
        for (i, colors) in [3, 4, 16].enumerated() {
            out += (try? GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: 12, colors: colors, seed: UInt64(i + 1))) ?? []
        }
        return out
    }()

    private static let runs: [UInt8] = {
        var rng = SplitMix(seed: 2)
        var out: [UInt8] = []
        while out.count < 200_000 {
            out += [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next() % 4), count: 1 + Int(rng.next() % 300))
        }
        return out
    }()

    private static let random: [UInt8] = {
        var rng = SplitMix(seed: 3)
        return (0..<60_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }()

    private static let mixed: [UInt8] = {
        Array(text[0..<150_000]) + gifs + Array(runs[0..<60_000]) + random + [UInt8](repeating: 0, count: 40_000)
            + Array(text[100_000..<160_000])
    }()

    /// `original` compressed by `/usr/bin/zstd` with `arguments`, from a file (the tool knows the
    /// size) or from standard input (it does not).
    static func compressWithTool(_ original: [UInt8], arguments: [String], fromStandardInput: Bool) async throws -> [UInt8] {
        let workspace = try TemporaryDirectory()
        let input = workspace.file("input")
        let output = workspace.file("output.zst")
        try Data(original).write(to: URL(fileURLWithPath: input))
        let child =
            fromStandardInput
            ? try ChildProcess("/usr/bin/zstd", ["-q", "-c", "-T1"] + arguments, stdin: .file(input), stdout: .file(output))
            : try ChildProcess("/usr/bin/zstd", ["-q", "-f", "-T1"] + arguments + [input, "-o", output])
        let status = await child.exitStatus()
        try #require(status == 0, "zstd \(arguments) failed with status \(status)")
        return try fileBytes(output)
    }
}

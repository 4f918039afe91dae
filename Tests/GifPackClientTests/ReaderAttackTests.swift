import Foundation
@testable import GifPackClient
@testable import GifPackFormat
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures
import GifPackIndexReader

/// Hostile bytes after, inside and instead of a pack's frames: the frame scanner's memory stays
/// bounded by its window whatever the file holds, and every refusal names the offset.
@Suite("Reader attacks: the frame scanner on hostile files", .timeLimit(.minutes(5)))
struct ReaderAttackTests {
    /// A small real pack (catalog, two entries, end of archive) and its summary.
    static func smallPack(in directory: TemporaryDirectory, name: String = "small.tar.zst") throws -> (path: String, summary: (bytes: Int64, entries: [RawPack.WrittenEntry])) {
        let path = directory.file(name)
        let summary = try RawPack.write(
            [
                ("catalog.json", Array(#"{"pack":"small","exercises":[]}"#.utf8)),
                ("a.bin", Array(repeating: 7, count: 5000)),
                ("b.bin", (0..<3000).map { UInt8($0 % 251) })
            ], to: path)
        return (path, summary)
    }

    /// Extends the file at `path` by `bytes` zero bytes without writing them (a sparse tail).
    static func appendSparseJunk(_ path: String, bytes: Int64) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size + UInt64(bytes))
    }

    static func randomBytes(_ count: Int, alphabetMask: UInt8 = 0xFF) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }
        if alphabetMask != 0xFF { for index in bytes.indices { bytes[index] &= alphabetMask } }
        return bytes
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// A zstd frame of raw blocks written by hand: 4-byte content size, no checksum, window 2 MiB.
    /// Block number `reservedBlock`, if given, has the reserved block type 3.
    static func rawBlockFrame(blocks: Int, blockSize: Int, reservedBlock: Int? = nil) -> [UInt8] {
        let content = blocks * blockSize
        var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x80, 0x58]
        frame += (0..<4).map { UInt8(truncatingIfNeeded: content >> (8 * $0)) }
        for block in 0..<blocks {
            var fields = UInt32(blockSize) << 3 | (block == blocks - 1 ? 1 : 0)
            if block == reservedBlock { fields |= 3 << 1 }
            frame += [UInt8(truncatingIfNeeded: fields), UInt8(truncatingIfNeeded: fields >> 8), UInt8(truncatingIfNeeded: fields >> 16)]
            frame += [UInt8](repeating: UInt8(block % 200), count: blockSize)
        }
        return frame
    }

    /// Runs `gifpack` with at most `addressSpace` bytes of virtual memory (`prlimit --as`), stopped
    /// after 60 s (a process starved of memory may hang instead of failing).
    static func gifpackLimited(_ arguments: [String], addressSpace: Int) async throws -> ProcessResult {
        try await run("/usr/bin/timeout", ["60", "/usr/bin/prlimit", "--as=\(addressSpace)", "--", productPath("gifpack")] + arguments)
    }

    @Test(.computes) func junkAfterTheFramesIsRefusedAtItsOffsetWithoutReadingIt() throws {
        let directory = try TemporaryDirectory()
        let (pack, summary) = try Self.smallPack(in: directory)
        let good = try ZstdFrames.frameExtents(in: pack)
        #expect(good.count == summary.entries.count + 1)
        // 64 MiB of junk: zeros, then again after bytes that look random.
        let noisy = directory.file("noisy.tar.zst")
        try Self.write(try fileBytes(pack) + [0xFF] + Self.randomBytes(4096), to: noisy)
        try Self.appendSparseJunk(noisy, bytes: 64 << 20)
        try Self.appendSparseJunk(pack, bytes: 64 << 20)
        #expect(throws: PackReadError.notZstd(offset: summary.bytes)) { try ZstdFrames.frameExtents(in: pack) }
        #expect(throws: PackReadError.notZstd(offset: summary.bytes)) { try ZstdFrames.frameExtents(in: noisy) }
        #expect(PackReadError.notZstd(offset: summary.bytes).description == "no zstd frame at offset \(summary.bytes)")
    }

    /// The memory measurement: with 300 MiB of junk after the frames, `verify`, `inspect` and `cat`
    /// on the pack run in a 256 MB address space (the debug binary needs about 180 MB to start) and
    /// refuse the junk at its offset. A scanner that reads the junk needs more than the junk.
    @Test(.disabled(if: underAddressSanitizer, "AddressSanitizer maps its shadow memory first: no 256 MB address space holds it"))
    func verifyInspectAndCatRefuse300MBOfJunkWithin256MBOfAddressSpace() async throws {
        let directory = try TemporaryDirectory()
        let (pack, summary) = try Self.smallPack(in: directory)
        try Self.appendSparseJunk(pack, bytes: 300 << 20)
        let limit = 256_000_000
        for arguments in [["verify", pack], ["inspect", pack], ["cat", pack, "0001"]] {
            let result = try await Self.gifpackLimited(arguments, addressSpace: limit)
            #expect(result.status == 1, "\(arguments[0]): status \(result.status): \(result.error.suffix(400))")
            #expect(
                (result.output + result.error).contains("no zstd frame at offset \(summary.bytes)"),
                "\(arguments[0]): \(result.output)\(result.error.suffix(400))")
        }
        // The same pack without the junk passes verify under the same limit: the limit is not what refuses.
        let (clean, _) = try Self.smallPack(in: directory, name: "clean.tar.zst")
        let result = try await Self.gifpackLimited(["verify", clean], addressSpace: limit)
        #expect(result.status == 1 || result.status == 0, "\(result.error)")
        #expect(!(result.output + result.error).contains("no zstd frame"))
    }

    @Test(.computes) func framesLargerThanTheWindowAreWalkedBlockByBlock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("big.tar.zst")
        let summary = try RawPack.write(
            [
                ("catalog.json", Array("{}".utf8)),
                ("random.bin", Self.randomBytes(3 << 20)),  // raw blocks
                ("nibbles.bin", Self.randomBytes(5 << 20, alphabetMask: 0x0F)),  // compressed blocks
                ("small.bin", Array(repeating: 1, count: 100))
            ], to: path)
        #expect(summary.entries[1].frameLength > 1 << 20 && summary.entries[2].frameLength > 1 << 20)

        let expected = summary.entries.map {
            ZstdFrameExtent(
                offset: $0.frameOffset, compressedLength: $0.frameLength,
                contentSize: TarHeader.entryLength(dataSize: $0.size))
        }
        for windowSize in [ZstdFrames.windowSize, 4096, 32] {
            let frames = try ZstdFrames.frameExtents(in: path, windowSize: windowSize)
            #expect(Array(frames.dropLast()) == expected, "window \(windowSize)")
            #expect(frames.last?.contentSize == 1024 && frames.last.map { $0.offset + $0.compressedLength } == summary.bytes)
        }

        // Cut inside the big frame (in its blocks, then in its checksum): truncated at the frame's offset.
        let bytes = try fileBytes(path)
        let big = summary.entries[2]
        for cut in [big.frameOffset + big.frameLength / 2, big.frameOffset + big.frameLength - 2] {
            let truncated = directory.file("cut-\(cut).tar.zst")
            try Self.write(Array(bytes[0..<Int(cut)]), to: truncated)
            for windowSize in [ZstdFrames.windowSize, 32] {
                #expect(throws: PackReadError.truncatedFrame(offset: big.frameOffset)) {
                    try ZstdFrames.frameExtents(in: truncated, windowSize: windowSize)
                }
            }
        }
    }

    @Test func handMadeFramesWalkAsZstdReadsThem() async throws {
        let directory = try TemporaryDirectory()
        // 20 raw blocks of 100,000 bytes: a 2 MB frame stock zstd accepts.
        let frame = Self.rawBlockFrame(blocks: 20, blockSize: 100_000)
        let valid = directory.file("raw.zst")
        try Self.write(frame + frame, to: valid)
        #expect(try await run("/usr/bin/zstd", ["-t", "-q", valid]).status == 0)
        let expected = [
            ZstdFrameExtent(offset: 0, compressedLength: Int64(frame.count), contentSize: 2_000_000),
            ZstdFrameExtent(offset: Int64(frame.count), compressedLength: Int64(frame.count), contentSize: 2_000_000)
        ]
        #expect(try ZstdFrames.frameExtents(in: valid) == expected)
        #expect(try ZstdFrames.frameExtents(in: valid, windowSize: 32) == expected)

        // A reserved block type deep inside a frame larger than the window.
        let reserved = directory.file("reserved.zst")
        try Self.write(frame + Self.rawBlockFrame(blocks: 20, blockSize: 100_000, reservedBlock: 15), to: reserved)
        let blockOffset = Int64(frame.count) + 10 + 15 * 100_003
        for windowSize in [ZstdFrames.windowSize, 32] {
            #expect(
                throws: PackReadError.corruptFrame(
                    offset: Int64(frame.count),
                    reason: "reserved block type in the block header at offset \(blockOffset)")
            ) {
                try ZstdFrames.frameExtents(in: reserved, windowSize: windowSize)
            }
        }

        // A skippable frame larger than the window, then a frame.
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18] + [0x00, 0x00, 0x20, 0x00] + [UInt8](repeating: 9, count: 2 << 20)
        let withSkippable = directory.file("skippable.zst")
        try Self.write(skippable + frame, to: withSkippable)
        let walked = try ZstdFrames.frameExtents(in: withSkippable, windowSize: 32)
        #expect(walked == (try ZstdFrames.frameExtents(in: withSkippable)))
        #expect(walked.map(\.compressedLength) == [Int64(skippable.count), Int64(frame.count)])

        // A zstd magic and header followed by megabytes of zeros (empty raw blocks, none the last):
        // walked in bounded memory to the end of the file, where the frame is truncated.
        let lure = directory.file("lure.zst")
        try Self.write(frame + [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00], to: lure)
        try Self.appendSparseJunk(lure, bytes: 3 << 20)
        for windowSize in [ZstdFrames.windowSize, 32] {
            #expect(throws: PackReadError.truncatedFrame(offset: Int64(frame.count))) {
                try ZstdFrames.frameExtents(in: lure, windowSize: windowSize)
            }
        }
    }

    /// A frame header may declare up to 2^64 - 3 content bytes: more than `Int64.max` is "no
    /// usable content size", never a trap (it was converted with `Int64(_:)`).
    @Test func aContentSizeBeyondInt64IsRefusedWithoutACrash() async throws {
        let directory = try TemporaryDirectory()
        let (pack, _) = try Self.smallPack(in: directory)
        // Magic, descriptor (8-byte content size), window 1 KiB, content size 2^63, one empty last raw block.
        let huge: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x00] + [0, 0, 0, 0, 0, 0, 0, 0x80] + [0x01, 0x00, 0x00]
        let hostile = directory.file("huge.tar.zst")
        try Self.write(huge + (try fileBytes(pack)), to: hostile)
        let verified = try await run(productPath("gifpack"), ["verify", hostile])
        #expect(verified.status == 1, "status \(verified.status): \(verified.error.suffix(300))")
        #expect(verified.output.contains("frame@0: bad-frame: the frame declares no usable content size"), "\(verified.output)")
        let frames = try ZstdFrames.frameExtents(in: hostile)
        #expect(frames.first == ZstdFrameExtent(offset: 0, compressedLength: 17, contentSize: nil))
    }
}

/// minisign files as other tools and editors write them (CRLF, with or without a final line
/// ending), and trusted keys that share a key id.
@Suite("Reader attacks: minisign files and key ids", .timeLimit(.minutes(5)))
struct MinisignReadingTests {
    /// `text` with every LF made CRLF.
    static func crlf(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: "\r\n") }

    @Test func crlfAndMissingFinalNewlinesReadWhereStockMinisignReadsThem() async throws {
        let workspace = try TemporaryDirectory()
        let secret = MinisignSecretKey.generate()
        let keyPath = try workspace.write(secret.fileText, to: "gifpack.key")
        let message = Array("{\"packs\":[]}\r\n".utf8) + (0..<3000).map { UInt8($0 % 251) }
        let messagePath = workspace.file("index.json")
        try Data(message).write(to: URL(fileURLWithPath: messagePath))
        // Signed by stock minisign with our secret key file, so the signature file is minisign's own.
        let signed = try await run("/usr/bin/minisign", ["-S", "-s", keyPath, "-m", messagePath, "-t", "timestamp:1700000000\tfile:index.json"])
        #expect(signed.status == 0, "\(signed.error)")
        let signature = try String(contentsOfFile: messagePath + ".minisig", encoding: .utf8)
        let publicKey = secret.publicKey.fileText
        #expect(signature.hasSuffix("\n") && publicKey.hasSuffix("\n"))
        // Without the final LF (dropLast would not do: after crlf, "\r\n" is one Character).
        let bareSignature = String(signature.dropLast()), bareKey = String(publicKey.dropLast())

        let accepted: [(String, String, String)] = [
            ("CRLF", Self.crlf(signature), Self.crlf(publicKey)),
            ("CRLF, no final line ending", Self.crlf(bareSignature), Self.crlf(bareKey)),
            ("CRLF, a final CR alone", Self.crlf(bareSignature) + "\r", Self.crlf(bareKey) + "\r"),
            ("LF, no final line ending", bareSignature, bareKey),
            ("CRLF, then an empty line", Self.crlf(signature) + "\r\n", Self.crlf(publicKey) + "\r\n")
        ]
        for (name, signatureText, keyText) in accepted {
            let signaturePath = try workspace.write(signatureText, to: "variant.minisig")
            let keyFile = try workspace.write(keyText, to: "variant.pub")
            let stock = try await run("/usr/bin/minisign", ["-V", "-p", keyFile, "-x", signaturePath, "-m", messagePath])
            #expect(stock.status == 0, "stock minisign, \(name): \(stock.error)")
            do {
                let parsed = try MinisignSignature(text: signatureText)
                #expect(parsed.trustedComment == "timestamp:1700000000\tfile:index.json", "\(name)")
                let key = try MinisignPublicKey(text: keyText)
                #expect(key == secret.publicKey, "\(name)")
                try key.verify(parsed, of: message)
                // Read from the files as a client reads trusted keys.
                let trust = try IndexTrust(keyFiles: [keyFile])
                #expect(trust.keys == [secret.publicKey], "\(name)")
            } catch {
                Issue.record("\(name): \(error)")
            }
        }
        // Bare CRs do not end lines for minisign's signature reader: refused by both.
        let crOnly = signature.replacingOccurrences(of: "\n", with: "\r")
        let crPath = try workspace.write(crOnly, to: "cr.minisig")
        let keyFile = try workspace.write(publicKey, to: "plain.pub")
        #expect(try await run("/usr/bin/minisign", ["-V", "-p", keyFile, "-x", crPath, "-m", messagePath]).status != 0)
        #expect(throws: MinisignError.self) { try MinisignSignature(text: crOnly) }
        // A CRLF secret key file reads too (gifpack build signs with it).
        #expect(try MinisignSecretKey(text: Self.crlf(secret.fileText)).publicKey == secret.publicKey)
    }

    @Test(.computes) func everyTrustedKeyWithTheSignaturesKeyIDIsTriedInEitherOrder() throws {
        let signer = MinisignSecretKey.generate()
        // Another key that claims the signer's key id (anyone can choose a key id).
        let impostor = MinisignPublicKey(keyID: signer.keyID, rawKey: MinisignSecretKey.generate().publicKey.rawKey)
        let message = Array("{\"packs\":[]}".utf8)
        let signature = try signer.sign(message, trustedComment: "timestamp:1700000000\tfile:index.json\thashed")
        for keys in [[impostor, signer.publicKey], [signer.publicKey, impostor]] {
            #expect(try MinisignPublicKey.verify(signature, of: message, trusting: keys) == signer.publicKey)
        }
        #expect { _ = try MinisignPublicKey.verify(signature, of: message, trusting: [impostor]) } throws: { error in
            guard case MinisignError.badSignature = error else { return false }
            return true
        }
        // A changed message fails with every order, as a bad signature.
        for keys in [[impostor, signer.publicKey], [signer.publicKey, impostor]] {
            #expect { _ = try MinisignPublicKey.verify(signature, of: message + [0x20], trusting: keys) } throws: { error in
                guard case MinisignError.badSignature = error else { return false }
                return true
            }
        }
    }

    /// The same through the command line on a real signed build: a CRLF signature and key file,
    /// and `--trusted-key` with two keys of one id in both orders.
    @Test func verifyAcceptsCRLFFilesAndTriesEveryKeyOfTheID() async throws {
        let signed = try SignedDist()
        defer { signed.server.stop() }
        try await signed.build()
        let gifpack = productPath("gifpack")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_NOW"] = String(Int(trustT0.timeIntervalSince1970) + 60)
        let impostor = MinisignPublicKey(keyID: signed.key.secret.keyID, rawKey: MinisignSecretKey.generate().publicKey.rawKey)
        let impostorPath = try signed.workspace.write(impostor.fileText, to: "keys/impostor.pub")

        for keys in [[impostorPath, signed.key.publicPath], [signed.key.publicPath, impostorPath]] {
            let result = try await run(
                gifpack, ["verify", signed.dist] + keys.flatMap { ["--trusted-key", $0] },
                environment: environment)
            #expect(result.status == 0, "\(keys): \(result.output)\(result.error)")
        }
        let alone = try await run(gifpack, ["verify", signed.dist, "--trusted-key", impostorPath], environment: environment)
        #expect(alone.status == 1 && alone.error.contains("bad-signature"), "\(alone.error)")

        // Both files rewritten with CRLF line endings, as a Windows editor or checkout leaves them.
        let signaturePath = signed.indexPath + ".minisig"
        let signature = try String(contentsOfFile: signaturePath, encoding: .utf8)
        try MinisignReadingTests.crlf(signature).write(toFile: signaturePath, atomically: true, encoding: .utf8)
        let key = try String(contentsOfFile: signed.key.publicPath, encoding: .utf8)
        let crlfKey = try signed.workspace.write(MinisignReadingTests.crlf(key), to: "keys/crlf.pub")
        let result = try await run(gifpack, ["verify", signed.dist, "--trusted-key", crlfKey], environment: environment)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        let stock = try await run("/usr/bin/minisign", ["-V", "-p", crlfKey, "-m", signed.indexPath])
        #expect(stock.status == 0, "\(stock.error)")
    }
}

/// A pack followed by many tiny valid frames (9 bytes each): without an index, the scanner's frame
/// list is bounded by what a catalog within the limits can list, not by the file.
@Suite("Reader attacks: a file of tiny frames", .timeLimit(.minutes(5)))
struct TinyFrameTests {
    /// The smallest zstd frame: single segment, content size 0, one empty last raw block.
    static let tinyFrame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x00, 0x01, 0x00, 0x00]

    @Test func tinyFramesBeyondWhatACatalogCanListAreRefused() async throws {
        let directory = try TemporaryDirectory()
        let (pack, summary) = try ReaderAttackTests.smallPack(in: directory)
        var limits = PackLimits.standard
        limits.maxCatalogBytes = 64 << 10  // at most 1024 GIFs, 1026 frames
        #expect(PackFileScan.maxFrames(limits) == 1026)
        #expect(PackFileScan.maxFrames(.standard) == (64 << 20) / 64 + 2)
        let bytes = try fileBytes(pack)
        let flooded = directory.file("flooded.tar.zst")
        try ReaderAttackTests.write(bytes + Array([[UInt8]](repeating: Self.tinyFrame, count: 2000).joined()), to: flooded)
        #expect(try await run("/usr/bin/zstd", ["-t", "-q", flooded]).status == 0)  // every byte is a valid zstd frame
        // The frame after the 1026th is where the list stops.
        let frames = summary.entries.count + 1
        let stop = summary.bytes + Int64((1026 - frames) * Self.tinyFrame.count)
        #expect(throws: PackReadError.badFrameHeader(offset: stop, reason: "more than 1026 frames, more than the reader allows")) {
            try ZstdFrames.frameExtents(in: flooded, maxFrames: 1026)
        }
        #expect { _ = try PackFileScan(path: flooded, limits: limits) } throws: { error in
            "\(error)".contains("zstd frame at offset \(stop): more than 1026 frames")
        }
        // Within the bound the frames are listed as before.
        #expect(try PackFileScan(path: flooded).frames.count == frames + 2000)
        let report = PackVerifier.verifyPack(flooded, limits: limits)
        #expect(report.problems.count == 1 && report.frames == 0, "\(report.problems.prefix(3))")
    }

    /// With the index (install, `verify DIR`) the frame list is bounded by what the index describes:
    /// a pack followed by thousands of tiny frames is refused at the frame after one unlisted frame.
    @Test func tinyFramesAfterAnIndexedPackAreRefusedAtTheIndexedCountPlusOne() async throws {
        let built = try await ClientBuiltDist.make(count: 4)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let flooded = built.workspace.file("flooded.tar.zst")
        let bytes = try fileBytes("\(built.dist)/\(pack.file)")
        try ReaderAttackTests.write(bytes + Array([[UInt8]](repeating: Self.tinyFrame, count: 5000).joined()), to: flooded)
        let bound = PackChecks.maxFrames(pack, .standard)
        #expect(bound == pack.entryCount + 2)
        var problems: [PackRejection] = []
        _ = try PackChecks.structure(path: flooded, pack: pack, limits: .standard) { problems.append($0) }
        #expect(problems.contains { $0.detail.contains("more than \(bound) frames") }, "\(problems.prefix(3))")
        // The honest pack is listed whole, its frames exactly what the index describes.
        var honest: [PackRejection] = []
        let opened = try PackChecks.structure(path: "\(built.dist)/\(pack.file)", pack: pack, limits: .standard) { honest.append($0) }
        #expect(honest.isEmpty && opened?.frames.count == pack.entryCount + 1, "\(honest)")
    }
}

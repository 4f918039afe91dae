import ExerciseDBFixture
import Foundation
import GifPack
import GifPackFormat
import GifPackGIF
import Testing
@testable import GifPackTestSupport

@Suite("tar.zst entry frames", .timeLimit(.minutes(3)))
struct PackFrameTests {
    static let mtime: Int64 = 1_700_000_000

    /// Three small synthesized GIFs on disk plus a catalog, named as in a real pack.
    struct Inputs {
        let directory: TemporaryDirectory
        let catalog: [UInt8]
        let gifs: [(name: String, path: String, bytes: [UInt8])]

        init() throws {
            directory = try TemporaryDirectory()
            catalog = Array(#"{"pack":"test","exercises":[]}"#.utf8)
            var gifs: [(String, String, [UInt8])] = []
            for seed in 1...3 {
                let bytes = try GIFSynthesizer.animatedGIF(
                    width: 40, height: 30, frames: seed + 1, colors: 4,
                    seed: UInt64(seed))
                let name = "gifs/\(sha256Hex(bytes)).gif"
                let path = directory.file("source-\(seed).gif")
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                gifs.append((name, path, bytes))
            }
            self.gifs = gifs
        }

        /// All entries in pack order.
        var entries: [(name: String, bytes: [UInt8])] {
            [("catalog.json", catalog)] + gifs.map { ($0.name, $0.bytes) }
        }

        /// Assembles a pack, encoding the GIFs from their files.
        func assemble(_ name: String, level: Int32 = 9) throws -> (path: String, summary: PackFileSummary) {
            let path = directory.file(name)
            var assembler = try PackAssembler(path: path, level: level, mtime: PackFrameTests.mtime)
            try assembler.appendEntry(name: "catalog.json", bytes: catalog)
            for gif in gifs { try assembler.appendEntry(name: gif.name, sourcePath: gif.path) }
            return (path, try assembler.finish())
        }

        /// Assembles a pack from precompressed per-GIF frame files, as a builder's cache does.
        func assembleFromFrames(_ name: String, level: Int32 = 9) throws -> (path: String, summary: PackFileSummary) {
            let encoder = TarEntryFrameEncoder(level: level, mtime: PackFrameTests.mtime)
            var frames: [(path: String, length: Int64)] = []
            for (index, gif) in gifs.enumerated() {
                let framePath = directory.file("\(name)-frame-\(index).zst")
                let sink = try FileDescriptorSink(creating: framePath)
                let extent = try encoder.encodeFile(name: gif.name, sourcePath: gif.path, to: sink)
                try sink.syncAndClose()
                #expect(extent.offset == 0)
                frames.append((framePath, extent.uncompressedLength))
            }
            let path = directory.file(name)
            var assembler = try PackAssembler(path: path, level: level, mtime: PackFrameTests.mtime)
            try assembler.appendEntry(name: "catalog.json", bytes: catalog)
            for frame in frames { try assembler.appendFrame(copyingFrom: frame.path, uncompressedLength: frame.length) }
            return (path, try assembler.finish())
        }
    }

    private static func fileBytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func stockTarListsEntriesInOrderWithFixedOwnerAndMode() async throws {
        let inputs = try Inputs()
        let (pack, _) = try inputs.assemble("a.tar.zst")
        let listing = try await run("/usr/bin/tar", ["--zstd", "-tvf", pack])
        #expect(listing.status == 0, "\(listing.error)")
        let lines = listing.output.split(separator: "\n")
        #expect(lines.count == inputs.entries.count)
        for (line, entry) in zip(lines, inputs.entries) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            #expect(fields.first == "-rw-r--r--")
            #expect(fields.dropFirst().first == "0/0")
            #expect(fields.dropFirst(2).first.map(String.init) == String(entry.bytes.count))
            #expect(fields.last.map(String.init) == entry.name)
        }
    }

    @Test func stockTarExtractsByteIdenticalFilesAndZstdAcceptsThePack() async throws {
        let inputs = try Inputs()
        let (pack, summary) = try inputs.assemble("a.tar.zst")
        let target = inputs.directory.file("extracted")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let extraction = try await run("/usr/bin/tar", ["--zstd", "-xf", pack, "-C", target])
        #expect(extraction.status == 0, "\(extraction.error)")
        for entry in inputs.entries {
            #expect(try Self.fileBytes("\(target)/\(entry.name)") == entry.bytes, "\(entry.name)")
        }
        let test = try await run("/usr/bin/zstd", ["-t", "-q", pack])
        #expect(test.status == 0, "\(test.error)")
        #expect(summary.bytes == Int64(try Self.fileBytes(pack).count))
        #expect(summary.sha256 == sha256Hex(try Self.fileBytes(pack)))
        let tarSize = inputs.entries.reduce(Int64(1024)) { $0 + TarHeader.entryLength(dataSize: Int64($1.bytes.count)) }
        #expect(summary.uncompressedBytes == tarSize)
    }

    @Test(.computes) func eachEntryFrameReadsBackAlone() throws {
        let inputs = try Inputs()
        let (pack, summary) = try inputs.assemble("a.tar.zst")
        let reader = try PackFrameReader(path: pack)
        #expect(summary.entries.map(\.name) == inputs.entries.map(\.name))
        for (packed, entry) in zip(summary.entries, inputs.entries) {
            #expect(packed.size == Int64(entry.bytes.count))
            let (header, data) = try reader.readEntry(
                frameOffset: packed.frameOffset, frameLength: packed.frameLength,
                maxSize: packed.size)
            #expect(data == entry.bytes)
            #expect(
                header
                    == TarHeader(
                        name: entry.name, size: Int64(entry.bytes.count), mode: 0o644,
                        mtime: Self.mtime, typeflag: UInt8(ascii: "0"), uid: 0, gid: 0, linkName: ""))
            var streamed: [UInt8] = []
            var chunks = 0
            try reader.streamEntry(
                frameOffset: packed.frameOffset, frameLength: packed.frameLength,
                maxSize: packed.size
            ) { chunk in
                streamed.append(contentsOf: chunk)
                chunks += 1
            }
            #expect(streamed == entry.bytes)
            #expect(chunks >= 1)
        }
    }

    @Test(.computes) func assemblyIsDeterministicWhetherFramesAreEncodedOrCopied() throws {
        let inputs = try Inputs()
        let first = try inputs.assemble("a.tar.zst")
        let second = try inputs.assemble("b.tar.zst")
        let fromFrames = try inputs.assembleFromFrames("c.tar.zst")
        #expect(first.summary.sha256 == second.summary.sha256)
        #expect(first.summary == fromFrames.summary)
        #expect(try Self.fileBytes(first.path) == (try Self.fileBytes(fromFrames.path)))
        let otherLevel = try inputs.assemble("d.tar.zst", level: 3)
        #expect(otherLevel.summary.sha256 != first.summary.sha256)
    }

    @Test(.computes) func frameWalkFindsOneFramePerEntryPlusTheEnd() throws {
        let inputs = try Inputs()
        let (pack, summary) = try inputs.assemble("a.tar.zst")
        let frames = try ZstdFrames.frameExtents(in: pack)
        #expect(frames.count == summary.entries.count + 1)
        for (frame, packed) in zip(frames, summary.entries) {
            #expect(frame.offset == packed.frameOffset)
            #expect(frame.compressedLength == packed.frameLength)
            #expect(frame.contentSize == TarHeader.entryLength(dataSize: packed.size))
        }
        let end = try #require(frames.last)
        #expect(end.contentSize == 1024)
        #expect(end.offset + end.compressedLength == summary.bytes)

        let garbage = inputs.directory.file("garbage.zst")
        try Data(try Self.fileBytes(pack) + Array("not zstd".utf8)).write(to: URL(fileURLWithPath: garbage))
        #expect(throws: PackReadError.notZstd(offset: summary.bytes)) { try ZstdFrames.frameExtents(in: garbage) }
    }

    @Test(.computes) func decompressionBombsAreRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("bomb.tar.zst")
        var assembler = try PackAssembler(path: path, level: 19, mtime: 0)
        // 16 MiB of zeros compress to well under 1 KiB.
        let bomb = try assembler.appendEntry(name: "bomb.bin", bytes: [UInt8](repeating: 0, count: 16 << 20))
        _ = try assembler.finish()
        #expect(bomb.frameLength < 2048)
        let reader = try PackFrameReader(path: path)
        #expect(throws: PackReadError.frameTooLarge(offset: 0, limit: TarHeader.entryLength(dataSize: 1 << 20))) {
            try reader.readEntry(frameOffset: bomb.frameOffset, frameLength: bomb.frameLength, maxSize: 1 << 20)
        }
        // Even a limit just one byte short is refused.
        #expect(throws: PackReadError.self) {
            try reader.readEntry(frameOffset: bomb.frameOffset, frameLength: bomb.frameLength, maxSize: (16 << 20) - 1)
        }
    }

    @Test(.computes) func damagedOrMisaddressedFramesAreRefused() throws {
        let inputs = try Inputs()
        let (pack, summary) = try inputs.assemble("a.tar.zst")
        let entry = summary.entries[1]
        let reader = try PackFrameReader(path: pack)
        #expect(throws: PackReadError.truncatedFrame(offset: entry.frameOffset)) {
            try reader.readEntry(frameOffset: entry.frameOffset, frameLength: entry.frameLength - 1, maxSize: entry.size)
        }
        #expect(throws: PackReadError.trailingData(offset: entry.frameOffset, bytes: 7)) {
            try reader.readEntry(frameOffset: entry.frameOffset, frameLength: entry.frameLength + 7, maxSize: entry.size)
        }
        #expect(throws: PackReadError.notZstd(offset: entry.frameOffset + 1)) {
            try reader.readEntry(
                frameOffset: entry.frameOffset + 1, frameLength: entry.frameLength - 1,
                maxSize: entry.size)
        }

        var bytes = try Self.fileBytes(pack)
        let checksumOffset = Int(entry.frameOffset + entry.frameLength) - 2  // inside the xxHash64 checksum
        bytes[checksumOffset] ^= 0xFF
        let damaged = inputs.directory.file("damaged.tar.zst")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        #expect(throws: PackReadError.checksumMismatch(offset: entry.frameOffset)) {
            try PackFrameReader(path: damaged).readEntry(
                frameOffset: entry.frameOffset,
                frameLength: entry.frameLength, maxSize: entry.size)
        }
    }

    /// The reader reads an entry's frame whole before the pure-Swift decoder decodes it: a range
    /// longer than any frame of at most `512 + maxSize + 511` content bytes can be (the content
    /// stored raw, with its headers) is refused before it is read, and a skippable frame is no entry.
    @Test(.computes) func frameRangesNoFrameOfTheirSizeCanFillAreRefusedUnread() throws {
        let inputs = try Inputs()
        let (pack, summary) = try inputs.assemble("a.tar.zst")
        let entry = summary.entries[1]
        let reader = try PackFrameReader(path: pack)
        let limit = TarHeader.entryLength(dataSize: entry.size)
        let longest = limit + limit / 4096 + 4096
        #expect(
            throws: PackReadError.corruptFrame(
                offset: entry.frameOffset,
                reason: "a frame of \(longest + 1) bytes is longer "
                    + "than any frame of at most \(limit) content bytes (\(longest))")
        ) {
            try reader.readEntry(frameOffset: entry.frameOffset, frameLength: longest + 1, maxSize: entry.size)
        }
        // Up to the bound, the range is read and what follows the frame is trailing data.
        let spare = min(longest, summary.bytes - entry.frameOffset) - entry.frameLength
        #expect(throws: PackReadError.trailingData(offset: entry.frameOffset, bytes: spare)) {
            try reader.readEntry(frameOffset: entry.frameOffset, frameLength: entry.frameLength + spare, maxSize: entry.size)
        }
        #expect(
            try reader.readEntry(frameOffset: entry.frameOffset, frameLength: entry.frameLength, maxSize: entry.size).data
                == inputs.gifs[0].bytes)
        #expect(try reader.readBytes(at: entry.frameOffset, count: 4) == [0x28, 0xB5, 0x2F, 0xFD])
        #expect(try reader.readBytes(at: summary.bytes - 2, count: 10).count == 2)

        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4]
        let path = inputs.directory.file("skippable.zst")
        try Data(skippable).write(to: URL(fileURLWithPath: path))
        #expect(throws: PackReadError.notZstd(offset: 0)) {
            try PackFrameReader(path: path).readEntry(frameOffset: 0, frameLength: 12, maxSize: 100)
        }
    }

    @Test(.computes) func invalidNamesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let sink = try FileDescriptorSink(creating: directory.file("x.zst"))
        let encoder = TarEntryFrameEncoder(level: 3, mtime: 0)
        for name in [
            "gifs/übung.gif", "../escape.gif", "gifs/../../x", "/etc/passwd", "", "a//b", "gifs/",
            "tab\tname", String(repeating: "n", count: 100)
        ] {
            #expect(throws: PackWriteError.self, "\(name)") { try encoder.encodeBytes(name: name, bytes: [1], to: sink) }
        }
        #expect(sink.offset == 0)
        let longest = String(repeating: "n", count: 99)
        _ = try encoder.encodeBytes(name: longest, bytes: [1], to: sink)
        #expect(throws: PackWriteError.invalidName("gifs/übung.gif", reason: "not printable ASCII")) {
            try encoder.encodeBytes(name: "gifs/übung.gif", bytes: [], to: sink)
        }
    }

    @Test(.computes) func copiedFramesMustMatchTheirExpectedLength() throws {
        let inputs = try Inputs()
        let framePath = inputs.directory.file("frame.zst")
        let sink = try FileDescriptorSink(creating: framePath)
        let extent = try TarEntryFrameEncoder(level: 3, mtime: 0).encodeBytes(name: "a.bin", bytes: [1, 2, 3], to: sink)
        try sink.syncAndClose()
        #expect(extent.uncompressedLength == 1024)
        var assembler = try PackAssembler(path: inputs.directory.file("p.tar.zst"), level: 3, mtime: 0)
        #expect(throws: PackWriteError.self) { try assembler.appendFrame(copyingFrom: framePath, uncompressedLength: 1536) }
        let catalog = inputs.directory.file("catalog.json")
        try Data(inputs.catalog).write(to: URL(fileURLWithPath: catalog))
        #expect(throws: PackWriteError.self) { try assembler.appendFrame(copyingFrom: catalog, uncompressedLength: 1024) }
        let entry = try assembler.appendFrame(copyingFrom: framePath, uncompressedLength: 1024)
        #expect(entry == PackedEntry(name: "a.bin", size: 3, frameOffset: 0, frameLength: extent.compressedLength))
        _ = try assembler.finish()
    }

    /// A pack's sink flushes the file to disk on another thread as it grows; what it writes and
    /// hashes is what a plain sink writes and hashes.
    @Test(.computes) func flushingBehindWritesTheSameBytesAndFlushesOnTheWay() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(seed: 9)
        let chunk = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let flushing = try FileDescriptorSink(creating: directory.file("behind"), hashing: true, flushingBehind: true)
        let plain = try FileDescriptorSink(creating: directory.file("plain"), hashing: true)
        for _ in 0..<40 {
            try flushing.write(chunk)
            try plain.write(chunk)
        }
        try flushing.syncAndClose()
        try plain.syncAndClose()
        // 40 MiB in steps of 16 MiB: at least one flush, at most two (one at a time, never queued).
        #expect((1...2).contains(flushing.flushesBehind))
        #expect(plain.flushesBehind == 0)
        #expect(try flushing.sha256Hex() == (try plain.sha256Hex()))
        #expect(try Self.fileBytes(directory.file("behind")) == (try Self.fileBytes(directory.file("plain"))))
        #expect(throws: PackWriteError.self) { try flushing.write([1]) }
    }

    /// A pack's sink hashes on another thread, reading back what was written: the digest is the
    /// one of the bytes in the file, whatever the chunk sizes, and a sink given up mid-way ends its
    /// thread.
    @Test(.computes) func hashingBehindGivesTheDigestOfTheFileWritten() throws {
        let directory = try TemporaryDirectory()
        var random = SplitMix64(seed: 21)
        let sizes = [0, 1, 511, 64 << 10, 1 << 20, (1 << 20) + 3, 5 << 20, 17, 3 << 20]
        let behind = try FileDescriptorSink(creating: directory.file("behind"), flushingBehind: true, hashingBehind: true)
        let inline = try FileDescriptorSink(creating: directory.file("inline"), hashing: true)
        for size in sizes {
            let chunk = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            try behind.write(chunk)
            try inline.write(chunk)
        }
        try behind.syncAndClose()
        try inline.syncAndClose()
        let bytes = try Self.fileBytes(directory.file("behind"))
        #expect(bytes.count == sizes.reduce(0, +))
        #expect(try behind.sha256Hex() == sha256Hex(bytes))
        #expect(try behind.sha256Hex() == (try inline.sha256Hex()), "asked twice, the same digest")
        #expect(bytes == (try Self.fileBytes(directory.file("inline"))))

        // Empty, and given up without a digest: neither hangs.
        let empty = try FileDescriptorSink(creating: directory.file("empty"), hashingBehind: true)
        try empty.close()
        #expect(try empty.sha256Hex() == sha256Hex([]))
        do {
            let abandoned = try FileDescriptorSink(creating: directory.file("abandoned"), hashingBehind: true)
            try abandoned.write(Array(repeating: 7, count: 3 << 20))
        }
        let plain = try FileDescriptorSink(creating: directory.file("plain"))
        #expect(throws: PackWriteError.self) { try plain.sha256Hex() }
    }

    @Test func tarHeaderParsingChecksTheChecksum() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("p.tar.zst")
        var assembler = try PackAssembler(path: path, level: 3, mtime: 0)
        try assembler.appendEntry(name: "a.txt", bytes: Array("hello".utf8))
        _ = try assembler.finish()
        let tar = try await run("/usr/bin/zstd", ["-d", "-q", "-c", path])
        var block = Array(tar.output.utf8.prefix(512))
        #expect(try TarHeader.parse(block).name == "a.txt")
        block[0] = UInt8(ascii: "b")
        #expect(throws: PackReadError.self) { try TarHeader.parse(block) }
        #expect(throws: PackReadError.self) { try TarHeader.parse([UInt8](repeating: 0, count: 512)) }
    }
}

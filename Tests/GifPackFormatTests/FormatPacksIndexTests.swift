import Foundation
@testable import GifPackFormat
import Testing
@testable import GifPackTestSupport

/// The format's side: index format 1.4, a WebP rendition in `formatPacks[]`
/// beside the GIF packs. An index written by hand (not by this module's writer) is read by every
/// reader path the same way; a `formatPacks[]` entry of a format the reader does not know is left
/// out, not refused; an index without format packs keeps the bytes and version it had.
@Suite("Format 1.4: formatPacks[] read by every reader path", .computes, .timeLimit(.minutes(2)))
struct FormatPacksIndexTests {
    static let gifA = String(repeating: "a", count: 64), gifB = String(repeating: "b", count: 64)
    static let webpC = String(repeating: "c", count: 64), avifD = String(repeating: "d", count: 64)

    /// A 1.4 index as another writer could write it: keys in no particular order, compact in places,
    /// an `avif` pack (a format this reader does not know) sorted before the WebP pack, each with
    /// its own exercise list, so a list given to the wrong pack shows.
    static let handWritten = """
        {"generator": "hand", "formatVersion": "1.4",
         "source": {"kind": "exercisedb-v1", "resolution": 180, "formats": ["gif", "webp", "avif"]},
         "packs": [{"name": "all", "version": 2, "file": "packs/all-v2-01234567.tar.zst", "bytes": 5000, "sha256": "\(gifA)",
                    "entryCount": 3, "uncompressedBytes": 6000, "contentDigest": "\(gifB)",
                    "catalog": {"path": "catalog.json", "size": 10, "frameOffset": 0, "frameLength": 40},
                    "gifs": [{"sha256": "\(gifA)", "location": {"path": "gifs/\(gifA).gif", "size": 1000, "frameOffset": 40, "frameLength": 900}},
                             {"sha256": "\(gifB)", "location": {"path": "gifs/\(gifB).gif", "size": 1000, "frameOffset": 940, "frameLength": 900}}],
                    "exercises": [{"id": "0001", "gif": "\(gifA)"}, {"id": "0002", "gif": "\(gifB)"}, {"id": "0003", "gif": null}]}],
         "formatPacks": [
           {"name": "all.180.avif", "format": "avif", "resolution": 180, "version": 1, "file": "packs/all.180.avif-v1-89abcdef.tar.zst",
            "bytes": 900, "sha256": "\(avifD)", "entryCount": 2, "uncompressedBytes": 2000, "contentDigest": "\(avifD)",
            "catalog": {"path": "catalog.json", "size": 10, "frameOffset": 0, "frameLength": 40},
            "gifs": [{"sha256": "\(avifD)", "format": "avif", "location": {"path": "images/\(avifD).avif", "size": 300, "frameOffset": 40, "frameLength": 200}}],
            "exercises": [{"id": "0001", "gif": "\(avifD)"}]},
           {"name": "all.180.webp", "format": "webp", "resolution": 180, "version": 1, "file": "packs/all.180.webp-v1-fedcba98.tar.zst",
            "bytes": 2000, "sha256": "\(webpC)", "entryCount": 3, "uncompressedBytes": 3000, "contentDigest": "\(webpC)",
            "catalog": {"path": "catalog.json", "size": 10, "frameOffset": 0, "frameLength": 40},
            "gifs": [{"sha256": "\(gifB)", "location": {"path": "gifs/\(gifB).gif", "size": 1000, "frameOffset": 40, "frameLength": 900}},
                     {"sha256": "\(webpC)", "format": "webp", "location": {"path": "images/\(webpC).webp", "size": 400, "frameOffset": 940, "frameLength": 350}}],
            "exercises": [{"id": "0001", "gif": "\(webpC)"}, {"id": "0002", "gif": "\(gifB)"}, {"id": "0003", "gif": null}]}]}
        """

    static func stream(_ bytes: [UInt8], chunk size: Int) throws(IndexError) -> PackIndex {
        var stream = PackIndexStream()
        for start in stride(from: 0, to: bytes.count, by: size) { try stream.feed(Array(bytes[start..<min(bytes.count, start + size)])) }
        return try stream.finish()
    }

    @Test("a hand-written 1.4 index reads the same through the tree, the stream and the head-only decoder, the unknown format left out")
    func aHandWrittenIndexReadsTheSameEverywhere() throws {
        let bytes = Array(Self.handWritten.utf8)
        let whole = try PackIndex.decode(bytes: bytes)
        #expect(whole.formatVersion == .withFormats && whole.formatVersion == FormatVersion(major: 1, minor: 4))
        #expect(whole.source.formats == [.gif, .webp, ImageFormat(rawValue: "avif")])
        let webp = try #require(whole.formatPacks?.first)
        #expect(whole.formatPacks?.map(\.name) == ["all.180.webp"], "the avif pack is left out")
        #expect(webp.format == .webp && webp.resolution == 180 && webp.imageFormat == .webp)
        #expect(webp.exercises.map(\.gif) == [Self.webpC, Self.gifB, nil], "the WebP pack has its own list, not the avif pack's")
        #expect(webp.gifs.map(\.imageFormat) == [.gif, .webp] && webp.gifs.map(\.expectedPath) == ["gifs/\(Self.gifB).gif", "images/\(Self.webpC).webp"])
        #expect(whole.packs[0].format == nil && whole.packs[0].imageFormat == .gif && whole.packs[0].gifs.allSatisfy { $0.format == nil })
        #expect(whole.allPacks.map(\.name) == ["all", "all.180.webp"] && whole.gifPacks.map(\.name) == ["all"])
        #expect(whole.formatPack(.webp, for: whole.packs[0])?.name == "all.180.webp")
        #expect(whole.formatPack(.gif, for: whole.packs[0]) == nil && whole.formatPack(ImageFormat(rawValue: "avif"), for: whole.packs[0]) == nil)
        #expect(whole.pack(named: "all.180.webp") == webp && whole.pack(named: "all.180.avif") == nil)

        for size in [1, 3, 17, 512, bytes.count] {
            #expect(try Self.stream(bytes, chunk: size) == whole, "stream in chunks of \(size)")
        }
        #expect(try PackIndexStream.decode(Data(bytes)) == whole)
        let head = try PackIndex.decode(bytes: bytes, omittingExercises: true)
        #expect(head.formatPacks?.map(\.name) == ["all.180.webp"] && head.formatPacks?[0].exercises.isEmpty == true)

        // Written again by this module's writer: sorted keys, the known parts only, read back equal.
        let written = whole.encodedBytes()
        #expect(try PackIndex.decode(bytes: written) == whole)
        #expect(!String(decoding: written, as: UTF8.self).contains("all.180.avif"), "the avif pack is not written back")
    }

    @Test("a formatPacks[] of unknown formats only reads as an index without format packs")
    func onlyUnknownFormatsLeaveNoFormatPacks() throws {
        let text = Self.handWritten.replacingOccurrences(of: #""format": "webp", "resolution""#, with: #""format": "heic", "resolution""#)
        #expect(text != Self.handWritten)
        let index = try PackIndex.decode(bytes: Array(text.utf8))
        #expect(index.formatPacks == nil && index.allPacks.map(\.name) == ["all"])
        #expect(try Self.stream(Array(text.utf8), chunk: 9) == index)
    }

    @Test("the version follows what the index holds: 1.4 with format packs, 1.3 with renditions, else the 1.2 bytes as before")
    func theVersionFollowsTheContent() throws {
        let index = try PackIndex.decode(bytes: Array(Self.handWritten.utf8))
        let plain = PackIndex(generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: 180), packs: index.packs)
        #expect(plain.formatVersion == .withoutRenditions && plain.formatPacks == nil)
        let renditions = PackIndex(
            generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: 180, resolutions: [180, 360]),
            packs: index.packs)
        #expect(renditions.formatVersion == .withRenditions)
        let formats = PackIndex(
            generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: 180, formats: [.gif, .webp]),
            packs: index.packs, formatPacks: index.formatPacks ?? [])
        #expect(formats.formatVersion == .withFormats && formats.formatVersion == .current)
        // An index without format packs encodes without a trace of them, as before 1.4.
        let text = String(decoding: plain.encodedBytes(), as: UTF8.self)
        #expect(text.contains(#""formatVersion" : "1.2""#) && !text.contains("formatPacks") && !text.contains(#""format""#))
    }

    @Test("catalog.json records a WebP entry's format between durationMilliseconds and frames, canonically, and a GIF's not at all")
    func theCatalogRecordsTheEntrysFormat() throws {
        let source = SourceDescription(kind: "exercisedb-v1", baseURL: nil, resolution: 180)
        let webp = GIFMetadata(
            sha256: Self.webpC, bytes: 400, width: 180, height: 180, frames: 3, durationMilliseconds: 300, loopCount: 0,
            format: .webp)
        let gif = GIFMetadata(sha256: Self.gifB, bytes: 1000, width: 180, height: 180, frames: 3, durationMilliseconds: 300, loopCount: 0)
        let catalog = PackCatalog(
            pack: "all.180.webp", source: source,
            exercises: [
                PackExercise(id: "0001", name: "a", gif: webp, data: .object([:])), PackExercise(id: "0002", name: "b", gif: gif, data: .object([:]))
            ])
        let bytes = try catalog.encoded()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""durationMilliseconds":300,"format":"webp","frames":3"#), "\(text)")
        #expect(text.components(separatedBy: #""format""#).count == 2, "only the WebP entry says its format: \(text)")
        #expect(try PackCatalog.decode(from: bytes) == catalog)
        #expect(try CanonicalJSON.encode(JSONParser.parse(bytes)) + [0x0A] == bytes, "the catalog stays canonical JSON")
    }
}

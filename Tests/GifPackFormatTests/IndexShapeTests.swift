import Foundation
@testable import GifPackFormat
@testable import GifPackJSON
import Testing
@testable import GifPackTestSupport

/// One source for the index's shape. `index.json` is written by ``IndentedJSONEncoder``
/// over the models' own `Encodable` conformances, whose `CodingKeys` the reader decodes with; these
/// tests hold the two properties that rests on: every model declares its keys in the order
/// the form writes them, and the streamed bytes are `JSONEncoder`'s (sorted keys, pretty printed,
/// unescaped slashes) for an index with every optional part present and absent.
@Suite("Index shape: one definition for writer and reader", .timeLimit(.minutes(2)))
struct IndexShapeTests {
    static func bytesSorted(_ keys: [String]) -> Bool {
        zip(keys, keys.dropFirst()).allSatisfy { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    @Test("every model of the index declares its CodingKeys in the order index.json writes them")
    func everyModelsKeysAreSorted() async throws {
        let tables: [(String, [String])] = [
            ("PackIndex", PackIndex.CodingKeys.allCases.map(\.stringValue)),
            ("SourceDescription", SourceDescription.CodingKeys.allCases.map(\.stringValue)),
            ("PackDescription", PackDescription.CodingKeys.allCases.map(\.stringValue)),
            ("EntryLocation", EntryLocation.CodingKeys.allCases.map(\.stringValue)),
            ("GIFEntry", GIFEntry.CodingKeys.allCases.map(\.stringValue)),
            ("ExerciseRef", ExerciseRef.CodingKeys.allCases.map(\.stringValue)),
            ("GIFPlaceholder", GIFPlaceholder.CodingKeys.allCases.map(\.stringValue)),
            ("PosterPackDescription", PosterPackDescription.CodingKeys.allCases.map(\.stringValue))
        ]
        for (model, keys) in tables {
            #expect(Self.bytesSorted(keys), "\(model).CodingKeys out of order: \(keys)")
        }
    }

    /// An index with every optional part present (sequence, expires, baseURL, posters, placeholders
    /// with and without a loop count, an exercise without a GIF) and one with none of them.
    static func samples() -> [PackIndex] {
        let hashA = String(repeating: "a", count: 64), hashB = String(repeating: "b", count: 64)
        func location(_ path: String, _ offset: Int64) -> EntryLocation {
            EntryLocation(path: path, size: 100 + offset, frameOffset: offset, frameLength: 40)
        }
        let posters = PosterPackDescription(
            name: "all-posters", version: 2, file: "packs/all-posters-v2-01234567.tar.zst", bytes: 900,
            sha256: hashB, entryCount: 3, uncompressedBytes: 4096, contentDigest: hashA, sizes: [200, 80],
            catalog: location("catalog.json", 0),
            posters: [location("posters/80/\(hashA).gif", 100), location("posters/200/\(hashA).gif", 200)])
        let full = PackDescription(
            name: "all", version: 7, file: "packs/all-v7-89abcdef.tar.zst", bytes: 123_456_789_012, sha256: hashA, entryCount: 3,
            uncompressedBytes: 9_000_000_000, contentDigest: hashB, catalog: location("catalog.json", 0),
            gifs: [
                GIFEntry(
                    sha256: hashB, location: location("gifs/\(hashB).gif", 40),
                    placeholder: GIFPlaceholder(
                        blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", averageColor: "#a0b1c2", width: 180,
                        height: 180, frames: 12, durationMilliseconds: 1200, loopCount: 0)),
                GIFEntry(
                    sha256: hashA, location: location("gifs/\(hashA).gif", 80),
                    placeholder: GIFPlaceholder(
                        blurHash: "L00000fQfQfQfQfQfQfQfQfQfQfQ", averageColor: "#000000", width: 1,
                        height: 2, frames: 1, durationMilliseconds: 0, loopCount: nil))
            ],
            exercises: [ExerciseRef(id: "0002", gif: hashA), ExerciseRef(id: "0001/\u{1F}\"é", gif: nil), ExerciseRef(id: "0003", gif: hashB)],
            posters: posters)
        let bare = PackDescription(
            name: "empty", version: 1, file: "packs/empty-v1-00000000.tar.zst", bytes: 1, sha256: hashB,
            entryCount: 1, uncompressedBytes: 1024, contentDigest: hashA, catalog: location("catalog.json", 0),
            gifs: [], exercises: [])
        // Format 1.4: a WebP rendition listing a WebP and, for an exercise whose WebP did not beat its GIF, the GIF.
        var webp = PackDescription(
            name: "all.360.webp", version: 3, file: "packs/all.360.webp-v3-0badf00d.tar.zst", bytes: 9_000, sha256: hashB, entryCount: 3,
            uncompressedBytes: 12_000, contentDigest: hashA, catalog: location("catalog.json", 0),
            gifs: [
                GIFEntry(sha256: hashA, location: location("images/\(hashA).webp", 40), format: .webp),
                GIFEntry(sha256: hashB, location: location("gifs/\(hashB).gif", 80))
            ],
            exercises: [ExerciseRef(id: "0001", gif: hashA), ExerciseRef(id: "0002", gif: hashB), ExerciseRef(id: "0003", gif: nil)])
        webp.resolution = 360
        webp.format = .webp
        var first = full
        first.resolution = 360
        return [
            PackIndex(
                generator: "gifpack \"t\"/1\n", source: SourceDescription(kind: "exercisedb-v1", baseURL: "http://h/api/v1", resolution: 360),
                packs: [full, bare], sequence: 42, expires: "2030-01-02T03:04:05Z"),
            PackIndex(
                formatVersion: FormatVersion(major: 1, minor: 0), generator: "g",
                source: SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: nil), packs: [bare]),
            PackIndex(
                generator: "g", source: SourceDescription(kind: "exercisedb-v1", baseURL: nil, resolution: 360, formats: [.gif, .webp]),
                packs: [first], formatPacks: [webp], sequence: 1, expires: "2030-01-02T03:04:05Z")
        ]
    }

    @Test("the streamed index is JSONEncoder's sorted, pretty-printed bytes, every optional part present or absent, and reads back")
    func theStreamedIndexIsJSONEncodersBytes() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        for index in Self.samples() {
            let expected = Array(try encoder.encode(index)) + [0x0A]
            let written = index.encodedBytes()
            #expect(written == expected, "\(String(decoding: written, as: UTF8.self))")
            var pieces: [[UInt8]] = []
            index.encode { pieces.append($0) }
            #expect(Array(pieces.joined()) == expected)
            #expect(try PackIndex.decode(bytes: written) == index)
        }
        // What the sample holds, so a sample that lost its optional parts fails here.
        let text = String(decoding: Self.samples()[0].encodedBytes(), as: UTF8.self)
        for part in [
            #""sequence" : 42"#, #""expires" : "2030-01-02T03:04:05Z""#, #""baseURL" : "http://h/api/v1""#,
            #""gif" : null"#, #""loopCount" : 0"#, #""sizes" : ["#, #""gifs" : [\#n\#n      ]"#, #""0001/\u001f\"é""#
        ] {
            #expect(text.contains(part), "\(part) missing from \(text)")
        }
        // Format 1.4's parts in the third; none of them (nor its version) in the indexes without format packs.
        let withFormats = String(decoding: Self.samples()[2].encodedBytes(), as: UTF8.self)
        for part in [
            #""formatPacks" : ["#, #""format" : "webp""#, #""formats" : [\#n      "gif",\#n      "webp"\#n    ]"#,
            #""formatVersion" : "1.4""#, #""path" : "images/"#
        ] {
            #expect(withFormats.contains(part), "\(part) missing from \(withFormats)")
        }
        for index in Self.samples().prefix(2) {
            let plain = String(decoding: index.encodedBytes(), as: UTF8.self)
            #expect(!plain.contains("format\"") && !plain.contains("formats") && !plain.contains("formatPacks"), "\(plain)")
        }
        #expect(Self.samples()[0].formatVersion == .withoutRenditions)
    }

    /// A model whose keys are declared out of order, as a model added carelessly would be.
    struct Unsorted: Encodable {
        enum CodingKeys: String, CodingKey { case b, a }
        var b = 1
        var a = [Nested()]
        struct Nested: Encodable {
            enum CodingKeys: String, CodingKey { case z, y }
            var z = "z"
            var y = "y"
        }
    }

    @Test("the encoder refuses keys out of order and floats, naming the place, and writes no bytes then")
    func theEncoderRefusesWhatItCannotStream() async throws {
        var emitted = 0
        #expect(throws: IndentedJSONEncoder.Failure(description: #"the top level: key "a" after "b": the keys must come in sorted order (declare CodingKeys so)"#)) {
            try IndentedJSONEncoder.encode(Unsorted()) { emitted += $0.count }
        }
        struct Fine: Encodable { var a = 1; var b = [Unsorted.Nested()] }
        #expect(throws: IndentedJSONEncoder.Failure(description: #"b[0]: key "y" after "z": the keys must come in sorted order (declare CodingKeys so)"#)) {
            try IndentedJSONEncoder.encode(Fine()) { emitted += $0.count }
        }
        struct Floating: Encodable { var a = [1.5] }
        #expect(throws: IndentedJSONEncoder.Failure(description: "a[0]: a floating-point number cannot be written here")) {
            try IndentedJSONEncoder.encode(Floating()) { emitted += $0.count }
        }
        #expect(emitted == 0)
    }

    @Test("empty arrays and objects, nested lists, nil and large integers are written as JSONEncoder writes them")
    func theEncoderWritesJSONEncodersForm() async throws {
        struct Empty: Encodable {}
        struct Sample: Encodable {
            enum CodingKeys: String, CodingKey { case big, empty, lists, none, objects, small, text }
            var big = UInt64.max
            var empty = Empty()
            var lists: [[Int]] = [[], [1, 2], []]
            var none: String? = nil
            var objects = [Empty(), Empty()]
            var small = Int8.min
            var text = "a/b\\c\n\u{7F}ü"
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(big, forKey: .big)
                try container.encode(empty, forKey: .empty)
                try container.encode(lists, forKey: .lists)
                try container.encodeNil(forKey: .none)
                try container.encode(objects, forKey: .objects)
                try container.encode(small, forKey: .small)
                try container.encode(text, forKey: .text)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        for value in [Sample()] {
            #expect(try IndentedJSONEncoder.encode(value) == Array(try encoder.encode(value)) + [0x0A])
        }
        #expect(try IndentedJSONEncoder.encode([Empty()]) == Array(try encoder.encode([Empty()])) + [0x0A])
        #expect(try IndentedJSONEncoder.encode("top") == Array("\"top\"\n".utf8))
    }

    @Test("a long exercise list comes out in pieces of about the chunk size, never held whole")
    func aLongListIsStreamed() async throws {
        let hash = String(repeating: "c", count: 64)
        let exercises = (0..<20_000).map { ExerciseRef(id: String(format: "%05d", $0), gif: $0 % 7 == 0 ? nil : hash) }
        let pack = PackDescription(
            name: "all", version: 1, file: "packs/all-v1-00000000.tar.zst", bytes: 1, sha256: hash, entryCount: 1,
            uncompressedBytes: 1, contentDigest: hash,
            catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 1),
            gifs: [], exercises: exercises)
        let index = PackIndex(generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: nil), packs: [pack])
        var largest = 0, total = 0, count = 0
        try IndentedJSONEncoder.encode(index, chunkSize: 16 * 1024) { piece in
            largest = max(largest, piece.count)
            total += piece.count
            count += 1
        }
        #expect(total == index.encodedBytes().count && total > 1 << 20)
        #expect(count > 60 && largest < 17 * 1024, "\(count) pieces, the largest \(largest) bytes")
    }
}

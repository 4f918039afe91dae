import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport

/// `catalog.json` is hashed into every pack's content digest, so its bytes are pinned here: a fixed
/// catalog must give exactly these bytes and this SHA-256, whatever Foundation does.
@Suite("Canonical JSON of catalog.json", .computes, .timeLimit(.minutes(3)))
struct CanonicalJSONTests {
    static let data: JSONValue = .object([
        "name": .string("45° side \"bend\"\\ /x\n\u{1}\u{8}\u{C}\u{7F}\t\r"), "id": .string("0001"),
        "ß": .integer(1), "Z": .integer(2), "a-b": .integer(3), "a10": .integer(4), "a9": .integer(5),
        "é": .bool(true), "😀": .bool(false),
        "nums": .array([
            .number(1.5), .number(1e-5), .number(123456789012345678.0), .number(1e20), .number(-0.0),
            .number(0.1), .integer(.min), .integer(9007199254740993), .null
        ]),
        "nested": .object(["url": .string("https://x/y?a=1&b=<2>"), "empty": .object([:]), "list": .array([])])
    ])
    static let gif = GIFMetadata(
        sha256: String(repeating: "ab", count: 32), bytes: 94012, width: 180, height: 180,
        frames: 12, durationMilliseconds: 960, loopCount: 0)
    static let once = GIFMetadata(
        sha256: String(repeating: "0f", count: 32), bytes: 10, width: 1, height: 2, frames: 1,
        durationMilliseconds: 0, loopCount: nil)
    static let source = SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: 180)

    /// The bytes `JSONEncoder` gave for this catalog when packs were first made (checked once
    /// against it, format 1.0), with the format version 1.2 (1.1: signed indexes; 1.2: placeholders); the
    /// canonical writer must keep giving them.
    static let goldenParts: [String] = [
        #"{"exercises":[{"data":{"Z":2,"a-b":3,"a10":4,"a9":5,"id":"0001","name":"45° side \"bend\"\\ /x\n\u0001\b\f"#,
        "\u{7F}",
        #"\t\r","nested":{"empty":{},"list":[],"url":"https://x/y?a=1&b=<2>"},"nums":[1.5,1e-05,1.2345678901234568e+17,1e+20,-0,0.1,-9223372036854775808,9007199254740993,null],"ß":1,"é":true,"😀":false},"#,
        #""gif":{"bytes":94012,"durationMilliseconds":960,"frames":12,"height":180,"loopCount":0,"sha256":"abababababababababababababababababababababababababababababababab","width":180},"id":"0001","name":"45° side \"bend\""},"#,
        #"{"data":{"id":"0002"},"gif":{"bytes":10,"durationMilliseconds":0,"frames":1,"height":2,"sha256":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f","width":1},"id":"0002","name":"once"},"#,
        #"{"data":null,"gif":null,"id":"0003","name":"none"}],"formatVersion":"1.2","pack":"all","source":{"kind":"exercisedb-rapidapi","resolution":180}}"#,
        "\n"
    ]
    static let golden: [UInt8] = Array(goldenParts.joined().utf8)
    static let goldenSHA256 = "1cf50b7ddd88d35cc92d10d6a6bf6f5ecc0256d2b7ce26370734457332815d05"

    @Test func aFixedCatalogGivesExactlyTheGoldenBytes() throws {
        let catalog = PackCatalog(
            pack: "all", source: Self.source,
            exercises: [
                PackExercise(id: "0003", name: "none", gif: nil, data: .null),
                PackExercise(id: "0001", name: "45° side \"bend\"", gif: Self.gif, data: Self.data),
                PackExercise(id: "0002", name: "once", gif: Self.once, data: .object(["id": .string("0002")]))
            ])
        let bytes = try catalog.encoded()
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: Self.golden, as: UTF8.self))
        #expect(bytes == Self.golden)
        #expect(sha256Hex(bytes) == Self.goldenSHA256)
        #expect(try PackCatalog.decode(from: bytes).exercises.map(\.id) == ["0001", "0002", "0003"], "the bytes read back")
    }

    @Test func theBuildersStreamedCatalogGivesTheSameGoldenBytes() throws {
        func exercise(_ id: String, _ name: String, _ raw: JSONValue) throws -> Exercise {
            try Exercise(id: id, name: name, bodyParts: [], equipment: [], targets: [], imageURL: "", raw: raw)
        }
        let rows = [
            PackCatalogWriter.Row(exercise: try exercise("0002", "once", .object(["id": .string("0002")])), gif: Self.once),
            PackCatalogWriter.Row(exercise: try exercise("0003", "none", .null), gif: nil),
            PackCatalogWriter.Row(exercise: try exercise("0001", "45° side \"bend\"", Self.data), gif: Self.gif)
        ]
        let workspace = try TemporaryDirectory()
        let written = try PackCatalogWriter.write(pack: "all", source: Self.source, exercises: rows, to: workspace.file("c.json"))
        #expect(try fileBytes(workspace.file("c.json")) == Self.golden)
        #expect(written.sha256 == Self.goldenSHA256)
        #expect(written.bytes == Int64(Self.golden.count))
    }

    @Test func numbersWithoutAJSONFormAreRefusedNotPackedAsSomethingElse() throws {
        #expect(throws: CanonicalJSON.EncodingError.nonFiniteNumber(.infinity)) {
            try RawRecord(.object(["x": .number(.infinity)]))
        }
        #expect(throws: CanonicalJSON.EncodingError.self) { try CanonicalJSON.encode(.array([.number(.nan)])) }
        let catalog = CatalogPager.assemble(
            records: [
                .object([
                    "id": .string("0001"), "name": .string("a"),
                    "weight": .number(.nan)
                ])
            ], pages: 1
        ) {
            RapidAPICatalogSource.normalise($0, base: "https://api.example", resolution: .pixels(180))
        }
        #expect(catalog.exercises.isEmpty)
        #expect(catalog.rejected.map(\.reason) == [.unencodableRecord])
    }
}

import Foundation
import GifPackClient
import GifPackFormat
import GifPackSystem
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures

@Suite("JSON parser: strict, linear, bounded", .computes, .timeLimit(.minutes(3)))
struct JSONParserTests {
    func parse(_ text: String, limits: JSONLimits = .standard) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8), limits: limits)
    }

    func error(_ text: String, limits: JSONLimits = .standard) -> JSONParseError? {
        do { _ = try parse(text, limits: limits) } catch { return error }
        return nil
    }

    func error(bytes: [UInt8]) -> JSONParseError? {
        do { _ = try JSONParser.parse(bytes) } catch { return error }
        return nil
    }

    @Test func numbersAreReadAsJSONDecoderReadsThem() throws {
        let cases = [
            "0", "-0", "1", "-17", "1.0", "-0.0", "1e2", "1E+2", "100e-2", "2.5e1", "1.5", "0.1", "-2.75e-3",
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
            "12345678901234567890123", "1e-400", "4.9e-324", "1.7976931348623157e308"
        ]
        for text in cases {
            let ours = try parse(text)
            let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(ours == foundation, "\(text): \(ours) vs \(foundation)")
        }
        #expect(try parse("1.0") == .integer(1))
        #expect(try parse("1.5") == .number(1.5))
        #expect(try parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(error("1e400")?.kind == .numberOutOfRange)
        #expect(error("-1e400")?.kind == .numberOutOfRange)
        for bad in ["01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-01"] {
            #expect(error(bad) != nil, "\(bad) was accepted")
        }
    }

    @Test func escapesAndSurrogatePairs() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u00e9\u00E9 \u0000""#) == .string("éé \u{0}"))
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\uD83D\uDE00x""#) == .string("😀x"))
        #expect(try parse("\"été 😀\"") == .string("été 😀"))
        #expect(error(#""\ud83d""#)?.kind == .invalidText("\\ud83d is a lone high surrogate"))
        #expect(error(#""\ud83dx""#) != nil)
        #expect(error(#""\ud83d\u0041""#) != nil)
        #expect(error(#""\ude00""#)?.kind == .invalidText("\\ude00 is a lone low surrogate"))
        #expect(error(#""\x41""#) != nil)
        #expect(error(#""\u12""#) != nil)
        #expect(error(#""\u12g4""#) != nil)
        #expect(error("\"a\nb\"") != nil, "a raw control character inside a string")
        #expect(error(#""abc"#)?.kind == .unexpectedEnd("the string is not closed"))
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
            [0x22, 0x5C, 0x6E, 0xFE, 0x22]
        ] {
            #expect(error(bytes: bytes)?.kind == .invalidText("the bytes are not UTF-8"), "\(bytes)")
        }
        // A byte-order mark is not JSON.
        #expect(error(bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)) != nil)
    }

    @Test func trailingDataAndOtherSyntaxErrorsNameTheByte() {
        #expect(error("{} x") == JSONParseError(.trailingData, at: 3))
        #expect(error("[1] [2]") == JSONParseError(.trailingData, at: 4))
        #expect(error(" [1,2,]")?.offset == 6)
        #expect(error("[1,]") != nil, "a trailing comma")
        #expect(error(#"{"a":1,}"#) != nil)
        #expect(error(#"{"a" 1}"#) != nil)
        #expect(error("{1:2}") != nil)
        #expect(error("[1 2]") != nil)
        #expect(error("") == JSONParseError(.unexpectedEnd("expected a value"), at: 0))
        #expect(error("[") == JSONParseError(.unexpectedEnd("expected a value"), at: 1))
        #expect(error("tru")?.kind == .unexpectedEnd("expected true"))
        #expect(error("nul l") != nil)
        #expect(error("// comment\n1") != nil)
        #expect(error("'a'") != nil)
        #expect((try? parse(" \t\r\n[ true , false , null ] \n")) == .array([.bool(true), .bool(false), .null]))
    }

    @Test func discardedArraysAreCheckedButKeptEmpty() throws {
        let text = #"{"packs":[{"name":"a","exercises":[{"id":"1"},{"id":"2"}],"gifs":[1]}],"exercises":"not an array"}"#
        let value = try JSONParser.parse(Array(text.utf8), discardingArraysNamed: ["exercises"])
        #expect(
            value
                == .object([
                    "packs": .array([.object(["name": .string("a"), "exercises": .array([]), "gifs": .array([.integer(1)])])]),
                    "exercises": .string("not an array")
                ]))
        #expect(try JSONParser.parse(Array(text.utf8)) != value)
        // What is let go is still checked: syntax, text, nesting, duplicate keys.
        for bad in [
            #"{"exercises":[1,]}"#, #"{"exercises":[{"id":"1","id":"2"}]}"#, #"{"exercises":["\#u{01}"]}"#,
            #"{"exercises":[[[[1]]]]}"#
        ] {
            #expect(throws: JSONParseError.self, "\(bad)") {
                try JSONParser.parse(Array(bad.utf8), limits: JSONLimits(maxDepth: 4), discardingArraysNamed: ["exercises"])
            }
        }
    }

    @Test func anIndexReadWithoutItsExerciseListsKeepsEverythingElse() throws {
        let gif = GIFEntry(
            sha256: String(repeating: "a", count: 64),
            location: EntryLocation(path: "gifs/\(String(repeating: "a", count: 64)).gif", size: 10, frameOffset: 100, frameLength: 20))
        let pack = PackDescription(
            name: "all", version: 2, file: "packs/all-v2-01234567.tar.zst", bytes: 200, sha256: String(repeating: "b", count: 64),
            entryCount: 2, uncompressedBytes: 3072, contentDigest: String(repeating: "c", count: 64),
            catalog: EntryLocation(path: "catalog.json", size: 5, frameOffset: 0, frameLength: 100),
            gifs: [gif], exercises: [ExerciseRef(id: "0001", gif: gif.sha256), ExerciseRef(id: "0002", gif: nil)])
        let index = PackIndex(generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: 180), packs: [pack])
        let bytes = index.encodedBytes()
        let whole = try PackIndex.decode(bytes: bytes)
        #expect(whole == index)
        var lean = try PackIndex.decode(bytes: bytes, omittingExercises: true)
        #expect(lean.packs[0].exercises.isEmpty)
        lean.packs[0].exercises = pack.exercises
        #expect(lean == index)
    }

    /// A pack "all" with no GIF entries and the given exercise list; `hash` fills every hash field.
    static func pack(version: Int, hash: String, exercises: [ExerciseRef]) -> PackDescription {
        PackDescription(
            name: "all", version: version, file: "packs/all-v\(version)-01234567.tar.zst", bytes: 1, sha256: hash,
            entryCount: 1, uncompressedBytes: 1024, contentDigest: hash,
            catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 1),
            gifs: [], exercises: exercises)
    }

    @Test func theParserSaysHowFarItHasGoneThroughTheListsItDiscards() throws {
        let hash = String(repeating: "e", count: 64)
        let pack = Self.pack(
            version: 3, hash: hash,
            exercises: (0..<40_000).map { ExerciseRef(id: String(format: "%06d", $0), gif: $0 % 5 == 0 ? nil : hash) })
        let index = PackIndex(generator: "g", source: SourceDescription(kind: "k", baseURL: nil, resolution: 180), packs: [pack])
        let bytes = index.encodedBytes()
        #expect(bytes.count > 3 << 20)
        // The parser says, every megabyte or so of a discarded list, how far it has gone.
        var passed: [Int] = []
        let tree = try bytes.withUnsafeBufferPointer { buffer in
            try JSONParser.parse(buffer, discardingArraysNamed: ["exercises"]) { passed.append($0) }
        }
        #expect(tree == (try JSONParser.parse(bytes, discardingArraysNamed: ["exercises"])))
        #expect(passed.count >= 3 && passed == passed.sorted() && passed.last! < bytes.count)
    }

    @Test func anExerciseListReadsLikeTheArrayItHolds() throws {
        let hashes = [String(repeating: "a", count: 64), String(repeating: "b", count: 64)]
        let refs = (0..<500).map { ExerciseRef(id: $0 % 9 == 0 ? "ü-\($0)" : String(format: "%04d", $0), gif: $0 % 3 == 0 ? nil : hashes[$0 % 2]) }
        let list = ExerciseRefList(refs)
        #expect(list.count == 500 && Array(list) == refs)
        #expect(list[9] == ExerciseRef(id: "ü-9", gif: nil) && list[1].gif == hashes[1])
        #expect(list == ExerciseRefList(refs) && list != ExerciseRefList(refs.dropLast()))
        var other = ExerciseRefList(refs)
        other.append(ExerciseRef(id: "9999", gif: hashes[0]))
        #expect(other != list && other.last == ExerciseRef(id: "9999", gif: hashes[0]))
        #expect(ExerciseRefList() == [] && ExerciseRefList().isEmpty)
    }

    @Test func anIndexEncodedInPiecesIsTheSameBytes() throws {
        let hash = String(repeating: "d", count: 64)
        let pack = Self.pack(
            version: 1, hash: hash,
            exercises: (0..<3000).map { ExerciseRef(id: String(format: "%05d", $0), gif: $0 % 7 == 0 ? nil : hash) })
        let index = PackIndex(
            generator: "g", source: SourceDescription(kind: "k", baseURL: "http://h", resolution: nil),
            packs: [pack], sequence: 4, expires: "2030-01-01T00:00:00Z")
        var pieces: [[UInt8]] = []
        index.encode { pieces.append($0) }
        #expect(pieces.count > 2, "an index of 3,000 exercises comes in pieces of about 64 KiB")
        #expect(pieces.dropLast().allSatisfy { $0.count >= 64 * 1024 && $0.count < 65 * 1024 })
        #expect(Array(pieces.joined()) == index.encodedBytes())
        #expect(try PackIndex.decode(bytes: Array(pieces.joined())) == index)
    }

    @Test func duplicateKeysAreRefused() {
        let refused = error(#"{"sha256":"aa","size":1,"sha256":"bb"}"#)
        #expect(refused == JSONParseError(.duplicateKey("sha256"), at: 24))
        #expect(refused?.description == #"JSON object repeats the key "sha256" at byte 24"#)
        // The same key in different objects is fine.
        #expect((try? parse(#"[{"a":1},{"a":2}]"#)) == .array([.object(["a": .integer(1)]), .object(["a": .integer(2)])]))
    }

    @Test func nestingIsBoundedAndReportedWithItsByte() throws {
        let within = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parse(within) }
        let deep = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let refused = error(deep)
        #expect(refused == JSONParseError(.tooDeep(limit: 64), at: 64))
        #expect(refused?.description == "JSON nested deeper than 64 levels at byte 64")
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(error(objects)?.kind == .tooDeep(limit: 64))
        #expect(error("[[[1]]]", limits: JSONLimits(maxDepth: 2))?.description == "JSON nested deeper than 2 levels at byte 2")
        // Depth is nesting, not the count of containers: a million siblings are fine.
        let wide = "[" + Array(repeating: "[]", count: 100_000).joined(separator: ",") + "]"
        #expect(try parse(wide).arrayValue?.count == 100_000)
    }

    @Test func sizeIsBounded() {
        #expect(error("[1, 2, 3]", limits: JSONLimits(maxBytes: 8))?.description == "JSON of 9 bytes is larger than the 8-byte limit")
        #expect((try? parse("[1, 2, 3]", limits: JSONLimits(maxBytes: 9))) != nil)
    }

    @Test func theFormatModelsDecodeFromTheParsedTreeAsBefore() throws {
        let pack = PackDescription(
            name: "all", version: 3, file: "packs/all-v3.tar.zst", bytes: 4096, sha256: String(repeating: "a", count: 64),
            entryCount: 2, uncompressedBytes: 8192, contentDigest: String(repeating: "b", count: 64),
            catalog: EntryLocation(path: "catalog.json", size: 300, frameOffset: 0, frameLength: 200),
            gifs: [
                GIFEntry(
                    sha256: String(repeating: "c", count: 64),
                    location: EntryLocation(
                        path: "gifs/\(String(repeating: "c", count: 64)).gif", size: 900,
                        frameOffset: 200, frameLength: 800))
            ],
            exercises: [ExerciseRef(id: "0001", gif: String(repeating: "c", count: 64)), ExerciseRef(id: "0002", gif: nil)])
        let index = PackIndex(
            generator: "gifpack test", source: SourceDescription(kind: "exercisedb-v1", baseURL: "http://x", resolution: nil),
            packs: [pack])
        #expect(try PackIndex.decode(from: index.encoded()) == index)
        let catalog = PackCatalog(
            pack: "all", source: SourceDescription(kind: "exercisedb-v1", baseURL: nil, resolution: 180),
            exercises: [
                PackExercise(
                    id: "0001", name: "squat \"deep\"",
                    gif: GIFMetadata(
                        sha256: String(repeating: "c", count: 64), bytes: 900,
                        width: 180, height: 180, frames: 12, durationMilliseconds: 960,
                        loopCount: nil),
                    data: .object(["bodyPart": .string("legs"), "score": .number(2.5), "tags": .array([.null, .bool(true)])])),
                PackExercise(id: "0002", name: "plank", gif: nil, data: .object([:]))
            ])
        #expect(try PackCatalog.decode(from: catalog.encoded()) == catalog)
        // A wrong type names its key path.
        var text = String(decoding: try index.encoded(), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"bytes\" : 4096", with: "\"bytes\" : \"4096\"")
        #expect(throws: IndexError.malformed("packs[0].bytes: expected Int64, found a string")) {
            try PackIndex.decode(from: Data(text.utf8))
        }
    }

    @Test func terminalTextEscapesEveryControlAndBidiCharacter() {
        #expect(TerminalText.escaped("plain Übung 😀") == "plain Übung 😀")
        #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\u{1b}[2Jb")
        #expect(TerminalText.escaped("\u{9B}31m\u{7F}\u{85}") == "\\u{9b}31m\\u{7f}\\u{85}")
        #expect(TerminalText.escaped("x\u{202E}gpj.exe\u{2066}\u{200F}") == "x\\u{202e}gpj.exe\\u{2066}\\u{200f}")
        #expect(TerminalText.escaped("line\nnext\r\t") == "line\\nnext\\r\\t")
        #expect(TerminalText.escaped("Übung", asciiOnly: true) == "\\u{dc}bung")
        #expect(TerminalText.escaped("abcdef", maxScalars: 3) == "abc…")
        let leaking = (UInt32(0)...0x2FFFF).filter { value in
            guard let scalar = Unicode.Scalar(value) else { return false }
            return TerminalText.escaped(String(scalar)).unicodeScalars.contains { TerminalText.isUnsafe($0) }
        }
        #expect(leaking.isEmpty, "\(leaking.prefix(5).map { String($0, radix: 16) })")
    }
}

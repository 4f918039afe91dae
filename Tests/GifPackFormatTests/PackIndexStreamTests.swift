import Foundation
@testable import GifPackFormat
import Testing
import GifPackJSON
@testable import GifPackTestSupport

/// An index read without its JSON tree (`PackIndexStream`: each exercise parsed
/// alone, the lists kept compact) and diffed by a merge of the packs' sorted lists
/// (`IndexExercises`, `IndexExercisePairs`) instead of maps of every id, so a review or `gifpack
/// diff` of 100,000 exercises does not grow with them. The stream must give exactly what the
/// whole-document decoder gives, and refuse exactly what it refuses.
@Suite("Index read as a stream and diffed by merge", .computes, .timeLimit(.minutes(5)))
struct PackIndexStreamTests {
    static let hashA = String(repeating: "a", count: 64), hashB = String(repeating: "b", count: 64)

    static func pack(_ name: String, _ refs: [ExerciseRef]) -> PackDescription {
        var pack = PackDescription(
            name: name, version: 1, file: "packs/\(name).tar.zst", bytes: 10, sha256: hashA, entryCount: 1,
            uncompressedBytes: 10, contentDigest: hashB,
            catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 1), gifs: [], exercises: [])
        pack.exercises = ExerciseRefList(refs)  // as given: unsorted or repeated when the test says so
        return pack
    }

    static func index(_ packs: [PackDescription], renditions: [PackDescription] = []) -> PackIndex {
        var index = PackIndex(
            generator: "g", source: SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: 180), packs: [],
            renditionPacks: renditions)
        index.packs = packs  // in the order given
        return index
    }

    /// The stream over `bytes` fed in chunks of `size`.
    static func stream(_ bytes: [UInt8], chunk size: Int) throws(IndexError) -> PackIndex {
        var stream = PackIndexStream()
        for start in stride(from: 0, to: bytes.count, by: max(1, size)) {
            try stream.feed(Array(bytes[start..<min(bytes.count, start + size)]))
        }
        return try stream.finish()
    }

    /// Both decoders agree on `bytes`: the same index, or both refuse it.
    static func agree(_ bytes: [UInt8], chunk: Int = 5, sourceLocation: SourceLocation = #_sourceLocation) {
        let whole = Result { () throws(IndexError) in try PackIndex.decode(bytes: bytes) }
        let streamed = Result { () throws(IndexError) in try stream(bytes, chunk: chunk) }
        switch (whole, streamed) {
        case (.success(let a), .success(let b)):
            if a != b { Issue.record("different indexes from \(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation) }
        case (.failure, .failure):
            break
        default:
            Issue.record(
                "the decoders disagree on \(String(decoding: bytes, as: UTF8.self)): whole \(whole), stream \(streamed)",
                sourceLocation: sourceLocation)
        }
    }

    static var hostile: PackIndex {
        let refs = [ExerciseRef(id: "0009", gif: hashA), ExerciseRef(id: "0001", gif: nil), ExerciseRef(id: "0009", gif: hashB)]
        return index(
            [pack("b", refs), pack("a", [ExerciseRef(id: "x\"]}", gif: hashA)])],
            renditions: [pack("b.360", [ExerciseRef(id: "0002", gif: hashB)])])
    }

    @Test("the stream gives the whole-document decoder's index in any chunking: renditions, repeated and unsorted ids included")
    func sameIndexAsTheWholeDecoder() throws {
        for index in IndexShapeTests.samples() + [Self.hostile] {
            let bytes = index.encodedBytes()
            let whole = try PackIndex.decode(bytes: bytes)
            for size in [1, 2, 7, 64, 4096, bytes.count] {
                #expect(try Self.stream(bytes, chunk: size) == whole, "chunks of \(size)")
            }
        }
        let hostile = try Self.stream(Self.hostile.encodedBytes(), chunk: 3)
        #expect(hostile.packs.map { $0.exercises.map(\.id) } == [["0009", "0001", "0009"], ["x\"]}"]])
        #expect(hostile.renditionPacks?.first?.exercises.map(\.gif) == [Self.hashB])
    }

    @Test("whatever the whole decoder refuses the stream refuses: every truncation, every byte replaced, lists out of shape")
    func refusesWhatTheWholeDecoderRefuses() throws {
        let bytes = Self.hostile.encodedBytes()
        var truncatedRefused = 0
        // (Without its last byte, the newline, the index is still whole.)
        for end in 0..<(bytes.count - 1) {
            Self.agree(Array(bytes[..<end]))
            if (try? Self.stream(Array(bytes[..<end]), chunk: 64)) == nil { truncatedRefused += 1 }
        }
        #expect(truncatedRefused == bytes.count - 1, "every truncated index is refused")
        for position in bytes.indices {
            for replacement in Array("]}[{,\"x".utf8) where bytes[position] != replacement {
                var changed = bytes
                changed[position] = replacement
                Self.agree(changed)
            }
        }
        let head =
            #"{"formatVersion":"1.2","generator":"g","packs":[{"bytes":1,"catalog":{"frameLength":1,"frameOffset":0,"path":"c","size":1},"#
            + #""contentDigest":"d","entryCount":1,"file":"f","gifs":[],"name":"a","sha256":"s","uncompressedBytes":1,"version":1,"#
        let tail = #"}],"source":{"kind":"k"}}"#
        let one = #"{"gif":null,"id":"1"}"#
        for list in [
            "[]", "[\(one)]", "[\(one),\(one)]", " [ \(one) , \(one) ] ", "[\(one),]", "[,\(one)]", "[\(one)\(one)]", "[1]", "[[]]",
            "[{\"id\":1}]", "[{\"id\":\"1\",\"gif\":5}]", "[{\"id\":\"1\"]", "[\(one)", "{}", "null"
        ] {
            Self.agree(Array((head + #""exercises":"# + list + tail).utf8))
        }
        // A key written with escapes, a list named twice, lists where no pack is.
        Self.agree(Array((head + #""exer\u0063ises":[\#(one)]"# + tail).utf8))
        Self.agree(Array((head + #""exercises":[\#(one)],"exercises":[]"# + tail).utf8))
        Self.agree(Array(#"{"exercises":[{"id":"1"}],"formatVersion":"1.2","generator":"g","packs":[],"source":{"kind":"k"}}"#.utf8))
        Self.agree(Array(#"[{"packs":[{"exercises":[{"id":"1"}]}]}]"#.utf8))
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        Self.agree(Array((head + #""exercises":[{"gif":null,"id":"1","x":\#(deep)}]"# + tail).utf8))
    }

    @Test("an exercise element as builders write it is read without a JSON tree, and reads as the full decoder reads it")
    func plainElementsReadAsTheFullDecoderReadsThem() throws {
        func full(_ text: String) -> ExerciseRef? {
            let bytes = Array(text.utf8)
            let limits = JSONLimits(maxDepth: 60, maxBytes: PackIndexStream.maxExerciseBytes)
            guard let value = try? JSONParser.parse(bytes, limits: limits) else { return nil }
            return try? JSONValueDecoder.decode(ExerciseRef.self, from: value)
        }
        // What builders write (pretty and compact) takes the plain path.
        var written = 0
        for index in IndexShapeTests.samples() + [Self.hostile] {
            for pack in index.packs + (index.renditionPacks ?? []) {
                for ref in pack.exercises where !ref.id.contains("\"") {
                    let gif = ref.gif.map { "\"\($0)\"" } ?? "null"
                    for text in ["{\n  \"gif\" : \(gif),\n  \"id\" : \"\(ref.id)\"\n}", "{\"gif\":\(gif),\"id\":\"\(ref.id)\"}"] {
                        #expect(ExerciseRef.plain(Array(text.utf8)) == ref, "\(text)")
                        written += 1
                    }
                }
            }
        }
        #expect(written > 10)
        // Anything else is left to the full decoder (nil) or read exactly as it reads it.
        let hash = Self.hashA
        let others = [
            #"{"gif":"\#(hash)","id":"0001"}"#, #" { "gif" : null , "id" : "a-b_C" } "#, "{\t\"gif\"\r:\nnull,\"id\":\"x\"}",
            #"{"gif":null,"id":""}"#,
            #"{"id":"0001","gif":"\#(hash)"}"#, #"{"gif":"a\"b","id":"1"}"#, #"{"gif":"a\u0041","id":"1"}"#, #"{"gif":"é","id":"1"}"#,
            #"{"gif":nul,"id":"1"}"#, #"{"gif":nullx,"id":"1"}"#, #"{"gif":5,"id":"1"}"#, #"{"gif":null,"id":1}"#,
            #"{"gif":null}"#, #"{"gif":null,"id":"1","x":2}"#, #"{"gif":null,"id":"1",}"#, #"{"gif":null,"id":"1"}x"#,
            #"{"gif":null "id":"1"}"#, #"{"gif":null,"id":"1""#, #"{"gi":null,"id":"1"}"#, #"{"gifs":null,"id":"1"}"#,
            "{\"gif\":\"a\u{01}b\",\"id\":\"1\"}", "{\"gif\":null,\"id\":\"\u{7F}\"}", "{}", "{", ""
        ]
        var plain = 0
        for text in others {
            guard let fast = ExerciseRef.plain(Array(text.utf8)) else { continue }
            plain += 1
            #expect(full(text) == fast, "\(text)")
        }
        #expect(plain == 4, "the first four take the plain path")
    }

    @Test("a truncated index is refused with where and why")
    func truncatedIsRefusedClearly() throws {
        let bytes = Self.hostile.encodedBytes()
        let text = String(decoding: bytes, as: UTF8.self)
        let inList = try #require(text.range(of: "\"0009\"")).upperBound.utf16Offset(in: text)
        let cut = Array(bytes[..<inList])
        #expect(throws: IndexError.malformed("at byte \(cut.count): the document ends inside a list of exercises")) {
            try Self.stream(cut, chunk: 100)
        }
        let error = #expect(throws: IndexError.self) {
            try Self.stream(Array(#"{"packs":[{"exercises":[{"id":"1"},]}]}"#.utf8), chunk: 4)
        }
        #expect(error?.description.contains("expected an exercise object in the exercises of pack 1") == true, "\(String(describing: error))")
    }

    /// The diff as it was computed before the merge: maps of id → GIF, the first pack by name winning.
    static func mapDiff(old: PackIndex, new: PackIndex) -> (added: [String], removed: [String], changed: [String], before: Int, after: Int) {
        func map(_ index: PackIndex) -> [String: String?] {
            var result: [String: String?] = [:]
            for pack in index.packs.sorted(by: { $0.name < $1.name }) {
                for exercise in pack.exercises where result[exercise.id] == nil { result[exercise.id] = exercise.gif }
            }
            return result
        }
        let (before, after) = (map(old), map(new))
        let changes = IndexDiff.exerciseChanges(from: before, to: after)
        return (changes.added, changes.removed, changes.changed, before.count, after.count)
    }

    @Test("the merged diff equals the map diff: an id in two packs, unsorted packs and ids, an id twice in a pack, a GIF gained and lost")
    func mergedDiffEqualsMapDiff() {
        let old = Self.index([
            Self.pack("z", [ExerciseRef(id: "0005", gif: Self.hashA), ExerciseRef(id: "0001", gif: Self.hashB)]),
            Self.pack(
                "m",
                [
                    ExerciseRef(id: "0003", gif: Self.hashA), ExerciseRef(id: "0003", gif: Self.hashB), ExerciseRef(id: "0004", gif: nil),
                    ExerciseRef(id: "0007", gif: Self.hashA)
                ]),
            Self.pack("a", [ExerciseRef(id: "0002", gif: Self.hashA), ExerciseRef(id: "0005", gif: Self.hashB)])
        ])
        let new = Self.index([
            Self.pack("m", [ExerciseRef(id: "0009", gif: nil), ExerciseRef(id: "0003", gif: Self.hashA), ExerciseRef(id: "0004", gif: Self.hashA)]),
            Self.pack("a", [ExerciseRef(id: "0001", gif: Self.hashA), ExerciseRef(id: "0005", gif: Self.hashA), ExerciseRef(id: "0007", gif: nil)])
        ])
        for (a, b) in [(old, new), (new, old), (old, old), (Self.index([]), new), (new, Self.index([]))] {
            let diff = IndexDiff(old: a, new: b)
            let expected = Self.mapDiff(old: a, new: b)
            #expect(diff.added == expected.added && diff.removed == expected.removed && diff.changed == expected.changed)
            #expect(diff.exercisesBefore == expected.before && diff.exercisesAfter == expected.after)
        }
        let diff = IndexDiff(old: old, new: new)
        #expect(diff.added == ["0009"] && diff.removed == ["0002"] && diff.changed == ["0001", "0004", "0005", "0007"])
        // Each id once, from the first pack by name, at its position in that pack's list.
        let entries = Array(IndexExercises(old))
        #expect(entries.map(\.id) == ["0001", "0002", "0003", "0004", "0005", "0007"])
        #expect(entries.first { $0.id == "0005" } == IndexExercises.Entry(id: "0005", gif: Self.hashB, pack: 0, position: 1))
        #expect(entries.first { $0.id == "0003" } == IndexExercises.Entry(id: "0003", gif: Self.hashA, pack: 1, position: 0))
    }
}

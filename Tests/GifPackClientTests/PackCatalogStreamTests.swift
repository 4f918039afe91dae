import Foundation
import GifPackClient
import GifPackFormat
import Testing
@testable import GifPackDistFixtures
@testable import GifPackTestSupport
import GifPackIndexReader

/// A catalog read one exercise at a time (`PackCatalogStream`,
/// `PackEntryReader.streamCatalog`), so a release review of 100,000 exercises never holds a catalog.
@Suite("Catalog read one exercise at a time", .timeLimit(.minutes(5)))
struct PackCatalogStreamTests {
    static func catalog(_ count: Int) throws -> [UInt8] {
        let exercises = (0..<count).map { n in
            PackExercise(
                id: String(format: "%04d", n), name: "ex \"\(n)\" [{\\",
                gif: n % 3 == 0
                    ? nil
                    : GIFMetadata(
                        sha256: String(repeating: "ab", count: 32), bytes: 100, width: 180, height: 180, frames: 3,
                        durationMilliseconds: 300, loopCount: 0, blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", averageColor: "#102030"),
                data: .object(["bodyPart": .string("back"), "nested": .array([.object(["a": .string("]}")])])]))
        }
        return try PackCatalog(
            pack: "all", source: SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: 180),
            exercises: exercises
        ).encoded()
    }

    /// Feeds `bytes` in chunks of `size`; the exercises it handed on and the head.
    static func stream(_ bytes: [UInt8], chunk size: Int, maxExerciseBytes: Int = 1 << 20) throws -> ([PackExercise], PackCatalog) {
        var stream = PackCatalogStream(maxExerciseBytes: maxExerciseBytes)
        var exercises: [PackExercise] = []
        for start in stride(from: 0, to: bytes.count, by: size) {
            try bytes[start..<min(bytes.count, start + size)].withUnsafeBytes { chunk in
                try stream.feed(chunk) { exercises.append($0) }
            }
        }
        return (exercises, try stream.finish())
    }

    @Test(.computes) func everyExerciseComesOnceInOrderInAnyChunking() throws {
        let bytes = try Self.catalog(40)
        let whole = try PackCatalog.decode(from: bytes)
        for size in [1, 2, 7, 64, 4096, bytes.count] {
            let (exercises, head) = try Self.stream(bytes, chunk: size)
            #expect(exercises == whole.exercises, "chunks of \(size)")
            #expect(head.pack == "all" && head.formatVersion == whole.formatVersion && head.source == whole.source && head.exercises.isEmpty)
        }
        // Skimmed (the check before the read): the same head, nothing decoded.
        var skim = PackCatalogStream()
        try bytes.withUnsafeBytes { try skim.skim($0) }
        #expect(try skim.finish().pack == "all" && skim.exerciseCount == 40)
    }

    @Test(.computes) func aHostileCatalogIsRefusedWithWhereAndWhy() throws {
        func refusal(_ text: String, maxExerciseBytes: Int = 1 << 20) -> String? {
            do {
                _ = try Self.stream(Array(text.utf8), chunk: 3, maxExerciseBytes: maxExerciseBytes)
                return nil
            } catch let failure as PackCatalogStream.Failure {
                return failure.reason
            } catch {
                return "\(error)"
            }
        }
        let tail = #","formatVersion":"1.2","pack":"all","source":{"kind":"x"}}"#
        let one = #"{"data":{},"gif":null,"id":"0001","name":"a"}"#
        #expect(refusal(#"{"exercises":["# + one + "]" + tail) == nil)
        #expect(refusal(#"{"exercises":["x"]"# + tail) == "an exercise is not an object")
        #expect(refusal(#"{"exercises":[[1]]"# + tail) == "an exercise is not an object")
        #expect(refusal(#"{"exercises":["# + one + "]" + tail, maxExerciseBytes: 20) == "an exercise is over 20 bytes")
        #expect(refusal(#"{"exercises":[{"id":1}]"# + tail)?.hasPrefix("exercise 1 does not decode") == true)
        #expect(refusal(#"{"exercises":[],"exercises":[]"# + tail) == "two lists of exercises")
        #expect(refusal(#"{"formatVersion":"1.2","pack":"all","source":{"kind":"x"}}"#) == "the catalog ends early or has no exercises")
        #expect(refusal(#"{"exercises":["# + one) == "the catalog ends early or has no exercises")
        #expect(refusal(#"{"exercises":[]"# + tail + "}") == "a closing bracket without its opening one")
        #expect(refusal(#"{"exercises":[]"# + tail + " x")?.hasPrefix("the catalog does not decode") == true)
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(refusal(#"{"exercises":[{"data":"# + deep + #","gif":null,"id":"0001","name":"a"}]"# + tail)?.hasPrefix("exercise 1 does not decode") == true)
    }

    @Test func aPackReaderStreamsWhatItsCatalogHoldsAndStopsWhenAsked() async throws {
        let built = try await ClientBuiltDist.make(count: 9)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let reader = try PackEntryReader(path: "\(built.dist)/\(pack.file)", pack: pack)
        var streamed: [PackExercise] = []
        try reader.streamCatalog { streamed.append($0) }
        #expect(streamed == (try reader.catalog()).exercises && streamed.count == 9)
        struct Enough: Error {}
        var seen = 0
        #expect(throws: Enough.self) {
            try reader.streamCatalog { _ in
                seen += 1
                if seen == 3 { throw Enough() }
            }
        }
        #expect(seen == 3)
        // A catalog that is not the index's (another pack's digest) is refused before any exercise.
        var other = pack
        other.contentDigest = String(repeating: "0", count: 64)
        let wrong = try PackEntryReader(path: "\(built.dist)/\(pack.file)", pack: other)
        var handed = 0
        #expect(throws: PackClientError.self) { try wrong.streamCatalog { _ in handed += 1 } }
        #expect(handed == 0)
    }
}

import ExerciseDBFixture
import Foundation
import GifPackClient
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackFormat
import GifPackIndexReader

@Suite("Client: index sources and random access", .timeLimit(.minutes(5)))
struct ClientReaderTests {
    @Test func entryReaderReadsOneGIFByItsFrameWithoutTouchingTheOthers() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        // Damage a copy of the pack inside one GIF's frame: the others still read.
        let damaged = built.workspace.file("damaged.tar.zst")
        var bytes = try fileBytes("\(built.dist)/\(pack.file)")
        let victim = try #require(pack.exercises.first { $0.gif != nil })
        let victimEntry = try #require(pack.gifEntry(forExercise: victim.id))
        bytes[Int(victimEntry.location.frameOffset + victimEntry.location.frameLength / 2)] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let reader = try PackEntryReader(path: damaged, pack: pack)

        for exercise in pack.exercises where exercise.gif != nil && exercise.gif != victim.gif {
            #expect(try reader.gif(forExercise: exercise.id) == built.served(exercise.id))
        }
        #expect(throws: PackClientError.self) { try reader.gif(forExercise: victim.id) }
        #expect(throws: PackClientError.unknownExercise("nope")) { try reader.gif(forExercise: "nope") }
        let catalog = try reader.catalog()
        #expect(catalog.exercises.map(\.id) == pack.exercises.map(\.id))
    }

    @Test func newerMajorFormatVersionIsRefusedFromAFileAndFromAURL() async throws {
        let workspace = try TemporaryDirectory()
        let index = #"{"formatVersion":"2.0","generator":"gifpack 9","source":{"kind":"x"},"packs":[]}"#
        let path = try workspace.write(index, to: "index.json")
        await #expect(throws: PackClientError.index(.unsupportedVersion(FormatVersion(major: 2, minor: 0)))) {
            _ = try await PackIndexSource(path).load()
        }
        let files = try ClientStaticFileServer(root: workspace.path)
        defer { files.stop() }
        let remote = PackIndexSource(files.baseURL + "/index.json")
        await #expect(throws: PackClientError.index(.unsupportedVersion(FormatVersion(major: 2, minor: 0)))) {
            _ = try await remote.load()
        }
        // A newer minor version with unknown fields is read.
        _ = try workspace.write(
            #"{"formatVersion":"1.7","generator":"g","source":{"kind":"x"},"packs":[],"later":true}"#,
            to: "index.json")
        #expect(try await remote.load().packs.isEmpty)
        await #expect(throws: PackClientError.self) { _ = try await PackIndexSource(files.baseURL + "/missing.json").load() }
    }

    @Test(.computes) func packFilesResolveNextToTheIndexAndUnsafePathsAreRefused() throws {
        let pack = PackDescription(
            name: "all", version: 3, file: "packs/all-v3.tar.zst", bytes: 1, sha256: "", entryCount: 1,
            uncompressedBytes: 0, contentDigest: "",
            catalog: EntryLocation(path: "catalog.json", size: 0, frameOffset: 0, frameLength: 1),
            gifs: [], exercises: [])
        #expect(
            try PackIndexSource("https://cdn.example.com/g/index.json?sig=1").packLocation(for: pack)
                == .url("https://cdn.example.com/g/packs/all-v3.tar.zst"))
        #expect(try PackIndexSource("/srv/dist/index.json").packLocation(for: pack) == .file("/srv/dist/packs/all-v3.tar.zst"))
        #expect(try PackIndexSource("file:///srv/dist/index.json").packLocation(for: pack) == .file("/srv/dist/packs/all-v3.tar.zst"))
        var escaping = pack
        escaping.file = "../../etc/passwd"
        #expect(throws: PackClientError.self) { try PackIndexSource("/srv/dist/index.json").packLocation(for: escaping) }
        escaping.file = "/etc/passwd"
        #expect(throws: PackClientError.self) { try PackIndexSource("/srv/dist/index.json").packLocation(for: escaping) }
    }

    @Test func diffNamesChangedExercisesAndTheBytesToDownload() async throws {
        let built = try await ClientBuiltDist.make(count: 8, fetch: "  refresh_after: 0")
        defer { built.server.stop() }
        let old = try built.index()
        let id = built.server.catalog.exercises.map(\.id).sorted()[2]
        built.server.replaceGIF(id: id, with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 3, colors: 4, seed: 99))
        try await built.build(fetch: "  refresh_after: 0")
        let new = try built.index()

        let diff = IndexDiff(old: old, new: new)

        #expect(diff.changed == [id] && diff.added.isEmpty && diff.removed.isEmpty)
        #expect(diff.downloads.map(\.name) == ["all"] && diff.downloads.first?.oldVersion == 1)
        #expect(diff.downloadBytes == new.packs[0].bytes)
        let newHash = try #require(new.packs[0].exercises.first { $0.id == id }?.gif)
        #expect(diff.newGIFFrameBytes == new.packs[0].gifs.first { $0.sha256 == newHash }?.location.frameLength)
        #expect(IndexDiff(old: new, new: new).downloads.isEmpty)
    }
}

import ExerciseDBFixture
import Foundation
import GifPackHTTP
import GifPackSystem
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// What keeps a build's memory flat as the catalog grows: records spooled to the cache as pages
/// arrive, the fetch planned a batch at a time, catalog changes compared in SQLite. Each must give
/// exactly what the in-memory way gave.
@Suite("Builds that scale", .timeLimit(.minutes(5)))
struct ScaleBuildTests {
    @Test(.computes) func spooledRecordsReadBackByteForByteAndLeaveNoFileBehind() throws {
        let workspace = try TemporaryDirectory()
        let spool = try RecordSpool(directory: workspace.path)
        let first = try [RawRecord(.object(["id": .string("0001"), "name": .string("sit-up")])), RawRecord(.array([]))]
        let second = try [RawRecord(.string("45° side \"bend\"")), RawRecord(.object([:]))]
        let spooled = try spool.append(first) + spool.append(second)
        for (original, copy) in zip(first + second, spooled) {
            #expect(try copy.bytes() == original.bytes())
            #expect(copy == original)
            guard case .spooled = copy.storage else { Issue.record("not spooled"); continue }
        }
        #expect(spooled[0] != spooled[1])
        // Spooling a spooled record again writes nothing and keeps it.
        #expect(try spool.append([spooled[2]]) == [spooled[2]])
        // The file was unlinked as soon as it was made: a killed run leaves nothing in tmp/.
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path).isEmpty)
    }

    @Test(.computes) func spooledExercisesReadBackWholeByIndexSliceFilterAndIteration() throws {
        let workspace = try TemporaryDirectory()
        let spool = try RecordSpool(directory: workspace.path)
        let template = RapidAPICatalogSource.imageTemplate(base: "https://api.example", resolution: .pixels(360))
        // One record past the 16 MiB a slot can say (its length is then read from the file).
        let big = String(repeating: "x", count: 17 << 20)
        let exercises = try [
            Exercise(
                id: "0001", name: "3/4 sit-up", bodyParts: ["waist"], equipment: ["body weight"], targets: ["abs"],
                imageTemplate: template, raw: .object(["id": .string("0001"), "name": .string("3/4 sit-up")])),
            Exercise(
                id: "0002", name: "45° side \"bend\"", bodyParts: [], equipment: ["dumbbell", "band"], targets: ["obliques"],
                imageURL: "https://cdn.example/0002.gif", raw: .object(["id": .string("0002"), "note": .string(big)])),
            Exercise(
                id: "0003", name: "", bodyParts: ["waist"], equipment: [], targets: [],
                imageTemplate: template, raw: .array([]))
        ]
        let slots = try spool.append(exercises: Array(exercises[0..<2])) + spool.append(exercises: [exercises[2]])
        #expect(slots[1].length == nil && slots[0].length != nil)
        let list = ExerciseList(spool: spool, slots: slots)
        #expect(list.count == 3)
        #expect(try list.array() == exercises, "iteration")
        #expect(try list.indices.map { try list.exercise(at: $0) } == exercises, "indexing")
        #expect(try list[1..<3].array() == Array(exercises[1...]), "a slice")
        #expect(try list.exercise(at: 2).imageURL == "https://api.example/image?exerciseId=0003&resolution=360")
        #expect(try list.exercise(at: 1).imageURL == "https://cdn.example/0002.gif")
        #expect(try list.map(\.fingerprint) == exercises.map(\.fingerprint))
        let waist = try list.filtered { $0.bodyParts == ["waist"] }
        #expect(try waist.map(\.id) == ["0001", "0003"])
        guard case .spooled = waist.storage else { Issue.record("a filtered spooled list is spooled"); return }
        for (original, read) in zip(exercises, try list.readingRecords.array()) {
            #expect(try read.record.bytes() == original.record.bytes())
            guard case .memory = read.record.storage else { Issue.record("records read along are in memory"); continue }
        }
        for (original, read) in zip(exercises, try list.array()) {
            #expect(try read.record.bytes() == original.record.bytes())
            guard case .spooled = read.record.storage else { Issue.record("records stay in the spool"); continue }
        }
        let ids = try spool.ids(at: slots.reversed())
        #expect((0..<ids.count).map { ids[$0] } == ["0003", "0002", "0001"])
        #expect(ids.compare(0, 1) == 1 && ids.compare(2, 1) == -1 && ids.compare(1, 1) == 0)
        var packed = RecordSpool.PackedIDs()
        for id in ["100", "10", "9", "10"] { Array(id.utf8).withUnsafeBytes { packed.append($0) } }
        #expect(packed.compare(1, 0) == -1 && packed.compare(0, 2) == -1 && packed.compare(1, 3) == 0, "the order String gives")
        var copied = Array(slots.reversed())
        try spool.rewrite(&copied)
        #expect(copied != Array(slots.reversed()))
        #expect(try ExerciseList(spool: spool, slots: copied).array() == exercises.reversed(), "written again in another order")
    }

    /// The spool is read back from disk: a file overwritten or cut short under the build is an
    /// error that says where and what, never a stop of the process, whichever step reads it.
    @Test(.computes) func aSpoolOverwrittenOrCutShortOnDiskThrowsAnErrorNamingTheProblem() throws {
        let workspace = try TemporaryDirectory()
        let spool = try RecordSpool(directory: workspace.path)
        let exercises = try (1...3).map { n in
            try Exercise(
                id: "000\(n)", name: "n\(n)", bodyParts: ["waist"], equipment: [], targets: [],
                imageURL: "https://cdn.example/\(n).gif", raw: .object(["id": .string("000\(n)")]))
        }
        let slots = try spool.append(exercises: exercises)
        let list = ExerciseList(spool: spool, slots: slots)
        let catalog = Catalog(sorted: list, rejected: [], duplicateIDs: [], pagesFetched: 1)
        #expect(try list.array() == exercises)
        func overwrite(_ bytes: [UInt8], at offset: Int64) {
            let written = bytes.withUnsafeBytes { SystemCalls.write(spool.descriptor, $0.baseAddress, $0.count, at: offset) }
            #expect(written == bytes.count)
        }

        // The second exercise's first list number (after the id "0002" and the name "n2"), made one no list has.
        let listAt = slots[1].offset + Int64(RecordSpool.fixedHeader + 2 + 4 + 4 + 2)
        let original = try spool.read(offset: listAt, length: 4)
        overwrite([0xFF, 0xFF, 0xFF, 0x7F], at: listAt)
        let badList = #expect(throws: SpoolReadError.self) { try list.array() }
        #expect(badList?.offset == slots[1].offset && badList?.path == spool.path)
        #expect(badList?.problem == "list number 2147483647 is not one of the 2 kept")
        #expect(try list.exercise(at: 0) == exercises[0], "the others still read")
        #expect(throws: SpoolReadError.self) { try PackPlan(specs: [PackSpec(name: "all", selector: Selector())], catalog: catalog).wanted.array() }
        #expect(throws: SpoolReadError.self) { try PackPlan(specs: [PackSpec(name: "waist", selector: Selector(bodyParts: ["waist"]))], catalog: catalog) }
        overwrite(original, at: listAt)

        // The first exercise's length no longer the one written.
        let length = try spool.read(offset: slots[0].offset, length: 4)
        overwrite([9, 0, 0, 0], at: slots[0].offset)
        let badLength = #expect(throws: SpoolReadError.self) { try CatalogFingerprint.digest(of: catalog) }
        #expect(badLength?.problem == "the exercise written there was \(slots[0].length ?? 0) bytes, the file now says 9 with an id of 4")
        #expect(throws: SpoolReadError.self) { try spool.ids(at: slots) }
        var copies = slots
        #expect(throws: CatalogError.spoolRead(try #require(badLength))) { try spool.rewrite(&copies) }
        overwrite(length, at: slots[0].offset)
        #expect(try list.array() == exercises)

        // Cut short inside the third exercise.
        #expect(SystemCalls.truncate(spool.descriptor, size: slots[2].offset + 10) == 0)
        let cut = #expect(throws: SpoolReadError.self) { try list[2..<3].array() }
        #expect(cut?.problem == "the file ends at byte \(slots[2].offset + 10), inside an exercise of \(slots[2].length ?? 0) bytes")
        #expect(cut?.description.hasPrefix("the catalog spool \(spool.path) cannot be read back at byte \(slots[2].offset): ") == true)
        #expect(throws: SpoolReadError.self) { try CatalogValues.counts(of: .bodyPart, in: list) }
        #expect(try list[0..<2].array() == Array(exercises[0..<2]), "what is before the cut still reads")
    }

    @Test func aReusedZstdContextWritesTheSameFrameAsANewOne() async throws {
        let directory = try TemporaryDirectory()
        func frame(_ bytes: [UInt8], _ name: String) throws -> [UInt8] {
            let sink = try FileDescriptorSink(creating: directory.file(name))
            let compressor = try ZstdFrameCompressor(level: 9, pledgedSize: Int64(bytes.count), sink: sink)
            try bytes.withUnsafeBytes { try compressor.compress($0) }
            try compressor.finish()
            try sink.close()
            return try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file(name))))
        }
        let small = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 % 251) }
        let large = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 13 % 241) }
        // Contexts are taken from the pool and given back: the large entry (pinned window and
        // tables) leaves nothing behind in the context the next small one gets.
        let pooledBefore = (0..<ZstdContextPool.maxKept).compactMap { _ in ZstdContextPool.take() }
        pooledBefore.forEach(ZstdContextPool.give)
        let first = try frame(small, "a")
        let big = try frame(large, "b")
        #expect(try frame(small, "c") == first)
        #expect(try frame(large, "d") == big)
        // Stock zstd reads it back.
        let output = try await runCapturing("/usr/bin/zstd", ["-d", "-c", directory.file("c")])
        #expect(output.status == 0 && output.output == small)
    }

    /// A GIF of 128-256 KB gets level 9's tables for that size capped at 2^17 entries: its
    /// context, kept in the pool by each processing thread, holds about 2 MB instead of 4.2.
    /// (Contexts come from the pool other tests share; none kept there is larger.)
    @Test(.computes) func aMediumEntrysContextStaysNearTwoMegabytes() throws {
        let directory = try TemporaryDirectory()
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let sink = try FileDescriptorSink(creating: directory.file("medium"))
        let compressor = try ZstdFrameCompressor(level: 9, pledgedSize: Int64(bytes.count), sink: sink)
        try bytes.withUnsafeBytes { try compressor.compress($0) }
        try compressor.finish()
        try sink.close()
        #expect(compressor.contextBytes < 2_600_000, "\(compressor.contextBytes) bytes")
    }

    @Test(.computes) func fetchResultsReadBackWhatWasWrittenInAnyOrder() throws {
        func gif(_ n: Int, origin: GIFOrigin = .downloaded) -> GIFFetchResult {
            .stored(
                StoredGIF(
                    exerciseID: String(format: "%06d", n), sha256: String(repeating: String(n % 3), count: 64), bytes: Int64(n % 3),
                    info: GIFInfo(width: 1, height: 1, frameCount: 2, durationMilliseconds: 0, loopCount: 0, version: "89a"),
                    newlyStored: n % 2 == 0, resolutionMismatch: n % 5 == 0, origin: origin))
        }
        func rejection(_ n: Int) -> GIFFetchResult {
            .rejected(FetchRejection(exerciseID: String(format: "%06d", n), url: "u", reason: .httpStatus(500), detail: "d", status: 500))
        }
        // In id order, then a run out of order long enough to be merged in, then odd ones out.
        let order = Array(0..<3000) + Array((3000..<9000).reversed()) + [9500, 9100, 9300]
        var expected: [String: GIFFetchResult] = [:]
        var results = FetchResults()
        for n in order {
            let value = n % 7 == 0 ? rejection(n) : gif(n, origin: [.downloaded, .notModified, .fresh, .lastKnownGood][n % 4])
            results[String(format: "%06d", n)] = value
            expected[String(format: "%06d", n)] = value
        }
        // Taken back and set again, both ways.
        for n in [14, 15, 8001] {
            results[String(format: "%06d", n)] = n == 14 ? gif(n) : rejection(n)
            expected[String(format: "%06d", n)] = n == 14 ? gif(n) : rejection(n)
        }
        results["000016"] = nil
        expected["000016"] = nil
        #expect(results.count == expected.count)
        for (id, value) in expected { #expect(results[id] == value, "\(id)") }
        #expect(results["000016"] == nil && results["999999"] == nil)
        var seen: [String: GIFFetchResult] = [:]
        results.forEach { seen[$0] = $1 }
        #expect(seen == expected)
        #expect(results == FetchResults(expected))
    }

    @Test func aBuildWhoseRecordsAreSpooledWritesTheCatalogTheInMemoryRecordsGive() async throws {
        let server = try startFixture(count: 45)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let text = rapidAPIManifest(server: server)
        let report = try await runBuild(manifest: text, workspace: workspace)
        #expect(report.exitStatus == .success)
        let index = try readIndex(workspace.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        let reader = try PackFrameReader(path: workspace.file("dist/\(pack.file)"))
        let built = try reader.readEntry(
            frameOffset: pack.catalog.frameOffset, frameLength: pack.catalog.frameLength,
            maxSize: pack.catalog.size
        ).1
        let packed = try PackCatalog.decode(from: built)
        #expect(packed.exercises.count == 45)

        // The same catalog fetched into memory (no spool), written by the same writer with the
        // GIFs the pack holds.
        let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let client = try HTTPClient()
        defer { client.shutdown() }
        let catalog = try await CatalogSources.make(for: manifest.source, fetch: manifest.fetch, client: client).fetchCatalog()
        let gifs = Dictionary(uniqueKeysWithValues: packed.exercises.map { ($0.id, $0.gif) })
        #expect(try catalog.exercises.array().allSatisfy { if case .memory = $0.record.storage { true } else { false } })
        let rows = try catalog.exercises.map { PackCatalogWriter.Row(exercise: $0, gif: gifs[$0.id] ?? nil) }
        let written = try PackCatalogWriter.write(
            pack: pack.name, source: packed.source, exercises: rows,
            to: workspace.file("in-memory.json"))
        #expect(written.sha256 == pack.contentDigest)
        // Hashing without writing (how a rebuild finds a pack unchanged) gives the same digest and size.
        #expect(try PackCatalogWriter.digest(pack: pack.name, source: packed.source, sortedExercises: rows) == written)
        #expect(written.bytes == Int64(built.count))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: workspace.file("in-memory.json")))) == built)
    }

    @Test func aNoChangeRebuildOfMoreExercisesThanAPlanBatchSendsListRequestsOnly() async throws {
        let count = GIFFetcher.planBatch + 37  // two batches
        let server = try startFixture(count: count) {
            $0.distinctGIFs = 12
            $0.maxPageSize = 500
        }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let text = rapidAPIManifest(server: server, pageSize: 500)
        let first = try await runBuild(manifest: text, workspace: workspace)
        #expect(first.exitStatus == .success)
        #expect(first.gifs.downloaded == count)
        #expect(first.packs.first?.distinctGIFs == 12)
        #expect(first.catalogChanges?.added.count == count)
        let use = try #require(first.http.fetchWindowUse, "the fetch stage sent requests")
        #expect(use > 0 && use <= 1.0001)
        #expect(try #require(first.http.fetchWindowIdleSlotSeconds) >= 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json")))
        server.resetStats()

        let second = try await runBuild(manifest: text, workspace: workspace)
        #expect(second.exitStatus == .success)
        #expect(server.stats.imageRequests == 0)
        #expect(server.stats.listRequests == server.stats.totalRequests)
        #expect(server.stats.listRequests == 2)
        #expect(second.gifs.skippedFresh == count)
        #expect(second.http.fetchWindowUse == nil, "no image request, no window to measure")
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        #expect(second.catalogChanges == CatalogChanges(hadPrevious: true, added: [], removed: [], changed: []))
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json"))) == before)
    }

    @Test(.computes) func catalogChangesAreComparedInTheStateOneRowAtATime() throws {
        let workspace = try TemporaryDirectory()
        let state = try BuildState(path: workspace.file("state.sqlite"), source: "s")
        let ids = (0..<1500).map { String(format: "%05d", $0) }
        let first = try state.replaceCatalog(ids.lazy.map { (id: $0, fingerprint: "f\($0)") })
        // At most 1,000 ids a list (the first in id order); the counts are whole.
        #expect(!first.hadPrevious && first.added == Array(ids.prefix(1000)) && first.addedCount == 1500)
        #expect(first.removed.isEmpty && first.changed.isEmpty && first.removedCount == 0 && first.changedCount == 0)
        let same = try state.replaceCatalog(ids.lazy.map { (id: $0, fingerprint: "f\($0)") })
        #expect(same == CatalogChanges(hadPrevious: true, added: [], removed: [], changed: []))
        let next = Array(ids.dropFirst(2)) + ["99999"]
        let changes = try state.replaceCatalog(next.lazy.map { (id: $0, fingerprint: $0 == "00700" ? "new" : "f\($0)") })
        #expect(changes == CatalogChanges(hadPrevious: true, added: ["99999"], removed: ["00000", "00001"], changed: ["00700"]))
        #expect(try state.lastCatalogCount() == next.count)
        #expect(try state.replaceCatalog(next.lazy.map { (id: $0, fingerprint: $0 == "00700" ? "new" : "f\($0)") }).changed.isEmpty)
    }
}

import ExerciseDBFixture
import Foundation
import GifPackHTTP
import Synchronization
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Catalog", .timeLimit(.minutes(5)))
struct CatalogTests {
    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test(.computes) func untrustedIdsAreRefusedAndDuplicatesReported() throws {
        let records = try json(
            """
            [{"id": "0001", "name": "a", "bodyPart": "chest"},
             {"id": "../../etc/passwd", "name": "evil"},
             {"id": "0002", "name": "b"},
             {"id": "0001", "name": "a again"},
             {"name": "no id"},
             {"id": "ok_id-3", "name": "c"},
             {"id": "\\u00e9\\u0000x", "name": "odd"},
             {"id": "0004"},
             42]
            """
        ).arrayValue!
        let catalog = CatalogPager.assemble(records: records, pages: 1) {
            RapidAPICatalogSource.normalise($0, base: "https://api.example", resolution: .pixels(360))
        }
        let exercises = try catalog.exercises.array()
        #expect(exercises.map(\.id) == ["0001", "0002", "ok_id-3"])
        #expect(exercises.first?.name == "a", "the first record of a duplicate id is kept")
        #expect(exercises.first?.imageURL == "https://api.example/image?exerciseId=0001&resolution=360")
        #expect(catalog.duplicateIDs == ["0001"])
        #expect(catalog.rejected.map(\.reason) == [.invalidID, .missingID, .invalidID, .missingName, .notAnObject])
        #expect(catalog.rejected[2].id == "\\u{E9}\\u{0}x", "untrusted ids are shown escaped")
    }

    @Test(.computes) func v1RecordsNeedAnHTTPGifURL() throws {
        let records = try json(
            """
            [{"exerciseId": "trmte8s", "name": "a", "gifUrl": "https://static.example/media/trmte8s.gif", "bodyParts": ["waist"]},
             {"exerciseId": "abc", "name": "b", "gifUrl": "file:///etc/passwd"},
             {"exerciseId": "def", "name": "c"}]
            """
        ).arrayValue!
        let catalog = CatalogPager.assemble(records: records, pages: 1, normalise: V1CatalogSource.normalise)
        #expect(try catalog.exercises.map(\.id) == ["trmte8s"])
        #expect(try catalog.exercises.array().first?.bodyParts == ["waist"])
        #expect(catalog.rejected.map(\.reason) == [.missingOrInvalidGIFURL, .missingOrInvalidGIFURL])
    }

    @Test(.computes) func selectorsMatchCaseInsensitivelyOnEveryListedField() throws {
        let exercise = try Exercise(
            id: "0001", name: "x", bodyParts: ["Chest"], equipment: ["dumbbell"], targets: ["pectorals"],
            imageURL: "", raw: .null)
        #expect(Selector().matches(exercise))
        #expect(Selector(bodyParts: ["chest"]).matches(exercise))
        #expect(Selector(bodyParts: ["chest", "back"], equipment: ["DUMBBELL"]).matches(exercise))
        #expect(!Selector(bodyParts: ["chest"], equipment: ["barbell"]).matches(exercise))
        #expect(Selector(ids: ["0001"]).matches(exercise))
        #expect(!Selector(ids: ["0002"]).matches(exercise))
    }

    @Test func pagesAreFetchedInParallelAndAPlanThatCapsThePageSizeLosesNothing() async throws {
        let server = try startFixture(count: 37) { $0.maxPageSize = 10 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, pageSize: 25)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.catalog.exercises == 37, "a page of 10 when 25 were asked for is not the last page")
        #expect(server.stats.listRequests >= 4 && server.stats.listRequests <= 6, "at most two pages past the end on a first run")
        server.resetStats()
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.catalog.exercises == 37)
        #expect(server.stats.listRequests == 4, "with the last catalog's size known, no page past the end")
    }

    @Test(.computes) func theStreamedCatalogIsTheCanonicalJSONOfThePackCatalog() throws {
        let raw = try json(#"{"name": "45\u00b0 side \"bend\"\\ /x\n\u0001", "id": "0001", "list": [1, 2.5, true, null]}"#)
        let exercises = [
            try Exercise(id: "0002", name: "b", bodyParts: [], equipment: [], targets: [], imageURL: "", raw: .object([:])),
            try Exercise(
                id: "0001", name: "45° side \"bend\"\\ /x\n\u{1}", bodyParts: [], equipment: [], targets: [],
                imageURL: "", raw: raw)
        ]
        let gif = GIFMetadata(
            sha256: String(repeating: "a", count: 64), bytes: 10, width: 1, height: 2, frames: 3,
            durationMilliseconds: 40, loopCount: 0)
        let rows = [PackCatalogWriter.Row(exercise: exercises[0], gif: nil), PackCatalogWriter.Row(exercise: exercises[1], gif: gif)]
        let source = SourceDescription(kind: "exercisedb-rapidapi", baseURL: nil, resolution: 180)
        let workspace = try TemporaryDirectory()
        let written = try PackCatalogWriter.write(pack: "all", source: source, exercises: rows, to: workspace.file("c.json"))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: workspace.file("c.json"))))
        #expect(written.sha256 == sha256Hex(bytes))
        #expect(written.bytes == Int64(bytes.count))
        let expected = PackCatalog(
            pack: "all", source: source,
            exercises: [
                PackExercise(id: "0001", name: exercises[1].name, gif: gif, data: raw),
                PackExercise(id: "0002", name: "b", gif: nil, data: .object([:]))
            ])
        #expect(try PackCatalog.decode(from: bytes) == expected)
        #expect(bytes == (try expected.encoded()), "the same canonical bytes JSONEncoder gives")
    }

    @Test(.computes) func outOfOrderDuplicatesKeepTheFirstRecordInCatalogOrder() throws {
        let names = ["0003": ["c1", "c2"], "0001": ["a1", "a2", "a3"], "0002": ["b1"]]
        let order = ["0003", "0001", "0003", "0002", "0001", "0001"]
        var seen: [String: Int] = [:]
        let records: [JSONValue] = order.map { id in
            defer { seen[id, default: 0] += 1 }
            return .object(["id": .string(id), "name": .string(names[id]![seen[id, default: 0]])])
        }
        // Split over pages as the pager adds them; in memory, and spooled as a build does.
        let workspace = try TemporaryDirectory()
        for spool in [nil, try RecordSpool(directory: workspace.path)] {
            var assembler = CatalogPager.Assembler(expected: 2, spool: spool)
            let normalise = { (record: JSONValue) in RapidAPICatalogSource.normalise(record, base: "https://api.example", resolution: .pixels(180)) }
            try assembler.add(records[0..<2].map(normalise))
            try assembler.add(records[2...].map(normalise))
            let catalog = try assembler.catalog(pages: 2)
            #expect(try catalog.exercises.map(\.id) == ["0001", "0002", "0003"])
            #expect(try catalog.exercises.map(\.name) == ["a1", "b1", "c1"])
            #expect(catalog.duplicateIDs == ["0001", "0003"])
            #expect(
                try catalog.exercises.map { String(decoding: try $0.record.bytes(), as: UTF8.self) }
                    == [#"{"id":"0001","name":"a1"}"#, #"{"id":"0002","name":"b1"}"#, #"{"id":"0003","name":"c1"}"#])
            if spool != nil, case .memory = catalog.exercises.storage { Issue.record("the spooled catalog is in memory") }
        }
    }

    @Test(.computes) func aCatalogIsSortedByIDInPlaceWhateverOrderItCameIn() throws {
        let ids = (0..<300).map { String(format: "%05d", ($0 * 7919) % 1000) }
        let exercises = try ids.map {
            try Exercise(
                id: $0, name: "n\($0)", bodyParts: [], equipment: [], targets: [],
                imageURL: "http://h/\($0).gif", raw: .string($0))
        }
        for input in [exercises, exercises.reversed(), exercises.sorted { $0.id < $1.id }, [exercises[0]], []] {
            let catalog = Catalog(exercises: input, rejected: [], duplicateIDs: [], pagesFetched: 1)
            #expect(try catalog.exercises.array() == input.sorted { $0.id < $1.id })
        }
    }

    /// A build cancelled while a catalog page waits to be asked again ends that page with the
    /// cancellation, as a cancelled request does, and makes no other attempt (the wait's
    /// cancellation was once swallowed, and the page tried again).
    @Test func aCancelledRetryWaitEndsThePageWithoutAnotherAttempt() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .echoKeyInErrorBody(status: 503) }
        defer { server.stop() }
        let manifest = try ManifestLoader().parse(rapidAPIManifest(server: server), environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let attempts = Mutex<[CatalogAttemptEvent.Outcome]>([])
        var pager = CatalogPager(source: manifest.source, fetch: manifest.fetch, client: try HTTPClient(maxConnections: 2))
        pager.observer = { event in
            guard case .catalogAttempt(let attempt) = event else { return }
            attempts.withLock { $0.append(attempt.outcome) }
            // Told of the retry, the page's own task is cancelled before it starts waiting.
            if attempt.outcome == .retry { withUnsafeCurrentTask { $0?.cancel() } }
        }
        let page = Task { [pager] in
            try await pager.page(offset: 0, budget: CatalogBudget(maxBytes: manifest.fetch.maxCatalogBytes))
        }
        let result = await page.result
        #expect(throws: CatalogError.transport(url: pager.pageURL(offset: 0), .cancelled)) { try result.get() }
        #expect(attempts.withLock { $0 } == [.retry], "no attempt after the cancelled wait")
        #expect(server.stats.listRequests == 1)
    }

    @Test func aDowngradedResolutionIsFlaggedInTheReport() async throws {
        let server = try startFixture(count: 4) { $0.planMaxResolution = 180 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server).replacingOccurrences(of: "resolution: 180", with: "resolution: 360")
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.resolutionMismatches.count == 4)
        #expect(report.resolutionMismatches.first?.requested == 360)
        #expect(report.resolutionMismatches.first?.width == server.configuration.gifDimension)
        #expect(report.gifs.resolutionMismatches == 4)
    }

    @Test func perExerciseListsOfTheReportAreCutAtTheLimitWhileTheirCountsStayWhole() async throws {
        let server = try startFixture(count: 5) { $0.planMaxResolution = 180 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        for id in ids.suffix(2) { server.setDefaultFault(.status(404), forExercise: id) }
        let workspace = try TemporaryDirectory()
        let text = rapidAPIManifest(server: server).replacingOccurrences(of: "resolution: 180", with: "resolution: 360")
        let manifest = try ManifestLoader().parse(text, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        var options = BuildOptions(outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"))
        options.reportListLimit = 2
        let report = await BuildPipeline(manifest: manifest, options: options).run()
        #expect(report.exitStatus == .partial, "\(report.message)")
        #expect(report.gifs.resolutionMismatches == 3)
        #expect(report.resolutionMismatches.map(\.exerciseID) == Array(ids.prefix(2)), "the first ones, in id order")
        #expect(report.gifs.rejected == 2)
        #expect(report.rejections.count == 2)
        options.reportListLimit = 1
        let again = await BuildPipeline(manifest: manifest, options: options).run()
        #expect(again.gifs.resolutionMismatches == 3)
        #expect(again.resolutionMismatches.map(\.exerciseID) == [ids[0]])
        #expect(again.rejections.map(\.exerciseID) == [ids[3]])
        #expect(again.gifs.rejected == 2)
    }

    @Test func theCommandLineRefusesABadManifestWithStatusTwoAndTheKeyPath() async throws {
        let workspace = try TemporaryDirectory()
        let path = try workspace.write(
            """
            source:
              kind: exercisedb-v1
              base_url: http://127.0.0.1:9/api/v1
            packs:
              - name: a
              - name: b
                selector:
                  bodyPart: 7
                  muscles: [x]
            """, to: "bad.yaml")
        let result = try await run(productPath("gifpack"), ["build", "--manifest", path, "--out", workspace.file("dist")])
        #expect(result.status == 2)
        #expect(result.error.contains("packs[1].selector.muscles"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        let missingKey = try workspace.write("source:\n  kind: exercisedb-rapidapi\n  api_key_env: GIFPACK_UNSET_VARIABLE_X\n", to: "key.yaml")
        let keyResult = try await run(productPath("gifpack"), ["build", "--manifest", missingKey])
        #expect(keyResult.status == 2)
        #expect(keyResult.error.contains("source.api_key_env") && keyResult.error.contains("GIFPACK_UNSET_VARIABLE_X"))
    }
}

@Suite("Index JSON", .timeLimit(.minutes(5)))
struct IndexJSONTests {
    func sample(emptyPack: Bool) -> PackIndex {
        let location = EntryLocation(path: "gifs/\(String(repeating: "b", count: 64)).gif", size: 5, frameOffset: 10, frameLength: 20)
        let full = PackDescription(
            name: "all", version: 3, file: "packs/all-v3.tar.zst", bytes: 100, sha256: "ab", entryCount: 2,
            uncompressedBytes: 2048, contentDigest: "cd",
            catalog: EntryLocation(path: "catalog.json", size: 9, frameOffset: 0, frameLength: 10),
            gifs: [GIFEntry(sha256: String(repeating: "b", count: 64), location: location)],
            exercises: [ExerciseRef(id: "0002", gif: nil), ExerciseRef(id: "0001", gif: String(repeating: "b", count: 64))])
        var packs = [full]
        if emptyPack {
            packs.append(
                PackDescription(
                    name: "none", version: 1, file: "packs/none-v1.tar.zst", bytes: 1, sha256: "x", entryCount: 1,
                    uncompressedBytes: 1, contentDigest: "y", catalog: full.catalog, gifs: [], exercises: []))
        }
        return PackIndex(
            generator: "gifpack \"test\"/1\n", source: SourceDescription(kind: "exercisedb-v1", baseURL: "http://h/api/v1", resolution: nil),
            packs: packs)
    }

    @Test(.computes) func theWriterGivesJSONEncodersCanonicalBytes() throws {
        let index = sample(emptyPack: false)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var expected = try encoder.encode(index)
        expected.append(0x0A)
        #expect(try index.encoded() == expected)
    }

    @Test(.computes) func emptyListsStillRoundTrip() throws {
        let index = sample(emptyPack: true)
        #expect(try PackIndex.decode(from: index.encoded()) == index)
    }
}

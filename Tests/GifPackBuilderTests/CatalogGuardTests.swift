import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The guards between a catalog and the packs made from it: a v1 total that disagrees with the pages, a number
/// from the API gifpack cannot use, a catalog that lost more of the last one than `max_removed`
/// allows, and a pack whose selector chooses nothing. Each stops the build before any pack or index is
/// written; the GIF requests sent while the list arrived are at most one per list request
/// (EarlyFetchTests).
@Suite("Catalog guards", .timeLimit(.minutes(5)))
struct CatalogGuardTests {
    private func environment() -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["SOURCE_DATE_EPOCH"] = "1700000000"
        return environment
    }

    private func cli(_ arguments: [String]) async throws -> ProcessResult {
        try await run(productPath("gifpack"), arguments, environment: environment())
    }

    // MARK: A v1 total that disagrees with the pages

    /// A source whose `totalExercises` says 25 of a longer list. The pages are followed to the
    /// end of `nextPage`, and the disagreement is a catalog error naming both numbers; no pack or
    /// index is written (it used to write packs of the first 25-30 exercises with exit 0).
    @Test(arguments: [(10, 25), (25, 25), (10, 50), (10, 1000)])
    func aV1TotalThatDisagreesWithThePagesIsACatalogError(pageSize: Int, said: Int) async throws {
        let server = try startFixture(count: 45)
        defer { server.stop() }
        server.setV1ReportedTotal(said)
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: v1Manifest(server, pageSize: pageSize), workspace: workspace)
        #expect(report.exitStatus == .failed, "\(report.message)")
        #expect(report.message.contains("metadata.totalExercises is \(said)"), "\(report.message)")
        #expect(report.message.contains("held 45 records"), "\(report.message)")
        #expect(server.stats.imageRequests <= server.stats.listRequests, "GIFs asked for while the list arrived, at most one per list request: \(server.stats)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    /// A true total costs no request past the end: the pages it announces, no more.
    @Test func aTrueV1TotalIsFollowedToItsLastPageAndNoFurther() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: v1Manifest(server, pageSize: 10), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.catalog.exercises == 40)
        #expect(server.stats.listRequests == 4, "40 exercises in pages of 10, the last one saying there is no next")
    }

    // MARK: Numbers from the API never crash

    /// A negative `totalExercises` trapped in the page cache (`UInt64(-5)`, exit 132, no report).
    /// Run as the CLI, so the old trap shows as a status instead of taking the test runner down.
    @Test(arguments: [-5, -1, Int.min])
    func aNegativeV1TotalIsACatalogErrorNotACrash(said: Int) async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        server.setV1ReportedTotal(said)
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(v1Manifest(server), to: "manifest.yaml")
        let result = try await cli(["build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache")])
        #expect(result.status == 1, "status \(result.status): \(result.error)")
        #expect(result.error.contains("metadata.totalExercises is \(said)"), "\(result.error)")
        #expect(server.stats.imageRequests == 0)
        let report = try String(contentsOfFile: workspace.file("dist/report.json"), encoding: .utf8)
        #expect(report.contains("metadata.totalExercises is \(said)"))
    }

    /// Every shape a count can come in: only a whole number from 0 is one.
    @Test(.computes) func countsFromTheAPIAreChecked() throws {
        func count(_ value: JSONValue?) -> Result<Int?, CatalogError> {
            Result { () throws(CatalogError) -> Int? in try CatalogPager.count(value, field: "metadata.totalExercises", url: "u") }
        }
        #expect(try count(nil).get() == nil)
        #expect(try count(.null).get() == nil)
        #expect(try count(.integer(0)).get() == 0)
        #expect(try count(.integer(1500)).get() == 1500)
        #expect(try count(.integer(Int64.max)).get() == Int(Int64.max))
        for (value, shown) in [
            (JSONValue.integer(-1), "-1"), (.integer(Int64.min), "\(Int64.min)"), (.number(1.5), "1.5"),
            (.number(1e300), "1e+300"), (.string("105"), "the string \"105\""), (.bool(true), "true"),
            (.array([]), "an array"), (.object([:]), "an object"),
            (.string("\u{1B}[2J"), "the string \"\\u{1B}[2J\"")
        ] {
            #expect(throws: CatalogError.invalidNumber(url: "u", field: "metadata.totalExercises", value: shown)) {
                try count(value).get()
            }
        }
    }

    // MARK: max_removed

    /// A catalog that lost half of the last one (an API answering part of its list) stops the build
    /// with exit 8 before the fetch proper, leaving the output's index and the remembered catalog
    /// as they were; `--max-removed 100%` accepts it.
    @Test func aCatalogThatLostMoreThanMaxRemovedStopsTheBuild() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifestText = rapidAPIManifest(server: server, packs: "packs:\n  - name: all")
        let first = try await runBuild(manifest: manifestText, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let indexBefore = try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json")))

        server.listOnly(first: 20)
        server.resetStats()
        let second = try await runBuild(manifest: manifestText, workspace: workspace)
        #expect(second.exitStatus == .catalogShrank, "\(second.message)")
        #expect(ExitStatus.catalogShrank.rawValue == 8)
        for part in ["20 of the last catalog's 40 exercises", "fetch.max_removed (10%)", "--max-removed 100%"] {
            #expect(second.message.contains(part), "\(second.message)")
        }
        #expect(server.stats.imageRequests <= server.stats.listRequests, "GIFs asked for while the list arrived, at most one per list request: \(server.stats)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json"))) == indexBefore)

        // The state still remembers 40: the same short list is refused again, not taken as the norm.
        let third = try await runBuild(manifest: manifestText, workspace: workspace)
        #expect(third.exitStatus == .catalogShrank, "\(third.message)")

        // The CLI's override accepts it (and a bad value is a usage error).
        let manifest = try workspace.write(manifestText, to: "manifest.yaml")
        let arguments = ["build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache")]
        let refused = try await cli(arguments + ["--max-removed", "lots"])
        #expect(refused.status == 2, "\(refused.error)")
        #expect(refused.error.contains("--max-removed"), "\(refused.error)")
        let plain = try await cli(arguments)
        #expect(plain.status == 8, "\(plain.error)")
        #expect(plain.error.contains("20 of the last catalog's 40 exercises"), "\(plain.error)")
        let accepted = try await cli(arguments + ["--max-removed", "100%"])
        #expect(accepted.status == 0, "\(accepted.error)")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.first { $0.name == "all" }?.exercises.count == 20)
    }

    /// Within the limit the build goes on; a count limit counts exercises.
    @Test func removalsWithinMaxRemovedAreAccepted() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifestText = rapidAPIManifest(server: server)
        #expect(try await runBuild(manifest: manifestText, workspace: workspace).exitStatus == .success)
        server.listOnly(first: 36)  // 4 of 40: 10%, the default's limit
        let within = try await runBuild(manifest: manifestText, workspace: workspace)
        #expect(within.exitStatus == .success, "\(within.message)")
        #expect(within.catalogChanges?.removedCount == 4)

        server.listOnly(first: 33)  // 3 more, against a count of 2
        let counted = try await runBuild(manifest: rapidAPIManifest(server: server, fetch: "  max_removed: 2"), workspace: workspace)
        #expect(counted.exitStatus == .catalogShrank, "\(counted.message)")
        #expect(counted.message.contains("3 of the last catalog's 36 exercises"), "\(counted.message)")
        #expect(counted.message.contains("fetch.max_removed (2)"), "\(counted.message)")
    }

    @Test(.computes) func maxRemovedIsParsedAndBadValuesNameTheKey() throws {
        let minimal = "source:\n  kind: exercisedb-v1\n"
        func load(_ value: String) throws -> Manifest {
            try ManifestLoader().parse(minimal + "fetch:\n  max_removed: \(value)\n", environment: [:])
        }
        #expect(try ManifestLoader().parse(minimal, environment: [:]).fetch.maxRemoved == .percent(10))
        #expect(try load("25").fetch.maxRemoved == .count(25))
        #expect(try load("0").fetch.maxRemoved == .count(0))
        #expect(try load("\"2.5%\"").fetch.maxRemoved == .percent(2.5))
        #expect(try load("100%").fetch.maxRemoved == .percent(100))
        for bad in ["lots", "-1", "101%", "-5%", "nan%", "1e300%", "\"\"", "[1]"] {
            do {
                _ = try load(bad)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(String(describing: error).contains("fetch.max_removed"), "\(bad): \(error)")
            }
        }
        #expect(MissingAllowance.percent(10).description == "10%")
        #expect(MissingAllowance.percent(2.5).description == "2.5%")
    }

    // MARK: Empty selectors

    /// `bodyPart: legs` used to make an empty pack with exit 0. Now: exit 2 before the fetch
    /// proper, naming the pack, the field and the catalog's values, nearest first, with counts.
    @Test func aSelectorThatMatchesNothingIsRefusedWithTheNearestValues() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let packs = """
            packs:
              - name: all
              - name: legs
                selector:
                  bodyPart: [legs]
            """
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, packs: packs), workspace: workspace)
        #expect(report.exitStatus == .usage, "\(report.message)")
        #expect(server.stats.imageRequests <= server.stats.listRequests, "GIFs asked for while the list arrived, at most one per list request: \(server.stats)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        let message = report.message
        #expect(message.contains("pack \"legs\" selects no exercise"), "\(message)")
        #expect(message.contains("packs[1].selector.bodyPart [legs]"), "\(message)")
        #expect(message.contains("gifpack catalog --values bodyPart"), "\(message)")
        // The catalog's values with their counts; those holding "legs" come first.
        let counts = Dictionary(grouping: server.catalog.exercises, by: \.bodyPart).mapValues(\.count)
        let legs = counts.keys.filter { $0.contains("legs") }.sorted { counts[$0]! != counts[$1]! ? counts[$0]! > counts[$1]! : $0 < $1 }
        #expect(!legs.isEmpty, "the fixture has upper and lower legs")
        let listed = legs.map { "\($0) (\(counts[$0]!))" }.joined(separator: ", ")
        #expect(message.contains("nearest first: \(listed)"), "\(message)")
    }

    /// Fields that each match some exercise but none together: the values of one field among what
    /// the others choose.
    @Test func aCombinationThatMatchesNothingSaysSo() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let exercises = server.catalog.exercises
        let waist = exercises.filter { $0.bodyPart == "waist" }
        let missing = Set(exercises.map(\.equipment)).subtracting(waist.map(\.equipment)).sorted()
        try #require(!waist.isEmpty && !missing.isEmpty)
        let packs = """
            packs:
              - name: odd
                selector:
                  bodyPart: [waist]
                  equipment: ["\(missing[0])"]
            """
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server, packs: packs), workspace: workspace)
        #expect(report.exitStatus == .usage, "\(report.message)")
        #expect(
            report.message.contains("packs[0].selector bodyPart [waist] and equipment [\(missing[0])] match no exercise together"),
            "\(report.message)")
        let withWaist = Dictionary(grouping: waist, by: \.equipment).mapValues(\.count)
        for (value, count) in withWaist { #expect(report.message.contains("\(value) (\(count))"), "\(report.message)") }
        #expect(server.stats.imageRequests <= server.stats.listRequests, "GIFs asked for while the list arrived, at most one per list request: \(server.stats)")
    }

    @Test(.computes) func nearestValuesComeFirst() {
        let counts = [
            ValueCount(value: "back", count: 12), ValueCount(value: "upper legs", count: 6),
            ValueCount(value: "lower legs", count: 9), ValueCount(value: "chest", count: 8),
            ValueCount(value: "cardio", count: 2)
        ]
        #expect(CatalogValues.nearest(to: ["legs"], among: counts).map(\.value).prefix(2) == ["lower legs", "upper legs"])
        #expect(CatalogValues.nearest(to: ["chset"], among: counts).first?.value == "chest")
        #expect(CatalogValues.nearest(to: ["card"], among: counts).first?.value == "cardio")
    }

    // MARK: gifpack catalog --values

    @Test func theCatalogCommandListsAFieldsValuesWithCounts() async throws {
        let server = try startFixture(count: 40)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let expected = Dictionary(grouping: server.catalog.exercises, by: \.equipment).mapValues(\.count)
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let result = try await cli(["catalog", "--manifest", manifest, "--values", "equipment"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output == expected.map { "\($0.key)\t\($0.value)\n" }.joined())
        #expect(result.error.contains("catalog: 40 exercises, \(expected.count) equipment value(s)"), "\(result.error)")
        #expect(server.stats.imageRequests == 0)

        let json = try await cli(["catalog", "--manifest", manifest, "--values", "bodyPart", "--json"])
        #expect(json.status == 0, "\(json.error)")
        struct Document: Decodable { var field: String; var exercises: Int; var values: [ValueCount] }
        let document = try JSONDecoder().decode(Document.self, from: Data(json.output.utf8))
        #expect(document.field == "bodyPart" && document.exercises == 40)
        let bodyParts = Dictionary(grouping: server.catalog.exercises, by: \.bodyPart).mapValues(\.count)
        #expect(document.values.count == bodyParts.count)
        #expect(document.values.allSatisfy { bodyParts[$0.value] == $0.count })
        #expect(document.values.map(\.count) == document.values.map(\.count).sorted(by: >))

        let bad = try await cli(["catalog", "--manifest", manifest, "--values", "colour"])
        #expect(bad.status == 2, "\(bad.error)")
        let wrongKey = try await run(
            productPath("gifpack"), ["catalog", "--manifest", manifest, "--values", "target"],
            environment: ["GIFPACK_TEST_KEY": "not-the-key"])
        #expect(wrongKey.status == 4, "\(wrongKey.error)")
        #expect(!wrongKey.error.contains("not-the-key"))
    }
}

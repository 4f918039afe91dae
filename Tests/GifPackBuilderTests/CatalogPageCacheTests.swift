import Crypto
import ExerciseDBFixture
import Foundation
import GifPackFormat
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// What makes a rebuild cost little when the catalog did not change: list pages reused from the
/// last run's spool by their body's digest, the state's catalog comparison skipped on an equal
/// digest, and each exercise decided once. Each must give exactly what a build from nothing gives.
@Suite("Catalog page cache", .timeLimit(.minutes(5)))
struct CatalogPageCacheTests {
    /// The first pack's `catalog.json`, as written in `dist`.
    private func catalogJSON(_ dist: String) throws -> [UInt8] {
        let index = try readIndex("\(dist)/index.json")
        let pack = try #require(index.packs.first)
        let reader = try PackFrameReader(path: "\(dist)/\(pack.file)")
        return try reader.readEntry(
            frameOffset: pack.catalog.frameOffset, frameLength: pack.catalog.frameLength,
            maxSize: pack.catalog.size
        ).1
    }

    private func cacheBytes(_ workspace: TemporaryDirectory) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: workspace.file("cache/catalog-pages"))))
    }

    private func writeCache(_ bytes: [UInt8], _ workspace: TemporaryDirectory) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: workspace.file("cache/catalog-pages")))
    }

    @Test func unchangedPagesAreReusedAndAChangedOneIsParsedGivingWhatABuildFromNothingGives() async throws {
        let server = try startFixture(count: 35)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)  // 10 a page: pages at 0, 10, 20 and 30
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        #expect(first.catalog.pagesReused == 0)
        #expect(FileManager.default.fileExists(atPath: workspace.file("cache/catalog-pages")))
        let written = try catalogJSON(workspace.file("dist"))

        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.catalog.pages == 4 && second.catalog.pagesReused == 4 && second.catalog.exercises == 35)
        #expect(second.catalogChanges == CatalogChanges(hadPrevious: true, added: [], removed: [], changed: []))
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        #expect(try catalogJSON(workspace.file("dist")) == written)

        // One record changes upstream (the fifth of the second page): that page is parsed again.
        let renamed = server.catalog.exercises[14].id
        server.renameExercise(id: renamed, to: "renamed upstream")
        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.catalog.pagesReused == 3)
        #expect(third.catalogChanges?.changed == [renamed])
        #expect(third.packs.map(\.version) == [2])
        let scratch = try TemporaryDirectory()
        let fromNothing = try await runBuild(manifest: manifest, workspace: scratch)
        #expect(fromNothing.catalog.pagesReused == 0)
        let incremental = try catalogJSON(workspace.file("dist"))
        #expect(incremental == (try catalogJSON(scratch.file("dist"))), "the same catalog.json, byte for byte")
        #expect(String(decoding: incremental, as: UTF8.self).contains("renamed upstream"))

        // The run that parsed a page left a cache that knows it.
        let fourth = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(fourth.catalog.pagesReused == 4 && fourth.packs.map(\.outcome) == ["unchanged"])
    }

    @Test func aDamagedOrForeignCacheIsParsedAroundAndNeverTrusted() async throws {
        let server = try startFixture(count: 25)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)  // pages at 0, 10 and 20
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let written = try catalogJSON(workspace.file("dist"))
        let whole = try cacheBytes(workspace)

        // One flipped bit in the first page's exercises (just past the 64-byte header): that page
        // no longer hashes to what was written and is parsed; the two others are reused.
        var flipped = whole
        flipped[64 + 90] ^= 0x01
        try writeCache(flipped, workspace)
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.catalog.pagesReused == 2 && second.catalog.exercises == 25)
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        #expect(try catalogJSON(workspace.file("dist")) == written)
        #expect(try await runBuild(manifest: manifest, workspace: workspace).catalog.pagesReused == 3, "written whole again")

        // A damaged directory (its last byte), a file cut short, or no cache at all: every page is parsed.
        var damaged = try cacheBytes(workspace)
        damaged[damaged.count - 1] ^= 0x01
        for bytes in [damaged, Array(whole.prefix(whole.count / 2)), Array("not a page cache".utf8), []] {
            try writeCache(bytes, workspace)
            let report = try await runBuild(manifest: manifest, workspace: workspace)
            #expect(report.exitStatus == .success, "\(report.message)")
            #expect(report.catalog.pagesReused == 0 && report.catalog.exercises == 25)
            #expect(report.packs.map(\.outcome) == ["unchanged"])
            #expect(try catalogJSON(workspace.file("dist")) == written)
        }

        // Other source settings: the cache made for 180 px is not used for 360 px.
        let other = manifest.replacingOccurrences(of: "resolution: 180", with: "resolution: 360")
        server.resetStats()
        let resized = try await runBuild(manifest: other, workspace: workspace)
        #expect(resized.catalog.pagesReused == 0)
        #expect(server.stats.imageRequests == 25, "every GIF asked for at the new size")
    }

    @Test func aPageHoldingTheKeyIsNeverReusedNorHashed() async throws {
        let server = try startFixture(count: 12) { $0.listFault = .echoKeyInRecord }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.catalog.pagesReused == 0 && second.catalog.exercises == 12)
        let cache = String(decoding: try cacheBytes(workspace), as: UTF8.self)
        #expect(!cache.contains(testAPIKey))
        #expect(cache.contains("echo: \(SecretRedactor.replacement)"), "the records are kept redacted, as packs have them")
    }

    @Test(.computes) func reusedExercisesAreRenumberedForTheNewSpoolsListsAndTemplates() throws {
        let workspace = try TemporaryDirectory()
        let template = RapidAPICatalogSource.imageTemplate(base: "https://api.example", resolution: .pixels(180))
        let exercises = try [
            Exercise(
                id: "0001", name: "sit-up", bodyParts: ["waist"], equipment: ["body weight"], targets: ["abs"],
                imageTemplate: template, raw: .object(["id": .string("0001")])),
            Exercise(
                id: "0002", name: "curl", bodyParts: ["upper arms"], equipment: ["dumbbell"], targets: ["biceps"],
                imageURL: "https://cdn.example/0002.gif", raw: .object(["id": .string("0002")]))
        ]
        let old = try RecordSpool(directory: workspace.path)
        let written = try old.appendPage(exercises: exercises)
        var bytes = try old.read(offset: written.start, length: written.length)
        #expect(RecordDigest(SHA256.hash(data: bytes)) == written.digest)

        // The new spool already numbers other lists and another template first.
        let new = try RecordSpool(directory: workspace.path)
        _ = try new.append(exercises: [
            Exercise(
                id: "0000", name: "other", bodyParts: ["back"], equipment: ["band"], targets: ["lats"],
                imageTemplate: ImageURLTemplate(prefix: "https://x/", suffix: ".gif"),
                raw: .object([:]))
        ])
        let reused = try #require(try new.appendReused(&bytes, tables: old.tablesNow, digest: written.digest))
        #expect(reused.ids == ["0001", "0002"])
        #expect(try ExerciseList(spool: new, slots: reused.0.slots).array() == exercises)
        #expect(reused.0.digest != written.digest, "renumbered bytes, hashed anew")
        #expect(reused.0.digest == RecordDigest(SHA256.hash(data: try new.read(offset: reused.0.start, length: reused.0.length))))
        // Into a spool numbering alike, nothing changes and the known digest is kept.
        let same = try RecordSpool(directory: workspace.path)
        var again = try old.read(offset: written.start, length: written.length)
        let copied = try #require(try same.appendReused(&again, tables: old.tablesNow, digest: written.digest))
        let original = try old.read(offset: written.start, length: written.length)
        #expect(copied.0.digest == written.digest && again == original)

        // Bytes that do not read as exercises are refused, and nothing is written.
        var cut = Array(try old.read(offset: written.start, length: written.length).dropLast(3))
        #expect(try new.appendReused(&cut, tables: old.tablesNow) == nil)
        var badList = try old.read(offset: written.start, length: written.length)
        let listAt = RecordSpool.fixedHeader + 2 + 4 + 4 + "sit-up".utf8.count  // after the id and the name
        badList[listAt] = 0xFF
        #expect(try new.appendReused(&badList, tables: old.tablesNow) == nil)
    }

    @Test(.computes) func anEqualCatalogDigestSkipsTheComparisonAndAnyOtherDigestRunsIt() throws {
        let workspace = try TemporaryDirectory()
        let state = try BuildState(path: workspace.file("state.sqlite"), source: "s")
        let ids = (0..<300).map { String(format: "%05d", $0) }
        func rows(_ ids: [String]) -> some Sequence<(id: String, fingerprint: String)> { ids.lazy.map { (id: $0, fingerprint: "f\($0)") } }
        #expect(try state.replaceCatalog(rows(ids), digest: "d1").added == ids)
        // The same digest: nothing is compared, so rows that differ are not even read.
        #expect(try state.replaceCatalog(rows(["zzz"]), digest: "d1") == CatalogChanges(hadPrevious: true, added: [], removed: [], changed: []))
        #expect(try state.lastCatalogCount() == 300)
        // Another digest: compared as before.
        #expect(try state.replaceCatalog(rows(Array(ids.dropFirst())), digest: "d2").removed == [ids[0]])
        // No digest: compared, and the stored one is forgotten, so "d2" no longer skips anything.
        #expect(try state.replaceCatalog(rows(ids), digest: nil).added == [ids[0]])
        let changes = try state.replaceCatalog(rows(["zzz"]), digest: "d2")
        #expect(changes.added == ["zzz"] && changes.removed == ids)
    }

    @Test(.computes) func theCatalogDigestIsTheSameSpooledOrInMemoryAndFollowsEveryFingerprint() throws {
        let workspace = try TemporaryDirectory()
        func exercise(_ id: String, _ name: String) throws -> Exercise {
            try Exercise(
                id: id, name: name, bodyParts: ["waist"], equipment: [], targets: ["abs"],
                imageURL: "https://cdn.example/\(id).gif", raw: .object(["id": .string(id), "name": .string(name)]))
        }
        let exercises = try [exercise("0001", "a"), exercise("0002", "b"), exercise("0003", "c")]
        let spool = try RecordSpool(directory: workspace.path)
        let spooled = Catalog(
            sorted: ExerciseList(spool: spool, slots: try spool.append(exercises: exercises)), rejected: [],
            duplicateIDs: [], pagesFetched: 1)
        let inMemory = Catalog(exercises: exercises, rejected: [], duplicateIDs: [], pagesFetched: 1)
        #expect(try CatalogFingerprint.digest(of: spooled) == CatalogFingerprint.digest(of: inMemory))
        #expect(try CatalogFingerprint.digest(of: spooled).count == 64)
        var renamed = exercises
        renamed[1] = try exercise("0002", "B")
        #expect(
            try CatalogFingerprint.digest(of: Catalog(exercises: renamed, rejected: [], duplicateIDs: [], pagesFetched: 1))
                != CatalogFingerprint.digest(of: inMemory))
        #expect(
            try CatalogFingerprint.digest(of: Catalog(exercises: Array(exercises.dropLast()), rejected: [], duplicateIDs: [], pagesFetched: 1))
                != CatalogFingerprint.digest(of: inMemory))
    }

    @Test(.computes) func positionSetsFindTheirMembersAcrossWords() {
        var set = PositionSet(range: 100..<300)
        #expect(set.first(from: 0) == nil && set.count == 0)
        for position in [100, 163, 164, 299, 164] { set.insert(position) }
        #expect(set.count == 4)
        #expect(set.contains(163) && set.contains(299) && !set.contains(165) && !set.contains(99) && !set.contains(300))
        #expect(set.first(from: 0) == 100)
        #expect(set.first(from: 101) == 163)
        #expect(set.first(from: 165) == 299)
        #expect(set.first(from: 300) == nil)
    }

    @Test func aRebuildDecidesEachExerciseOnceAndRequestsOnlyWhatIsDue() async throws {
        let server = try startFixture(count: 30)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 7d")
        _ = try await runBuild(manifest: manifest, workspace: workspace)
        // One GIF is deleted from the cache: only that exercise is requested again.
        let index = try readIndex(workspace.file("dist/index.json"))
        let gif = try #require(index.packs.first?.gifs.first)
        let users = Set(index.packs.first?.exercises.filter { $0.gif == gif.sha256 }.map(\.id) ?? [])
        try FileManager.default.removeItem(atPath: CacheLayout(root: workspace.file("cache")).blobPath(sha256: gif.sha256))
        server.resetStats()
        let events = EventRecorder()
        let manifestValue = try ManifestLoader().parse(manifest, environment: ["GIFPACK_TEST_KEY": testAPIKey])
        let options = BuildOptions(
            outputDirectory: workspace.file("dist"), cacheDirectory: workspace.file("cache"),
            sourceDateEpoch: 1_700_000_000)
        let report = await BuildPipeline(manifest: manifestValue, options: options) { events.append($0) }.run()
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.gifs.skippedFresh == 30 - users.count)
        #expect(server.stats.imageRequests == users.count)
        let planned = events.all.compactMap { event -> (Int, Int)? in
            if case .fetchPlanned(let total, let toRequest) = event { return (total, toRequest) } else { return nil }
        }
        #expect(planned.count == 1 && planned.first?.0 == 30 && planned.first?.1 == users.count)
    }
}

/// Collects a build's events from whatever thread sends them.
private final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [BuildEvent] = []

    func append(_ event: BuildEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    var all: [BuildEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }
}

/// A build killed while its spool becomes the page cache (linked in `tmp/`, not yet renamed).
@Suite("Catalog page cache: a killed build", .timeLimit(.minutes(5)))
struct CatalogPageCacheCrashTests {
    @Test func aBuildKilledWhileNamingItsPageCacheLeavesNothingTheNextRunKeeps() async throws {
        try #require(CrashPoint.isCompiledIn, "swift test builds debug, which has the crash hook")
        let server = try startFixture(count: 25)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let arguments = ["build", "--manifest", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "--quiet"]
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        environment["SOURCE_DATE_EPOCH"] = "1700000000"
        var crashing = environment
        crashing["GIFPACK_CRASH_AT"] = RecordSpool.namingCrashPoint
        let killed = try await run(productPath("gifpack"), arguments, environment: crashing)
        #expect(killed.status == 128 + 9 || killed.status == 9, "expected SIGKILL, got \(killed.status): \(killed.error)")
        let left = try FileManager.default.contentsOfDirectory(atPath: workspace.file("cache/tmp"))
        // The linked spool, and any GIF downloads the early fetch had in flight: names tmp/'s clean-up knows.
        #expect(!left.isEmpty && left.allSatisfy { CacheLayout.isOwnDownload($0) }, "the linked spool, under a name tmp/'s clean-up knows: \(left)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("cache/catalog-pages")))

        let finished = try await run(productPath("gifpack"), arguments, environment: environment)
        #expect(finished.status == 0, "\(finished.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.file("cache/tmp")).isEmpty, "cleared")
        #expect(FileManager.default.fileExists(atPath: workspace.file("cache/catalog-pages")))
        let report = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(report.catalog.pagesReused == 0, "nothing was left to reuse")
        let again = try await run(productPath("gifpack"), arguments, environment: environment)
        #expect(again.status == 0, "\(again.error)")
        let reused = try JSONDecoder().decode(BuildReport.self, from: Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/report.json"))))
        #expect(reused.catalog.pagesReused == 3)
    }
}

import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// In-process tests of the builder's memory (``BuildState``), of what it decides from it
/// (``FetchPlanner``) and of retention (``Pruner``): no server, no subprocess.
@Suite("State, fetch planner and pruner", .computes, .timeLimit(.minutes(3)))
struct StatePlannerPrunerTests {
    static func metadata(_ sha: Character, bytes: Int64 = 10) -> GIFMetadata {
        GIFMetadata(
            sha256: String(repeating: sha, count: 64), bytes: bytes, width: 180, height: 180, frames: 12,
            durationMilliseconds: 960, loopCount: 0)
    }

    static func success(_ id: String, url: String, etag: String?, sha: Character, at date: Date, resolution: Int = 180) -> GIFState {
        GIFState(
            exerciseID: id, resolution: resolution, url: url, etag: etag, lastModified: nil, metadata: metadata(sha),
            fetchedAt: date)
    }

    // MARK: BuildState

    @Test func theStateRemembersSuccessesFailuresAndMissingGIFsPerSourceAndResolution() throws {
        let workspace = try TemporaryDirectory()
        let path = workspace.file("state.sqlite")
        let state = try BuildState(path: path, source: "rapidapi https://a")
        let other = try BuildState(path: path, source: "v1 https://b")
        let day = Date(timeIntervalSince1970: 1_700_000_000)

        try state.recordSuccess(Self.success("0001", url: "u1", etag: "\"e1\"", sha: "a", at: day))
        try state.recordSuccess(Self.success("0002", url: "u2", etag: nil, sha: "b", at: day, resolution: 360))
        #expect(try state.gif(exerciseID: "0001", resolution: 180)?.metadata == Self.metadata("a"))
        #expect(try state.gifs(resolution: 180).keys.sorted() == ["0001"], "another resolution is another GIF")
        #expect(try other.gifs(resolution: 180).isEmpty, "one source's state never answers for another")

        // A failure keeps the last good GIF (last known good) and counts up.
        try state.recordFailure(
            exerciseID: "0001", resolution: 180, url: "u1", reason: "http-500: boom", missing: false,
            at: day.addingTimeInterval(60))
        try state.recordFailure(
            exerciseID: "0001", resolution: 180, url: "u1", reason: "timeout: slow", missing: false,
            at: day.addingTimeInterval(120))
        let failed = try #require(try state.gif(exerciseID: "0001", resolution: 180))
        #expect(failed.status == .failed)
        #expect(failed.consecutiveFailures == 2)
        #expect(failed.lastError == "timeout: slow")
        #expect(failed.metadata == Self.metadata("a"))
        #expect(failed.fetchedAt == day, "a failure does not count as a fetch")

        // A 304 makes it current again.
        try state.recordNotModified(exerciseID: "0001", resolution: 180, at: day.addingTimeInterval(180))
        let confirmed = try #require(try state.gif(exerciseID: "0001", resolution: 180))
        #expect(confirmed.status == .ok && confirmed.consecutiveFailures == 0 && confirmed.lastError == nil)
        #expect(confirmed.fetchedAt == day.addingTimeInterval(180))

        // A 404 for an exercise never seen is remembered as missing, without metadata.
        try state.recordFailure(exerciseID: "0003", resolution: 180, url: "u3", reason: "http-404: gone", missing: true, at: day)
        #expect(try state.gif(exerciseID: "0003", resolution: 180)?.status == .missing)
        #expect(try state.gif(exerciseID: "0003", resolution: 180)?.metadata == nil)

        #expect(try state.referencedBlobs() == [String(repeating: "a", count: 64), String(repeating: "b", count: 64)])
        // Reopening reads the same database (migrations run once).
        #expect(try BuildState(path: path, source: "rapidapi https://a").gifs(resolution: 180).count == 2)
    }

    @Test func theStateTellsHowTheCatalogChangedAndKeepsWrittenVersions() throws {
        let workspace = try TemporaryDirectory()
        let state = try BuildState(path: workspace.file("state.sqlite"), source: "s")
        #expect(try state.lastCatalogCount() == nil)
        let first = try state.replaceCatalog(["0001": "f1", "0002": "f2", "0003": "f3"])
        #expect(!first.hadPrevious && first.added == ["0001", "0002", "0003"])
        let second = try state.replaceCatalog(["0001": "f1", "0002": "changed", "0004": "f4"])
        #expect(second.hadPrevious)
        #expect(second.added == ["0004"] && second.removed == ["0003"] && second.changed == ["0002"])
        #expect(try state.lastCatalogCount() == 3)

        try state.recordWritten(pack: "all", version: 2, file: "packs/all-v2.tar.zst", sha256: "x", contentDigest: "d2", at: Date())
        try state.recordWritten(pack: "all", version: 1, file: "packs/all-v1.tar.zst", sha256: "y", contentDigest: "d1", at: Date())
        try state.recordWritten(pack: "chest", version: 1, file: "packs/chest-v1.tar.zst", sha256: "z", contentDigest: "d", at: Date())
        #expect(try state.writtenVersions(pack: "all") == [1, 2])
    }

    // MARK: FetchPlanner

    @Test func thePlannerAsksOnlyForWhatTheStateCannotAnswer() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.file("cache"))
        try layout.prepare()
        let store = BlobStore(layout: layout)
        let stored = Self.metadata("c")
        try FileSystem.createDirectory(PathText.parent(store.path(sha256: stored.sha256)))
        try FileSystem.writeAtomically([1], to: store.path(sha256: stored.sha256))

        let now = Date(timeIntervalSince1970: 1_700_000_000)
        var settings = FetchSettings()
        settings.refreshAfter = .seconds(3600)
        settings.missingTTL = .seconds(86400)
        let planner = FetchPlanner(settings: settings, store: store, now: now)
        let exercise = try Exercise(id: "0001", name: "a", bodyParts: [], equipment: [], targets: [], imageURL: "u1", raw: .null)

        func known(etag: String?, sha: Character = "c", fetched: TimeInterval, url: String = "u1") -> GIFState {
            Self.success("0001", url: url, etag: etag, sha: sha, at: now.addingTimeInterval(-fetched))
        }
        #expect(planner.decide(exercise, known: nil) == .request(conditional: nil))
        let fresh = known(etag: "\"e\"", fetched: 60)
        #expect(planner.decide(exercise, known: fresh) == .reuseFresh(fresh))
        let stale = known(etag: "\"e\"", fetched: 7200)
        #expect(planner.decide(exercise, known: stale) == .request(conditional: stale))
        #expect(
            planner.decide(exercise, known: known(etag: nil, fetched: 7200)) == .request(conditional: nil),
            "no validator: nothing to make the request conditional with")
        #expect(
            planner.decide(exercise, known: known(etag: "\"e\"", fetched: 60, url: "moved")) == .request(conditional: nil),
            "a new URL is a new GIF")
        #expect(
            planner.decide(exercise, known: known(etag: "\"e\"", sha: "d", fetched: 60)) == .request(conditional: nil),
            "a blob gone from the store is fetched again in full")

        var missing = known(etag: nil, fetched: 0)
        missing.status = .missing
        missing.attemptedAt = now.addingTimeInterval(-3600)
        #expect(planner.decide(exercise, known: missing) == .knownMissing(missing))
        missing.attemptedAt = now.addingTimeInterval(-2 * 86400)
        #expect(planner.decide(exercise, known: missing) != .knownMissing(missing), "asked again once missing_ttl passed")

        var failed = known(etag: "\"e\"", fetched: 60)
        failed.status = .failed
        #expect(planner.decide(exercise, known: failed) == .request(conditional: failed), "a failed GIF is never fresh")
    }

    /// The doc-comment examples of the governor and the planner, as written there: they must compile
    /// against the current API.
    @Test func theGovernorAndPlannerDocExamplesCompileAndRun() throws {
        let workspace = try TemporaryDirectory()
        let store = BlobStore(layout: CacheLayout(root: workspace.file("cache")))
        let manifest = try offlineManifest()
        let governor = FetchGovernor(settings: manifest.fetch, requestsAlreadySent: 3, startedAt: .now)
        #expect(governor.reserveRequest())
        let exercises = [try Exercise(id: "0001", name: "a", bodyParts: [], equipment: [], targets: [], imageURL: "u", raw: .null)]
        let known: [String: GIFState] = [:]
        let planner = FetchPlanner(settings: manifest.fetch, store: store, now: Date())
        let decisions = exercises.map { planner.decide($0, known: known[$0.id]) }
        #expect(decisions == [.request(conditional: nil)])
    }

    // MARK: Pruner

    @Test func thePrunerKeepsTheLastVersionsAndEverythingTheIndexOrStateReferences() throws {
        let workspace = try TemporaryDirectory()
        let dist = workspace.file("dist")
        let layout = CacheLayout(root: workspace.file("cache"))
        try layout.prepare()
        try FileSystem.createDirectory("\(dist)/packs")
        for version in 1...6 { try FileSystem.writeAtomically([UInt8](repeating: 1, count: version), to: "\(dist)/packs/all-v\(version)-0000000\(version).tar.zst") }
        try FileSystem.writeAtomically([1, 2, 3], to: "\(dist)/packs/chest-v1-00000001.tar.zst")
        // The name form of builds before format 1.1, which no release wrote: not a pack file of gifpack's, never deleted.
        try FileSystem.writeAtomically([1], to: "\(dist)/packs/all-v1.tar.zst")
        try FileSystem.writeAtomically([1, 2, 3, 4], to: "\(dist)/packs/.all-v6.tar.zst.tmp-42-abcd1234")
        try FileSystem.writeAtomically([9], to: "\(dist)/packs/notes.txt")

        let kept = Self.metadata("a"), orphan = Self.metadata("f")
        let store = BlobStore(layout: layout)
        for gif in [kept, orphan] {
            try FileSystem.createDirectory(PathText.parent(store.path(sha256: gif.sha256)))
            try FileSystem.writeAtomically([UInt8](repeating: 7, count: 5), to: store.path(sha256: gif.sha256))
            let frame = layout.framePath(sha256: gif.sha256, level: 12, mtime: 0)
            try FileSystem.createDirectory(PathText.parent(frame))
            try FileSystem.writeAtomically([1], to: frame)
        }
        let state = try BuildState(path: layout.statePath, source: "s")
        try state.recordSuccess(Self.success("0001", url: "u", etag: nil, sha: "a", at: Date()))

        func description(_ name: String, _ version: Int) -> PackDescription {
            PackDescription(
                name: name, version: version, file: "packs/\(name)-v\(version)-0000000\(version).tar.zst", bytes: 1,
                sha256: "s", entryCount: 1, uncompressedBytes: 1, contentDigest: "d",
                catalog: EntryLocation(path: "catalog.json", size: 1, frameOffset: 0, frameLength: 1),
                gifs: [], exercises: [])
        }
        let index = PackIndex(
            generator: "t", source: SourceDescription(kind: "k", baseURL: nil, resolution: nil),
            packs: [description("all", 5), description("chest", 1)])
        let result = try Pruner(outputDirectory: dist, layout: layout, keep: 2).prune(index: index, state: state)

        #expect(
            result.deletedPacks == ["all-v1-00000001.tar.zst", "all-v2-00000002.tar.zst", "all-v3-00000003.tar.zst"],
            "v4 and v5 kept (keep 2); v6 is above the index's version: names are immutable, so it is never deleted")
        #expect(result.deletedTemporaryFiles == 1)
        #expect(result.deletedBlobs == 1)
        #expect(result.freedBytes == 1 + 2 + 3 + 4 + 5)
        #expect(
            try FileSystem.list("\(dist)/packs") == [
                "all-v1.tar.zst", "all-v4-00000004.tar.zst", "all-v5-00000005.tar.zst",
                "all-v6-00000006.tar.zst", "chest-v1-00000001.tar.zst", "notes.txt"
            ])
        #expect(store.contains(sha256: kept.sha256) && !store.contains(sha256: orphan.sha256))
        #expect(FileSystem.exists(layout.framePath(sha256: kept.sha256, level: 12, mtime: 0)))
        #expect(!FileSystem.exists(layout.framePath(sha256: orphan.sha256, level: 12, mtime: 0)), "an orphan's frames go with it")

        let again = try Pruner(outputDirectory: dist, layout: layout, keep: 2).prune(index: index, state: state)
        #expect(again == Pruner.Result(), "a second pass finds nothing to delete")
    }

    @Test func packFileNamesParseOnlyInTheirOwnForm() {
        #expect(PackFileName.version(of: "all-v12.tar.zst", pack: "all") == nil, "the form before immutable names, which no release wrote")
        #expect(PackFileName.version(of: "all-v12-0a1b2c3d.tar.zst", pack: "all") == 12)
        #expect(PackFileName.version(of: "upper-body-v3-1a2b3c4d.tar.zst", pack: "upper-body") == 3)
        #expect(PackFileName.version(of: "upper-body-v3-1a2b3c4d.tar.zst", pack: "upper") == nil)
        #expect(PackFileName.version(of: "all-v3-1A2B3C4D.tar.zst", pack: "all") == nil)
        #expect(PackFileName.version(of: "all-v3-1a2b.tar.zst", pack: "all") == nil)
        #expect(PackFileName.version(of: "all-v12.tar", pack: "all") == nil)
        #expect(PackFileName.version(of: "all.tar.zst", pack: "all") == nil)
        #expect(PackFileName.version(of: "all-vx.tar.zst", pack: "all") == nil)
        #expect(PackFileName.version(of: "all-v0.tar.zst", pack: "all") == nil)
    }

    @Test func thePacksDirectoryIsListedOnceAndAnUnreadableOneIsAnErrorNotAnEmptyList() throws {
        let workspace = try TemporaryDirectory()
        let packs = workspace.file("dist/packs")
        try FileManager.default.createDirectory(atPath: packs, withIntermediateDirectories: true)
        let bytes = Array("pack bytes".utf8)
        let sha = sha256Hex(bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: "\(packs)/all-v2-\(sha.prefix(8)).tar.zst"))
        try Data("other".utf8).write(to: URL(fileURLWithPath: "\(packs)/all-v5-0badc0de.tar.zst"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(packs)/legs-v9-0badc0de.tar.zst"))
        let listing = try PackFileName.Listing(of: "all", in: packs)
        #expect(listing.highestVersion == 5)
        #expect(try listing.present(sha256: sha) == [WrittenPack(version: 2, file: "packs/all-v2-\(sha.prefix(8)).tar.zst", sha256: sha)])
        #expect(try PackFileName.Listing(of: "all", in: workspace.file("dist/missing")).highestVersion == 0, "no directory yet: no versions")

        // `packs` under a regular file: ENOTDIR (as root, permissions cannot make a directory unreadable).
        _ = try workspace.write("not a directory", to: "file")
        #expect(throws: FileSystemError.io(operation: "opendir", path: workspace.file("file/packs"), errno: ENOTDIR)) {
            try PackFileName.Listing(of: "all", in: workspace.file("file/packs"))
        }
        // A file of the pack with these bytes' name that cannot be read (a directory) is an error too, not "absent".
        try FileManager.default.createDirectory(atPath: "\(packs)/all-v3-\(sha.prefix(8)).tar.zst", withIntermediateDirectories: false)
        #expect(throws: FileSystemError.self) { try PackFileName.Listing(of: "all", in: packs).present(sha256: sha) }
    }
}

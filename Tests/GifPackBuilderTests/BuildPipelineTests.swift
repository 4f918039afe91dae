import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

@Suite("Build pipeline against the fixture server", .timeLimit(.minutes(5)))
struct BuildPipelineTests {
    @Test func neverMoreThanThreeRequestsInFlight() async throws {
        let server = try startFixture(count: 36) { $0.latencyMilliseconds = 40 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()

        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)

        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.gifs.downloaded == 36)
        #expect(server.stats.imageRequests == 36)
        #expect(server.stats.maxInFlight <= 3)
        #expect(server.stats.maxInFlight == 3, "the window should keep 3 requests busy")
        #expect(report.http.maxInFlight <= 3)
    }

    @Test func everyFaultIsRejectedWithItsReasonAndKeptOutOfThePack() async throws {
        let server = try startFixture(count: 16) { $0.duplicateEvery = 0 }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let faults: [(Fault, RejectionReason)] = [
            (.htmlWith200, .htmlBody),
            (.wrongContentType, .wrongContentType),
            (.truncatedBody, .truncated),
            (.notAGIF, .notAGIF),
            (.status(404), .httpStatus(404)),
            (.tooManyRequests(retryAfter: nil), .httpStatus(429)),
            (.status(500), .httpStatus(500)),
            (.corruptFrame, .badFrame),
            (.slowBody(bytesPerSecond: 200), .timeout)
        ]
        var expected: [String: RejectionReason] = [:]
        for (index, (fault, reason)) in faults.enumerated() {
            server.setDefaultFault(fault, forExercise: ids[index])
            expected[ids[index]] = reason
        }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(
            server: server,
            fetch: """
                  low_speed_limit: 1000
                  low_speed_time: 1s
                  request_timeout: 3s
                  circuit_breaker: 0
                """)

        let report = try await runBuild(manifest: manifest, workspace: workspace)

        #expect(report.exitStatus == .partial, "\(report.message)")
        let reasons = Dictionary(uniqueKeysWithValues: report.rejections.map { ($0.exerciseID, $0.reason) })
        #expect(reasons == expected)
        let index = try readIndex(workspace.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        for id in expected.keys {
            #expect(pack.exercises.first { $0.id == id }?.gif == nil, "\(id) must have no GIF")
        }
        // Only the good GIFs are in the pack, and each is exactly what the server serves.
        let good = ids.filter { expected[$0] == nil }
        let goodHashes = Set(good.map { sha256Hex(server.catalog.gifBytes(id: $0, resolution: 180)!) })
        #expect(Set(pack.gifs.map(\.sha256)) == goodHashes)
        // Nothing rejected reached the blob store.
        let blobs = try allFiles(under: workspace.file("cache/blobs"))
        #expect(blobs.count == goodHashes.count)
    }

    @Test func tooLargeBodiesAreRejected() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server).replacingOccurrences(of: "max_gif_bytes: 1MB", with: "max_gif_bytes: 100")
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.gifs.rejectedByReason == ["too-large": 3])
    }

    @Test func identicalGIFsAreStoredAndPackedOnce() async throws {
        let server = try startFixture(count: 21) { $0.duplicateEvery = 3 }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()

        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)

        let served = server.catalog.exercises.map { sha256Hex(server.catalog.gifBytes(id: $0.id, resolution: 180)!) }
        let distinct = Set(served)
        #expect(distinct.count < served.count, "the fixture must serve some identical GIFs")
        #expect(report.gifs.newlyStored == distinct.count)
        #expect(report.gifs.deduplicated == served.count - distinct.count)
        let blobs = try allFiles(under: workspace.file("cache/blobs"))
        #expect(blobs.count == distinct.count)
        // A duplicate's download file is written over by a later download, of another length: each
        // blob is exactly its GIF (the file was truncated as it was opened), and none is left over.
        for blob in blobs {
            let bytes = try #require(try FileSystem.readAll(blob))
            #expect(sha256Hex(bytes) + ".gif" == PathText.lastComponent(blob))
        }
        #expect(try FileSystem.list(workspace.file("cache/tmp")).filter(CacheLayout.isOwnDownload).isEmpty)
        let pack = try #require(try readIndex(workspace.file("dist/index.json")).packs.first)
        #expect(pack.gifs.count == distinct.count)
        #expect(pack.entryCount == distinct.count + 1)
        let listing = try await run("/usr/bin/tar", ["--zstd", "-tf", workspace.file("dist/\(pack.file)")])
        #expect(listing.output.split(separator: "\n").filter { $0.hasPrefix("gifs/") }.count == distinct.count)
    }

    @Test func twoBuildsOfTheSameInputsAreByteIdentical() async throws {
        let server = try startFixture(count: 24)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let packs = """
            packs:
              - name: all
              - name: chest
                selector:
                  bodyPart: chest
            """
        let manifest = rapidAPIManifest(server: server, packs: packs)
        let first = try await runBuild(manifest: manifest, workspace: workspace, out: "a", cache: "cache-a")
        let second = try await runBuild(manifest: manifest, workspace: workspace, out: "b", cache: "cache-b")
        #expect(first.exitStatus == .success && second.exitStatus == .success)

        let indexA = try Data(contentsOf: URL(fileURLWithPath: workspace.file("a/index.json")))
        let indexB = try Data(contentsOf: URL(fileURLWithPath: workspace.file("b/index.json")))
        #expect(indexA == indexB)
        let index = try readIndex(workspace.file("a/index.json"))
        #expect(index.packs.map(\.name) == ["all", "chest"])
        for pack in index.packs {
            let a = try Data(contentsOf: URL(fileURLWithPath: workspace.file("a/\(pack.file)")))
            let b = try Data(contentsOf: URL(fileURLWithPath: workspace.file("b/\(pack.file)")))
            #expect(a == b, "\(pack.file) differs between two builds")
            #expect(sha256Hex([UInt8](a)) == pack.sha256)
            #expect(Int64(a.count) == pack.bytes)
        }
    }

    @Test func aRebuildWithNothingChangedWritesNothing() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0")
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        let indexBefore = try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json")))
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.packs.map(\.outcome) == ["published"])
        #expect(second.packs.map(\.outcome) == ["unchanged"])
        #expect(second.packs.first?.version == 1)
        #expect(second.gifs.notModified == 12, "conditional requests answered 304")
        #expect(second.gifs.downloaded == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.file("dist/index.json"))) == indexBefore)

        // One changed GIF: a new version of the pack.
        let id = server.catalog.exercises[0].id
        let changed = try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 3, colors: 4, seed: 999)
        server.replaceGIF(id: id, with: changed)
        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.packs.map(\.outcome) == ["published"])
        #expect(third.packs.first?.version == 2)
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.first.map { "packs/all-v2-\($0.sha256.prefix(8)).tar.zst" } == index.packs.first?.file)
        #expect(index.packs.first?.gifEntry(forExercise: id)?.sha256 == sha256Hex(changed))
    }

    @Test func frameOffsetsInTheIndexYieldExactlyTheGIFs() async throws {
        let server = try startFixture(count: 10)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        _ = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        let index = try readIndex(workspace.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        let reader = try PackFrameReader(path: workspace.file("dist/\(pack.file)"))
        for exercise in server.catalog.exercises {
            let entry = try #require(pack.gifEntry(forExercise: exercise.id))
            let (header, data) = try reader.readEntry(
                frameOffset: entry.location.frameOffset,
                frameLength: entry.location.frameLength,
                maxSize: entry.location.size)
            #expect(header.name == entry.location.path)
            #expect(data == server.catalog.gifBytes(id: exercise.id, resolution: 180))
        }
        let (catalogHeader, catalogBytes) = try reader.readEntry(
            frameOffset: pack.catalog.frameOffset,
            frameLength: pack.catalog.frameLength,
            maxSize: pack.catalog.size)
        #expect(catalogHeader.name == "catalog.json")
        let catalog = try PackCatalog.decode(from: catalogBytes)
        #expect(catalog.exercises.count == 10)
        #expect(sha256Hex(catalogBytes) == pack.contentDigest)

        // Stock tools accept the pack.
        #expect(try await run("/usr/bin/zstd", ["-q", "-t", workspace.file("dist/\(pack.file)")]).status == 0)
        let extract = workspace.file("extract")
        try FileManager.default.createDirectory(atPath: extract, withIntermediateDirectories: true)
        #expect(try await run("/usr/bin/tar", ["--zstd", "-xf", workspace.file("dist/\(pack.file)"), "-C", extract]).status == 0)
        for gif in pack.gifs {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(extract)/\(gif.location.path)"))
            #expect(sha256Hex([UInt8](bytes)) == gif.sha256)
        }
    }

    @Test func v1CatalogWithItsEnvelopeAndGifURLs() async throws {
        let server = try startFixture(count: 23)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = """
            source:
              kind: exercisedb-v1
              base_url: \(server.v1BaseURL)
              page_size: 10
            """
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        #expect(report.catalog.exercises == 23)
        #expect(report.catalog.pages == 3)
        #expect(report.gifs.downloaded == 23)
    }

    @Test func theAPIKeyNeverAppearsInAnyOutput() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        server.setDefaultFault(.status(500), forExercise: server.catalog.exercises[0].id)
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(!String(describing: report).contains(testAPIKey))
        for file in try allFiles(under: workspace.path) {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(data.range(of: Data(testAPIKey.utf8)) == nil, "\(file) holds the key")
        }
    }

    @Test func aRejectedKeyStopsTheBuildWithItsStatus() async throws {
        let server = try startFixture(count: 4) { $0.apiKey = "the-real-key" }
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.exitStatus == .authRejected)
        #expect(report.message.contains("GIFPACK_TEST_KEY"))
        #expect(!report.message.contains(testAPIKey))
        #expect(server.stats.imageRequests == 0)
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    @Test func tooManyMissingWritesNothing() async throws {
        let server = try startFixture(count: 5)
        defer { server.stop() }
        server.setDefaultFault(.status(404), forExercise: server.catalog.exercises[0].id)
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, maxMissing: "0")
        let report = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(report.exitStatus == .failed)
        #expect(report.message.contains("max_missing"))
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/packs")))
    }
}

func allFiles(under root: String) throws -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
    var files: [String] = []
    while let relative = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let path = "\(root)/\(relative)"
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(path)
        }
    }
    return files
}

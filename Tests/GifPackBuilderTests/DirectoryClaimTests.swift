import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// Output and cache directories: gifpack writes only into directories that are empty or already
/// its own, and deletes only files it made.
@Suite("Output and cache directories", .timeLimit(.minutes(5)))
struct DirectoryClaimTests {
    private func files(under path: String) -> Set<String> {
        Set((FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? [])
    }

    @Test(arguments: ["output", "cache"])
    func aForeignDirectoryIsRefusedAndLeftUntouched(role: String) async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let foreign = workspace.file("home")
        try FileManager.default.createDirectory(atPath: "\(foreign)/tmp", withIntermediateDirectories: true)
        _ = try workspace.write("mine", to: "home/notes.txt")
        _ = try workspace.write("half a download of mine", to: "home/tmp/movie.part")
        let before = files(under: foreign)

        let report = try await runBuild(
            manifest: rapidAPIManifest(server: server), workspace: workspace,
            out: role == "output" ? "home" : "dist", cache: role == "cache" ? "home" : "cache")
        #expect(report.exitStatus == .usage)
        #expect(report.message.contains(foreign) && report.message.contains(role), "\(report.message)")
        #expect(files(under: foreign) == before, "nothing written into or deleted from \(foreign)")
        #expect(server.stats.totalRequests == 0)
    }

    @Test(.computes) func theRootDirectoryIsRefused() throws {
        #expect(throws: DirectoryClaimError.self) { try DirectoryClaim.check("/", roles: [.output]) }
        #expect(throws: DirectoryClaimError.self) { try DirectoryClaim.check("/", roles: [.cache]) }
        #expect(!FileManager.default.fileExists(atPath: "/\(DirectoryClaim.Role.output.marker)"))
    }

    @Test func emptyDirectoriesAreAdoptedWithAMarkerAndGifpacksFilesWithoutOneAreRefused() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: workspace.file("dist"), withIntermediateDirectories: true)
        let manifest = rapidAPIManifest(server: server)
        let first = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let outputMarker = workspace.file("dist/\(DirectoryClaim.Role.output.marker)")
        let cacheMarker = workspace.file("cache/\(DirectoryClaim.Role.cache.marker)")
        #expect(FileManager.default.fileExists(atPath: outputMarker))
        #expect(FileManager.default.fileExists(atPath: cacheMarker))

        // Every release marked its directories before writing in them: gifpack's layout without the
        // marker is no directory of gifpack's, refused with nothing written, created or deleted.
        try FileManager.default.removeItem(atPath: outputMarker)
        let before = try FileManager.default.contentsOfDirectory(atPath: workspace.file("dist")).sorted()
        let second = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(second.exitStatus == .usage && second.message.contains(workspace.file("dist")), "\(second.message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.file("dist")).sorted() == before)
        try FileManager.default.removeItem(atPath: cacheMarker)
        _ = try workspace.write("marked again", to: "dist/\(DirectoryClaim.Role.output.marker)")
        let third = try await runBuild(manifest: manifest, workspace: workspace)
        #expect(third.exitStatus == .usage && third.message.contains(workspace.file("cache")), "\(third.message)")
        #expect(!FileManager.default.fileExists(atPath: cacheMarker))

        // One directory for both.
        let shared = try await runBuild(manifest: manifest, workspace: workspace, out: "both", cache: "both")
        #expect(shared.exitStatus == .success, "\(shared.message)")
        let again = try await runBuild(manifest: manifest, workspace: workspace, out: "both", cache: "both")
        #expect(again.exitStatus == .success, "\(again.message)")
    }

    @Test func onlyGifpacksOwnTemporaryFilesAreDeleted() async throws {
        let server = try startFixture(count: 4)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server)
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        let ours = CacheLayout(root: workspace.file("cache")).newTemporaryDownloadPath()
        _ = try workspace.write("interrupted", to: "cache/tmp/\(URL(fileURLWithPath: ours).lastPathComponent)")
        _ = try workspace.write("someone else's", to: "cache/tmp/notes.part")
        _ = try workspace.write("someone else's", to: "dist/packs/.notes.tmp-mine")
        try FileManager.default.createDirectory(atPath: workspace.file("cache/blobs/sha256/ab"), withIntermediateDirectories: true)
        _ = try workspace.write("someone else's", to: "cache/blobs/sha256/ab/holiday.gif")
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        #expect(!FileManager.default.fileExists(atPath: ours), "gifpack's own leftover download is cleared")
        for name in ["cache/tmp/notes.part", "dist/packs/.notes.tmp-mine", "cache/blobs/sha256/ab/holiday.gif"] {
            #expect(FileManager.default.fileExists(atPath: workspace.file(name)), "\(name) was deleted")
        }
    }
}

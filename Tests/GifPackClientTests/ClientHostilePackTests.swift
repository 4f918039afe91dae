import ExerciseDBFixture
import Foundation
import GifPackClient
import GifPackGIF
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures
import GifPackIndexReader

@Suite("Client: hostile packs are refused and leave the cache untouched", .timeLimit(.minutes(5)))
struct ClientHostilePackTests {
    /// Three small GIFs; the second is the one the attacks tamper with.
    static func gifs() throws -> [[UInt8]] {
        try (1...3).map { seed in
            try GIFSynthesizer.animatedGIF(width: 24, height: 24, frames: 2, colors: 4, seed: UInt64(seed))
        }
    }

    /// A cache with an honest forged-format pack installed, and its snapshot.
    struct SeededCache {
        let workspace: TemporaryDirectory
        let cache: String
        let snapshot: [String]
    }

    static func installedCache() async throws -> SeededCache {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: gifs()).write(to: workspace.file("honest"))
        let cache = workspace.file("cache")
        let report = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
        #expect(report.gifsWritten == 3)
        return SeededCache(workspace: workspace, cache: cache, snapshot: try treeSnapshot(cache))
    }

    /// Installs the forged pack and returns the rejection it gets; checks that the cache did not change.
    static func rejection(of forged: ForgedPack, layout: InstallLayout = .byID) async throws -> PackRejection? {
        let installed = try await installedCache()
        let index = try forged.write(to: installed.workspace.file("hostile"))
        do {
            _ = try await PackInstaller(cacheDirectory: installed.cache, layout: layout).install(from: PackIndexSource(index))
            Issue.record("the hostile pack was installed")
            return nil
        } catch {
            #expect(try treeSnapshot(installed.cache) == installed.snapshot, "the cache changed")
            #expect(Set(DirectoryListing.names("\(installed.cache).d")) == ["g000001", "install.lock"], "staging left behind")
            guard case .rejected(let rejection)? = error as? PackClientError else {
                Issue.record("expected a rejection, got \(error)")
                return nil
            }
            return rejection
        }
    }

    @Test func theHonestForgeInstalls() async throws {
        let installed = try await Self.installedCache()
        let gifs = try Self.gifs()
        for (index, gif) in gifs.enumerated() {
            #expect(try fileBytes("\(installed.cache)/e\(index).gif") == gif)
        }
    }

    @Test func absolutePathInTheTarHeader() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].header = RawPack.header(name: "/tmp/evil.gif", size: forged.entries[1].data.count)
        let rejection = try await Self.rejection(of: forged)
        #expect(rejection?.reason == .absolutePath)
        #expect(rejection?.entry == "/tmp/evil.gif")
    }

    @Test func absolutePathInTheIndexAndHeader() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].indexPath = "/tmp/evil.gif"
        #expect(try await Self.rejection(of: forged)?.reason == .absolutePath)
    }

    @Test func parentDirectoryComponent() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].indexPath = "gifs/../../evil.gif"
        #expect(try await Self.rejection(of: forged)?.reason == .parentDirectory)
        forged.entries[1].indexPath = "gifs/\(forged.entries[1].sha256).gif"
        forged.entries[1].header = RawPack.header(name: "../evil.gif", size: forged.entries[1].data.count)
        #expect(try await Self.rejection(of: forged)?.reason == .parentDirectory)
    }

    @Test func symbolicAndHardLinks() async throws {
        for (typeflag, target) in [(UInt8(ascii: "2"), "/etc/passwd"), (UInt8(ascii: "1"), "catalog.json")] {
            var forged = ForgedPack(gifs: try Self.gifs())
            forged.entries[1].header = RawPack.header(
                name: forged.entries[1].indexPath, size: 0, typeflag: typeflag,
                linkName: target)
            forged.entries[1].data = []
            forged.entries[1].indexSize = 0
            let rejection = try await Self.rejection(of: forged)
            #expect(rejection?.reason == .link)
            #expect(rejection?.detail.contains(target) == true)
        }
    }

    @Test func deviceFile() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].header = RawPack.header(name: forged.entries[1].indexPath, size: 0, typeflag: UInt8(ascii: "3"))
        forged.entries[1].data = []
        forged.entries[1].indexSize = 0
        #expect(try await Self.rejection(of: forged)?.reason == .deviceFile)
    }

    @Test func entryNotInTheIndex() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        let payload = Array("#!/bin/sh\nrm -rf ~\n".utf8)
        forged.extraFrames = [RawPack.frame(RawPack.entry(header: RawPack.header(name: "run.sh", size: payload.count), data: payload))]
        let rejection = try await Self.rejection(of: forged)
        #expect(rejection?.reason == .unlistedEntry)
    }

    @Test func hashThatDoesNotMatch() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].data[forged.entries[1].data.count / 2] ^= 0xFF
        let rejection = try await Self.rejection(of: forged)
        #expect(rejection?.reason == .hashMismatch)
        #expect(rejection?.entry == forged.entries[1].indexPath)
    }

    @Test func sizeOverTheIndexFigure() async throws {
        // Larger by more than a tar block: the frame itself declares more than the index allows.
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].data += [UInt8](repeating: 0x3B, count: 2048)
        #expect(try await Self.rejection(of: forged)?.reason == .oversize)
        // Larger by one byte inside the same block: the tar header says more than the index.
        forged = ForgedPack(gifs: try Self.gifs())
        forged.entries[1].indexSize -= 1
        #expect(try await Self.rejection(of: forged)?.reason == .oversize)
    }

    @Test func decompressionBombIsStoppedAtTheIndexedSize() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        let honest = forged.entries[1]
        let declared = RawPack.entry(header: RawPack.header(name: honest.indexPath, size: honest.data.count), data: honest.data)
        let bomb = declared + [UInt8](repeating: 0, count: 16 << 20)
        forged.entries[1].frame = RawPack.lyingFrame(bomb, declared: declared.count)
        let rejection = try await Self.rejection(of: forged)
        #expect(rejection?.reason == .bomb, "\(String(describing: rejection))")
    }

    @Test func packFileThatIsNotTheIndexedOne() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.indexSHA256 = String(repeating: "0", count: 64)
        #expect(try await Self.rejection(of: forged)?.reason == .packChecksum)
    }

    @Test func exerciseIdThatIsNotAFileName() async throws {
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.exercises[1].id = "../../escape"
        #expect(try await Self.rejection(of: forged)?.reason == .unsafeName)
        forged.exercises[1].id = "e0"
        #expect(try await Self.rejection(of: forged, layout: .byHash)?.reason == .duplicate)
    }

    @Test func notAGIF() async throws {
        let html = Array("<html><body>rate limited</body></html>".utf8)
        var forged = ForgedPack(gifs: try Self.gifs() + [html])
        forged.exercises = forged.exercises.map { ($0.id, $0.entry) }
        let rejection = try await Self.rejection(of: forged)
        #expect(rejection?.reason == .notAGIF, "\(String(describing: rejection))")
    }
}

import Foundation
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

@Suite("Client: gifpack verify, inspect, install, cat, diff", .tags(.nginx), .timeLimit(.minutes(5)))
struct ClientCommandTests {
    /// Runs the built `gifpack` and returns its exit status, raw standard output and standard error.
    static func gifpack(_ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, output: [UInt8], error: String) {
        let (status, output, error) = try await runCapturing(productPath("gifpack"), arguments, environment: environment)
        return (status, output, String(decoding: error, as: UTF8.self))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func catWritesTheExactGIFBytesFromAnIndexOrAPack() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        for exercise in pack.exercises.prefix(4) where exercise.gif != nil {
            let viaIndex = try await Self.gifpack(["cat", built.indexPath, exercise.id])
            #expect(viaIndex.status == 0, "\(viaIndex.error)")
            #expect(viaIndex.output == built.served(exercise.id))
            let viaPack = try await Self.gifpack(["cat", "\(built.dist)/\(pack.file)", exercise.id])
            #expect(viaPack.output == built.served(exercise.id))
        }
        let unknown = try await Self.gifpack(["cat", built.indexPath, "nope"])
        #expect(unknown.status == 1 && unknown.output.isEmpty && unknown.error.contains("nope"))
    }

    @Test func verifyPassesABuildAndListsEveryProblemOfADamagedOne() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let packPath = "\(built.dist)/\(pack.file)"
        let good = try await Self.gifpack(["verify", built.dist])
        #expect(good.status == 0, "\(good.error)")
        // The pack and its posters pack (format 1.2, one 80 px poster per GIF).
        let posters = try #require(pack.posters)
        #expect(
            Self.text(good.output).contains(
                "ok: verified 2 pack(s), \(pack.entryCount + 1 + posters.entryCount + 1) frame(s), \(pack.gifs.count * 2) GIF(s)"))
        #expect(try await Self.gifpack(["verify", "\(built.dist)/\(posters.file)"]).status == 0)
        #expect(try await Self.gifpack(["verify", packPath]).status == 0)

        // Flip one byte inside a GIF's frame: both forms of verify fail and say where.
        var bytes = try fileBytes(packPath)
        let victim = pack.gifs[1]
        bytes[Int(victim.location.frameOffset + victim.location.frameLength / 2)] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: packPath))
        let directory = try await Self.gifpack(["verify", built.dist])
        #expect(directory.status == 1)
        let lines = Self.text(directory.output).split(separator: "\n")
        #expect(lines.contains { $0.contains("pack-checksum") })
        #expect(lines.contains { $0.contains(victim.location.path) && $0.contains("bad-frame") })
        let alone = try await Self.gifpack(["verify", packPath])
        #expect(alone.status == 1 && Self.text(alone.output).contains("bad-frame"))
    }

    @Test func verifyRefusesAForgedDirectoryWithTheReasons() async throws {
        let workspace = try TemporaryDirectory()
        var forged = ForgedPack(gifs: try ClientHostilePackTests.gifs())
        forged.entries[1].header = RawPack.header(
            name: forged.entries[1].indexPath, size: 0, typeflag: UInt8(ascii: "2"),
            linkName: "/etc/shadow")
        forged.entries[1].data = []
        forged.entries[1].indexSize = 0
        let payload = Array("echo owned\n".utf8)
        forged.extraFrames = [RawPack.frame(RawPack.entry(header: RawPack.header(name: "x.sh", size: payload.count), data: payload))]
        _ = try forged.write(to: workspace.path)

        let result = try await Self.gifpack(["verify", workspace.path])

        #expect(result.status == 1)
        let output = Self.text(result.output)
        #expect(output.contains("link: entry is a symbolic link to /etc/shadow"))
        #expect(output.contains("unlisted-entry"))
    }

    @Test func installInspectAndDiffFromTheCommandLine() async throws {
        let built = try await ClientBuiltDist.make(count: 8)
        defer { built.server.stop() }
        let pack = try #require(try built.index().packs.first)
        let cache = built.workspace.file("cli-cache")

        let install = try await Self.gifpack(["install", "--index", built.indexPath, "--cache", cache, "--layout", "by-hash"])
        #expect(install.status == 0, "\(install.error)")
        #expect(Self.text(install.output).contains("ok: generation 1"))
        for gif in pack.gifs {
            #expect(FileManager.default.fileExists(atPath: "\(cache)/gifs/\(gif.sha256).gif"))
        }
        let wrongPack = try await Self.gifpack(["install", "--index", built.indexPath, "--cache", cache, "--pack", "nope"])
        #expect(wrongPack.status == 2 && wrongPack.error.contains("no pack named nope"))

        let inspect = try await Self.gifpack(["inspect", "\(built.dist)/\(pack.file)"])
        #expect(inspect.status == 0)
        let table = Self.text(inspect.output).split(separator: "\n")
        #expect(table.first?.hasPrefix("exercise") == true)
        #expect(table.count == pack.exercises.count + 2)
        #expect(table.dropFirst().first?.contains("32x32") == true)

        let diff = try await Self.gifpack(["diff", built.indexPath, built.indexPath])
        #expect(diff.status == 0)
        #expect(Self.text(diff.output).contains("download: 0 bytes in 0 pack(s)"))
    }

    @Test func everyClientCommandHasHelpWithAnExample() async throws {
        for command in ["verify", "inspect", "install", "cat", "diff"] {
            let help = try await Self.gifpack([command, "--help"])
            #expect(help.status == 0)
            #expect(Self.text(help.output).contains("gifpack \(command) "), "\(command) --help needs an example")
        }
    }

    /// A user name and password in the index URL are used for the requests and
    /// never written or printed: not in the install manifest (whose record still makes the next
    /// install a 304), not in the lazy cache, not in install's or cat's failure messages.
    @Test func aPasswordInTheIndexURLIsNeitherWrittenNorPrinted() async throws {
        let built = try await ClientBuiltDist.make(count: 6)
        defer { built.server.stop() }
        let nginx = try await NginxServer.start(root: built.dist)
        defer { nginx.stop() }
        let secret = "s3cret-pw"
        let url = nginx.baseURL.replacingOccurrences(of: "http://", with: "http://reader:\(secret)@") + "/index.json"
        let cache = built.workspace.file("app/gifs")
        func leaks(_ text: String) -> Bool { text.contains(secret) || text.contains("reader") }

        let installed = try await Self.gifpack(["install", "--index", url, "--cache", cache])
        #expect(installed.status == 0, "\(installed.error)")
        let manifest = try String(contentsOfFile: "\(cache)/\(InstallManifest.fileName)", encoding: .utf8)
        #expect(!leaks(manifest) && manifest.contains(nginx.baseURL + "/index.json"), "\(manifest)")
        let mark = try await nginx.mark()
        let again = try await Self.gifpack(["install", "--index", url, "--cache", cache])
        #expect(again.status == 0 && Self.text(again.output).contains("already installed"), "\(again.error)")
        #expect(try await nginx.log(since: mark).map(\.status) == [304])

        let pack = try #require(try built.index().packs.first)
        let id = try #require(pack.exercises.first { $0.gif != nil }?.id)
        let lazy = built.workspace.file("lazy")
        let cat = try await Self.gifpack(["cat", "--index", url, "--cache", lazy, id])
        #expect(cat.status == 0 && cat.output == built.served(id), "\(cat.error)")
        for slot in DirectoryListing.names("\(lazy)/indexes") {
            #expect(!leaks(try String(decoding: fileBytes("\(lazy)/indexes/\(slot)"), as: UTF8.self)), "\(slot)")
        }

        // Failures name the URL without its credentials: an index that is not there, a pack that is not.
        let nowhere = url.replacingOccurrences(of: "/index.json", with: "/nowhere/index.json")
        let noIndex = try await Self.gifpack(["install", "--index", nowhere, "--cache", built.workspace.file("other/gifs")])
        let noIndexCat = try await Self.gifpack(["cat", "--index", nowhere, "--cache", lazy, id])
        try FileManager.default.removeItem(atPath: "\(built.dist)/\(pack.file)")
        let noPack = try await Self.gifpack(["install", "--index", url, "--cache", built.workspace.file("third/gifs")])
        for (name, failed) in [("install", noIndex), ("cat", noIndexCat), ("install, no pack", noPack)] {
            #expect(failed.status == 1 && failed.error.contains(nginx.baseURL + "/") && !leaks(failed.error), "\(name): \(failed.error)")
        }
        #expect(noPack.error.contains(pack.file), "\(noPack.error)")
    }
}

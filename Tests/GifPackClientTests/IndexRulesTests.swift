import ExerciseDBFixture
import Foundation
@testable import GifPackClient
import Testing
@testable import GifPackTestSupport
import GifPackFormat
import GifPackIndexReader
@testable import GifPackTestServers

/// `gifpack verify` and every client run one set of index rules
/// (`PackDescriptionCheck.indexProblems`), and a rendition pack's GIFs are the size its resolution
/// says wherever their bytes are read (verify, install, `cat` from a local pack, the lazy cache).
@Suite("Client: one set of index rules for verify and the clients, rendition sizes", .timeLimit(.minutes(3)))
struct IndexRulesTests {
    /// A two-resolution dist forged as an attacker (or a broken builder) would write it: `all` of
    /// 180 px GIFs in `packs[]`, and `all.360` in `renditionPacks[]` of `renditionSide` px GIFs,
    /// every hash, size and frame consistent. Returns the index path.
    static func renditionDist(in directory: String, renditionSide: Int) throws -> String {
        func gifs(_ side: Int) throws -> [[UInt8]] {
            try (0..<3).map { try GIFSynthesizer.animatedGIF(width: side, height: side, frames: 2, colors: 4, seed: UInt64(side * 10 + $0)) }
        }
        var first = ForgedPack(gifs: try gifs(180))
        first.name = "all"
        _ = try first.write(to: directory)
        var all = try readIndex(directory + "/index.json").packs[0]
        var rendition = ForgedPack(gifs: try gifs(renditionSide))
        rendition.name = "all.360"
        _ = try rendition.write(to: directory)
        var all360 = try readIndex(directory + "/index.json").packs[0]
        all.resolution = 180
        all360.resolution = 360
        let index = PackIndex(
            generator: "forged", source: SourceDescription(kind: "forged", baseURL: nil, resolution: 180, resolutions: [180, 360]),
            packs: [all], renditionPacks: [all360])
        try write(index, to: directory)
        return directory + "/index.json"
    }

    static func write(_ index: PackIndex, to directory: String) throws {
        try index.encoded().write(to: URL(fileURLWithPath: directory + "/index.json"))
    }

    /// What verify and a client's load say of the index in `directory`.
    static func verdicts(_ directory: String) -> (verify: [PackRejection], load: PackRejection?) {
        let report = PackVerifier.verifyDirectory(directory)
        do {
            _ = try PackIndexSource.loadFile(directory + "/index.json")
            return (report.problems, nil)
        } catch {
            guard case .rejected(let rejection) = error else { return (report.problems, PackRejection(.unreadable, pack: "?", detail: "\(error)")) }
            return (report.problems, rejection)
        }
    }

    @Test(.computes) func verifyRefusesEveryIndexTheClientsRefuseByTheSameRules() throws {
        let workspace = try TemporaryDirectory()
        let honest = workspace.file("honest")
        _ = try Self.renditionDist(in: honest, renditionSide: 360)
        let control = Self.verdicts(honest)
        #expect(control.verify.isEmpty && control.load == nil, "the forged dist is otherwise sound: \(control)")

        let original = try readIndex(honest + "/index.json")
        var cases: [(String, PackIndex)] = []
        var notInSource = original
        notInSource.source.resolutions = [180, 720]
        cases.append(("a rendition whose resolution is not in source.resolutions", notInSource))
        var plainRendition = original
        plainRendition.renditionPacks![0].name = "all360"
        cases.append(("a rendition pack with a plain name", plainRendition))
        var dottedPack = original
        dottedPack.packs[0].name = "all.180"
        cases.append(("a packs[] entry with a dotted name", dottedPack))
        var firstAt1080 = original
        firstAt1080.packs[0].resolution = 1080
        cases.append(("a packs[] resolution absent from source.resolutions", firstAt1080))
        var firstAt360 = original
        firstAt360.packs[0].resolution = 360
        cases.append(("a packs[] entry not at the first resolution", firstAt360))

        for (label, index) in cases {
            let directory = workspace.file(label.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "[]", with: ""))
            try FileManager.default.copyItem(atPath: honest, toPath: directory)
            try Self.write(index, to: directory)
            let (verify, load) = Self.verdicts(directory)
            let refusal = try #require(load, "\(label): the client accepted it")
            #expect(verify.contains(refusal), "\(label): verify lists \(verify), the client refuses \(refusal)")
        }
    }

    @Test func aRenditionOfGIFsOfAnotherSizeIsRefusedByVerifyInstallCatAndTheLazyCache() async throws {
        let workspace = try TemporaryDirectory()
        let honest = workspace.file("honest"), forged = workspace.file("forged")
        _ = try Self.renditionDist(in: honest, renditionSide: 360)
        let index = try Self.renditionDist(in: forged, renditionSide: 180)
        let server = try ClientStaticFileServer(root: forged)
        defer { server.stop() }

        // verify: the rules pass (the index says nothing wrong), the GIFs do not.
        #expect(PackVerifier.verifyDirectory(honest).isOK)
        let report = PackVerifier.verifyDirectory(forged)
        #expect(
            report.problems.count == 3 && report.problems.allSatisfy { $0.reason == .wrongResolution && $0.pack == "all.360" },
            "\(report.problems)")
        #expect(report.problems.first?.detail == "the GIF is 180×180, not the pack's resolution of 360 px", "\(report.problems)")

        // install of the 360 px rendition, from the local index and over HTTP.
        for source in [index, server.baseURL + "/index.json"] {
            let cache = workspace.file("cache-\(source.hasPrefix("http") ? "http" : "file")")
            let install = try await ClientCommandTests.gifpack(["install", "--index", source, "--cache", cache, "--resolution", "360"])
            #expect(install.status == 1 && install.error.contains("wrong-resolution"), "\(source): \(install)")
            #expect(!FileManager.default.fileExists(atPath: cache + "/e0.gif"))
            let honestInstall = try await ClientCommandTests.gifpack([
                "install", "--index", honest + "/index.json", "--cache", cache,
                "--resolution", "360"
            ])
            #expect(honestInstall.status == 0, "\(honestInstall)")
        }

        // cat: one GIF from the local pack, and by range through the lazy cache.
        for arguments in [
            ["cat", "--resolution", "360", index, "e0"],
            ["cat", "--resolution", "360", "--index", server.baseURL + "/index.json", "--cache", workspace.file("lazy"), "e0"]
        ] {
            let cat = try await ClientCommandTests.gifpack(arguments)
            #expect(cat.status == 1 && cat.output.isEmpty && cat.error.contains("wrong-resolution"), "\(arguments): \(cat)")
        }
        let first = try await ClientCommandTests.gifpack([
            "cat", "--resolution", "180", "--index", server.baseURL + "/index.json",
            "--cache", workspace.file("lazy"), "e0"
        ])
        #expect(first.status == 0 && !first.output.isEmpty, "the 180 px pack is sound: \(first.error)")
    }
}

import ExerciseDBFixture
import Foundation
import GifPackClient
import GifPackGIF
import GifPackSystem
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures
import GifPackIndexReader

/// Placeholders end to end: a build against the fixture server gives every GIF a BlurHash, an average
/// colour, timing and posters, in a companion pack that stock tools accept; the cache makes a
/// no-change rebuild derive nothing.
@Suite("Placeholders and posters in built packs", .timeLimit(.minutes(5)))
struct PosterBuildTests {
    /// Mean absolute error per channel allowed between a decoded poster and a reference area
    /// downscale of the still (0...255 scale): palette quantisation of the fixture's noisy GIFs
    /// (measured at most 5.5).
    static let posterErrorBound = 8.0

    static func postersManifest(_ server: FixtureServer, output: String = "  posters: [80, 200]") -> String {
        rapidAPIManifest(server: server, packs: "output:\n\(output)")
    }

    @Test func everyGIFHasTheReferenceBlurHashAnAverageColourTimingAndPostersThatLookLikeItsStill() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.postersManifest(server), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let dist = workspace.file("dist")
        let index = try readIndex("\(dist)/index.json")
        #expect(index.formatVersion == FormatVersion(major: 1, minor: 2))
        let pack = try #require(index.packs.first)
        #expect(!pack.gifs.isEmpty)
        let reader = try PackEntryReader(path: "\(dist)/\(pack.file)", pack: pack)
        let catalog = try reader.catalog()
        let posters = try #require(pack.posters)
        #expect(posters.name == "all-posters" && posters.sizes == [80, 200])
        let posterReader = try PosterPackReader(path: "\(dist)/\(posters.file)", posters: posters)

        var jobs: [(RGBImage, x: Int, y: Int)] = []
        var stills: [String: StillFrame] = [:]
        for gif in pack.gifs {
            let bytes = try reader.gif(sha256: gif.sha256)
            let info = try GIFInspector.inspect(bytes: bytes)
            let still = try StillFrameDecoder.decode(bytes: bytes)
            stills[gif.sha256] = still
            jobs.append((AreaDownscaler.downscale(still.image, longestSide: BlurHashEncoder.pixelSide), 4, 3))
            let placeholder = try #require(gif.placeholder, "\(gif.sha256) has no placeholder")
            #expect(placeholder.averageColor == still.image.averageColorHex)
            #expect(placeholder.averageColor.wholeMatch(of: /#[0-9a-f]{6}/) != nil)
            #expect(placeholder.width == info.width && placeholder.height == info.height)
            #expect(
                placeholder.frames == info.frameCount && placeholder.durationMilliseconds == info.durationMilliseconds
                    && placeholder.loopCount == info.loopCount)
            let recorded = catalog.exercises.compactMap(\.gif).first { $0.sha256 == gif.sha256 }
            #expect(recorded?.blurHash == placeholder.blurHash && recorded?.averageColor == placeholder.averageColor)
        }
        let reference = try await ReferenceBlurHash.encode(jobs)
        #expect(pack.gifs.map { $0.placeholder?.blurHash } == reference.map(Optional.some))

        for gif in pack.gifs {
            let still = try #require(stills[gif.sha256]).image
            for size in [80, 200] {
                let poster = try posterReader.poster(size: size, gifSHA256: gif.sha256)
                let info = try GIFInspector.inspect(bytes: poster)
                let expected = AreaDownscaler.size(width: still.width, height: still.height, longestSide: size)
                #expect(info.frameCount == 1 && info.width == expected.width && info.height == expected.height)
                #expect(max(info.width, info.height) == min(size, max(still.width, still.height)))
                let decoded = try StillFrameDecoder.decode(bytes: poster).image
                let error = meanAbsoluteError(decoded.pixels, referenceAreaDownscale(still, width: expected.width, height: expected.height))
                #expect(error.allSatisfy { $0 < Self.posterErrorBound }, "poster \(size) of \(gif.sha256): MAE \(error)")
            }
        }

        // Stock tools accept the posters pack; its entries are the documented paths.
        let file = "\(dist)/\(posters.file)"
        #expect(try await run("/usr/bin/zstd", ["-q", "-t", file]).status == 0)
        let listing = try await run("/usr/bin/tar", ["--zstd", "-tf", file])
        #expect(listing.status == 0, "\(listing.error)")
        let names = listing.output.split(separator: "\n").map(String.init)
        let expectedNames =
            ["catalog.json"]
            + pack.gifs.flatMap { gif in
                [80, 200].map { PosterPackDescription.path(size: $0, sha256: gif.sha256) }
            }.sorted()
        #expect(names == expectedNames)
        #expect(posters.entryCount == expectedNames.count && posters.posters.map(\.path) == Array(expectedNames.dropFirst()))

        // gifpack's verifier checks the posters pack through the index and alone.
        let directory = PackVerifier.verifyDirectory(dist)
        #expect(directory.isOK, "\(directory.problems)")
        #expect(directory.packs == 2 && directory.gifs == pack.gifs.count * 3)
        let alone = PackVerifier.verifyPack(file)
        #expect(alone.isOK && alone.gifs == pack.gifs.count * 2, "\(alone.problems)")
    }

    /// Posters derived by the build are compressed as they are derived and copied into the posters
    /// pack; posters found in the cache are read, checked and compressed when the pack is made.
    /// Both ways give the same bytes.
    @Test func thePostersPackIsTheSameWhetherItsPostersWereJustDerivedOrFoundInTheCache() async throws {
        let server = try startFixture(count: 12)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let first = try await runBuild(manifest: Self.postersManifest(server), workspace: workspace)
        #expect(first.exitStatus == .success, "\(first.message)")
        let file = try #require(first.posterPacksPublished.first)
        let derived = try #require(FileManager.default.contents(atPath: workspace.file("dist/\(file)")))
        let frames = try FileManager.default.subpathsOfDirectory(atPath: workspace.file("cache/derived")).filter { $0.hasSuffix(".zst") }
        let distinct = try #require(readIndex(workspace.file("dist/index.json")).packs.first).gifs.count
        #expect(frames.count == 2 * distinct, "one frame per poster and size: \(frames.count)")

        // The same cache, an empty output: every poster is found, none derived, the pack made anew.
        try FileManager.default.removeItem(atPath: workspace.file("dist"))
        let second = try await runBuild(manifest: Self.postersManifest(server), workspace: workspace)
        #expect(second.gifs.placeholdersDerived == 0)
        #expect(second.posterPacksPublished == [file])
        #expect(FileManager.default.contents(atPath: workspace.file("dist/\(file)")) == derived)

        // A poster frame left in the cache is never trusted by another process: damaged, it changes nothing.
        for frame in frames {
            try Data("not a frame".utf8).write(to: URL(fileURLWithPath: workspace.file("cache/derived/\(frame)")))
        }
        try FileManager.default.removeItem(atPath: workspace.file("dist"))
        let third = try await runBuild(manifest: Self.postersManifest(server), workspace: workspace)
        #expect(third.exitStatus == .success, "\(third.message)")
        #expect(FileManager.default.contents(atPath: workspace.file("dist/\(file)")) == derived)
    }

    @Test func aNoChangeRebuildDerivesNothingAndASettingsChangeDerivesWithoutRequests() async throws {
        let server = try startFixture(count: 10)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let first = try await runBuild(manifest: Self.postersManifest(server, output: "  posters: [80]"), workspace: workspace)
        #expect(first.exitStatus == .success)
        let distinct = try #require(readIndex(workspace.file("dist/index.json")).packs.first).gifs.count
        #expect(first.gifs.placeholdersDerived == distinct)
        #expect(first.posterPacksPublished.map(unhashedPackName) == ["packs/all-posters-v1"], "\(first.posterPacksPublished)")

        server.resetStats()
        let second = try await runBuild(manifest: Self.postersManifest(server, output: "  posters: [80]"), workspace: workspace)
        #expect(server.stats.imageRequests == 0)
        #expect(second.gifs.placeholdersDerived == 0)
        #expect(second.packs.map(\.outcome) == ["unchanged"] && second.posterPacksPublished.isEmpty)

        // New poster sizes: derived again from the stored blobs, no request; only the posters pack moves.
        server.resetStats()
        let third = try await runBuild(manifest: Self.postersManifest(server, output: "  posters: [80, 120]"), workspace: workspace)
        // Only the catalog's list pages were asked for: no GIF, nothing else.
        #expect(server.stats.imageRequests == 0 && server.stats.totalRequests == server.stats.listRequests, "\(server.stats)")
        #expect(third.gifs.placeholdersDerived == distinct)
        #expect(third.packs.map(\.outcome) == ["unchanged"])
        #expect(third.posterPacksPublished.map(unhashedPackName) == ["packs/all-posters-v2"], "\(third.posterPacksPublished)")
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.packs.first?.posters?.sizes == [80, 120])

        // New BlurHash components change the catalog: a new pack version.
        let fourth = try await runBuild(
            manifest: Self.postersManifest(server, output: "  posters: [80, 120]\n  blurhash: {x: 3, y: 3}"),
            workspace: workspace)
        #expect(fourth.packs.map(\.outcome) == ["published"])
        let hash = try #require(readIndex(workspace.file("dist/index.json")).packs.first?.gifs.first?.placeholder?.blurHash)
        // The size flag is (x - 1) + (y - 1) * 9 = 20, base 83 "K"; 2 + 8 AC components of 2 characters.
        #expect(hash.first == "K" && hash.count == 6 + 2 * 8)

        // No posters: no posters pack, the BlurHash stays.
        let fifth = try await runBuild(manifest: Self.postersManifest(server, output: "  posters: []"), workspace: workspace)
        #expect(fifth.exitStatus == .success)
        let last = try #require(readIndex(workspace.file("dist/index.json")).packs.first)
        #expect(last.posters == nil && last.gifs.allSatisfy { $0.placeholder != nil })
    }

    @Test func aGIFWhoseFirstFrameIsBlankGetsThePosterOfItsFirstRealFrame() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        // Frame 1: a white screen; frame 2: a blue and red picture over it.
        let palette: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (10, 20, 200), (220, 30, 30), (0, 0, 0)]
        let white = TestFrame(width: 40, height: 40, indices: [UInt8](repeating: 0, count: 1600))
        let picture = TestFrame(left: 4, top: 4, width: 32, height: 32, indices: (0..<1024).map { UInt8($0 < 512 ? 1 : 2) })
        let gif = try writeTestGIF(width: 40, height: 40, palette: palette, frames: [white, picture])
        let id = try #require(server.catalog.exercises.first?.id)
        server.replaceGIF(id: id, with: gif)
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.postersManifest(server, output: "  posters: [16, 32]"), workspace: workspace)
        #expect(report.exitStatus == .success, "\(report.message)")
        let index = try readIndex(workspace.file("dist/index.json"))
        let pack = try #require(index.packs.first)
        let hash = try #require(pack.exercises.first { $0.id == id }?.gif)
        #expect(hash == sha256Hex(gif))
        let placeholder = try #require(pack.gifs.first { $0.sha256 == hash }?.placeholder)
        #expect(placeholder.averageColor != "#ffffff")
        let posters = try #require(pack.posters)
        let reader = try PosterPackReader(path: workspace.file("dist/\(posters.file)"), posters: posters)
        for size in [16, 32] {
            let poster = try StillFrameDecoder.decode(bytes: reader.poster(size: size, gifSHA256: hash)).image
            #expect(poster.width == size && poster.height == size)
            let colours = Set(stride(from: 0, to: poster.pixels.count, by: 3).map { Array(poster.pixels[$0..<$0 + 3]) })
            #expect(colours.count > 1 && colours.contains { $0[2] > 150 && $0[0] < 100 }, "the \(size) px poster shows the picture, not the blank frame")
        }
    }

    @Test func badPosterSettingsExitTwoNamingTheKeyBeforeAnyRequest() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let cases: [(output: String, path: String)] = [
            ("  posters: [80, 8]", "output.posters[1]"),
            ("  posters: [80, 1024]", "output.posters[1]"),
            ("  posters: [80, 200, 80]", "output.posters[2]"),
            ("  blurhash: {x: 0, y: 3}", "output.blurhash.x"),
            ("  blurhash: {x: 4, y: 10}", "output.blurhash.y")
        ]
        for (position, item) in cases.enumerated() {
            let manifest = try workspace.write(Self.postersManifest(server, output: item.output), to: "bad-\(position).yaml")
            let result = try await run(
                productPath("gifpack"),
                [
                    "build", "-m", manifest, "--out", workspace.file("dist"),
                    "--cache", workspace.file("cache"), "--quiet"
                ],
                environment: ["GIFPACK_TEST_KEY": testAPIKey, "PATH": "/usr/bin:/bin"])
            #expect(result.status == 2 && result.error.contains(item.path), "\(item.output): \(result.status) \(result.error)")
        }
        #expect(server.stats.totalRequests == 0, "a bad manifest sends no request")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
    }

    @Test func theClientAndCLIServePlaceholdersAndPostersFromTheIndex() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await runBuild(manifest: Self.postersManifest(server), workspace: workspace)
        #expect(report.exitStatus == .success)
        let indexPath = workspace.file("dist/index.json")
        let index = try PackIndexSource.loadFile(indexPath)
        let pack = try #require(index.packs.first)
        let exercise = try #require(pack.exercises.first { $0.gif != nil })
        let placeholder = try #require(index.placeholder(forExercise: exercise.id))
        let entry = try #require(pack.gifEntry(forExercise: exercise.id))
        #expect(
            placeholder.gifSHA256 == entry.sha256 && placeholder.blurHash == entry.placeholder?.blurHash
                && placeholder.pack == "all" && placeholder.width == entry.placeholder?.width)
        #expect(index.placeholder(forExercise: "no-such-id") == nil)

        let posters = try #require(pack.posters)
        let expected = try PosterPackReader(path: workspace.file("dist/\(posters.file)"), posters: posters)
            .poster(size: 80, gifSHA256: entry.sha256)
        let output = workspace.file("poster.gif")
        let cat = try await run(
            "/bin/sh",
            [
                "-c", "\"$0\" cat --poster 80 \"$1\" \"$2\" > \"$3\"",
                productPath("gifpack"), indexPath, exercise.id, output
            ])
        #expect(cat.status == 0, "\(cat.error)")
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: output))) == expected)
        let unknownSize = try await run(productPath("gifpack"), ["cat", "--poster", "33", indexPath, exercise.id])
        #expect(unknownSize.status == 1 && unknownSize.error.contains("33 px"))
        #expect(try await run(productPath("gifpack"), ["cat", "--poster", "8", indexPath, exercise.id]).status == 2)

        // inspect lists a posters pack poster by poster.
        let inspect = try await run(productPath("gifpack"), ["inspect", workspace.file("dist/\(posters.file)")])
        #expect(inspect.status == 0, "\(inspect.error)")
        let distinct = pack.gifs.count
        #expect(
            inspect.output.contains("\(distinct * 2) poster(s) in posters pack all-posters, sizes 80, 200 px, \(distinct) GIF(s)"),
            "\(inspect.output)")
        #expect(inspect.output.contains(PosterPackDescription.path(size: 200, sha256: entry.sha256)))
    }
}

/// A pack file name without its `-<sha8>.tar.zst` tail: `packs/all-posters-v2-1a2b3c4d.tar.zst` →
/// `packs/all-posters-v2` (the tail must be there).
func unhashedPackName(_ file: String) -> String {
    guard file.wholeMatch(of: /.*-v[0-9]+-[0-9a-f]{8}\.tar\.zst/) != nil else { return "not a digest name: \(file)" }
    return String(file.dropLast("-12345678.tar.zst".count))
}

import ExerciseDBFixture
import Foundation
import GifPackIndexReader
import GifPackWebP
import Testing
@testable import GifPack
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// The builder's side: `output.formats: [gif, webp]` encodes each GIF the
/// fetch validated into its WebP rendition on the processing workers, caches it by the GIF's
/// SHA-256 and the policy, and counts it in report.json; a no-change rebuild encodes nothing and a
/// redrawn GIF is encoded once.
@Suite("WebP renditions in the build: manifest key, cache, report", .ownThread, .timeLimit(.minutes(5)))
struct WebPBuildTests {
    static let formats = """
        packs:
          - name: all
        output:
          formats: [gif, webp]
        """

    static func manifest(_ output: String, source: String = "kind: exercisedb-rapidapi\n  api_key_env: KEY\n  resolution: 180") -> String {
        """
        source:
          \(source)
        output:
        \(output)
        """
    }

    func manifestFailure(_ output: String) -> ManifestError? {
        do { _ = try ManifestLoader().parse(Self.manifest(output), environment: ["KEY": "k"]) } catch { return error }
        return nil
    }

    @Test(.computes) func theManifestKeyIsCheckedByName() throws {
        #expect(
            manifestFailure("  formats: [webp]")
                == .invalidValue(path: "output.formats", reason: "must list gif first (the packs every client can install), e.g. [gif, webp]"))
        #expect(
            manifestFailure("  formats: [webp, gif]")
                == .invalidValue(path: "output.formats", reason: "must list gif first (the packs every client can install), e.g. [gif, webp]"))
        #expect(
            manifestFailure("  formats: []")
                == .invalidValue(path: "output.formats", reason: "must list gif first (the packs every client can install), e.g. [gif, webp]"))
        #expect(
            manifestFailure("  formats: [gif, avif]")
                == .invalidValue(path: "output.formats[1]", reason: "\"avif\" is not a format gifpack writes (gif, webp)"))
        #expect(manifestFailure("  formats: [gif, webp, webp]") == .invalidValue(path: "output.formats[2]", reason: "format webp appears twice"))
        let manifest = try ManifestLoader().parse(Self.manifest("  formats: [gif, webp]"), environment: ["KEY": "k"])
        #expect(manifest.output.formats == [.gif, .webp] && manifest.output.makesWebP)
        // The WebP packs are named by resolution: a source of one unnamed size cannot have them.
        do {
            _ = try ManifestLoader().parse(
                Self.manifest("  formats: [gif, webp]", source: "kind: exercisedb-v1\n  base_url: http://127.0.0.1:9"),
                environment: [:])
            Issue.record("a v1 source with webp was accepted")
        } catch {
            #expect(
                error
                    == .invalidValue(
                        path: "output.formats",
                        reason: "webp needs a source with a resolution (its packs are named "
                            + "<pack>.<resolution>.webp); the exercisedb-v1 source serves one size only"))
        }
        #expect(try offlineManifest().output.formats == [.gif])
    }

    @Test func aRebuildEncodesNothingAndARedrawnGIFIsEncodedOnce() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, packs: Self.formats, fetch: "  refresh_after: 0")
        let first = try await buildDist(manifest: manifest, workspace: workspace)
        let webp = try #require(first.webp)
        #expect(webp.gifs > 0)
        #expect(webp.encoded == webp.gifs, "every distinct GIF encoded once: \(webp)")
        #expect(webp.outcomes.values.reduce(0, +) == webp.gifs)
        if let worst = webp.worstSSIM { #expect(worst >= 0.98) }
        #expect(webp.renditionBytes <= webp.gifBytes)
        // The index (format 1.4): the GIF pack as before, and its WebP rendition in formatPacks[].
        let index = try readIndex(workspace.file("dist/index.json"))
        #expect(index.formatVersion == .withFormats && index.source.formats == [.gif, .webp])
        #expect(PackDescriptionCheck.indexProblems(in: index, limits: .standard).isEmpty)
        let gifPack = try #require(index.packs.first)
        let webpPack = try #require(index.formatPacks?.first)
        #expect(index.formatPacks?.count == 1 && webpPack.name == "all.180.webp" && webpPack.format == .webp && webpPack.resolution == 180)
        #expect(webpPack.file.hasPrefix("packs/all.180.webp-v1-") && FileSystem.fileSize(workspace.file("dist/\(webpPack.file)")) == webpPack.bytes)
        #expect(index.formatPack(.webp, for: gifPack)?.name == webpPack.name)
        #expect(webpPack.exercises.map(\.id) == gifPack.exercises.map(\.id))
        #expect(webpPack.gifs.filter { $0.format == .webp }.count == webp.gifs - (webp.outcomes["gif"] ?? 0))
        for entry in webpPack.gifs {
            #expect(entry.location.path == entry.expectedPath && entry.placeholder != nil)
        }
        #expect(webpPack.posters == nil)
        // The cache holds one record per distinct GIF under the policy's key.
        let cache = WebPCache(layout: CacheLayout(root: workspace.file("cache")))
        #expect(try allFiles(under: cache.directory).filter { $0.hasSuffix(".txt") && !$0.hasSuffix("key.txt") }.count == webp.gifs)

        // No change: nothing encoded, the same counts, the same bytes.
        let before = try snapshot(workspace.file("dist"))
        let second = try await buildDist(manifest: manifest, workspace: workspace)
        #expect(second.webp?.encoded == 0)
        #expect(try snapshot(workspace.file("dist")) == before)
        #expect(second.webp?.outcomes == webp.outcomes && second.webp?.renditionBytes == webp.renditionBytes)

        // One GIF redrawn: that one alone is encoded, once.
        server.replaceGIF(
            id: server.catalog.exercises[0].id,
            with: try GIFSynthesizer.animatedGIF(width: 32, height: 32, frames: 3, colors: 4, seed: 4747))
        let third = try await buildDist(manifest: manifest, workspace: workspace)
        #expect(third.gifs.downloaded == 1)
        #expect(third.webp?.encoded == 1)
    }

    func snapshot(_ dist: String) throws -> [String: String] {
        var files: [String: String] = [:]
        for file in try allFiles(under: dist) where !file.hasSuffix("report.json") {
            files[file] = sha256Hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        }
        return files
    }

    @Test func aGIFOnlyManifestEncodesNothingAndReportsNoWebP() async throws {
        let server = try startFixture(count: 3)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let report = try await buildDist(manifest: rapidAPIManifest(server: server), workspace: workspace)
        #expect(report.webp == nil)
        #expect(!FileSystem.exists(workspace.file("cache/webp")))
    }
}

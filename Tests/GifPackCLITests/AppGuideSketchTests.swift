import Foundation
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestFixtures

/// docs/apps.md's app sketch: its non-UI block is the file AppGuideSketch.swift (compiled with the
/// tests), and it works against a signed build served by nginx: placeholders, then a refresh that
/// installs GIFs and posters, a refused index signed by another key, and a second refresh that
/// changes nothing.
@Suite("App guide: the sketch compiles and runs against nginx", .serialized, .timeLimit(.minutes(3)))
struct AppGuideSketchTests {
    /// Each compiled block: its name and the test file that holds it.
    static let blocks = [("clientTour", "AppGuideTour.swift"), ("ExerciseMedia", "AppGuideSketch.swift"),
                         ("ExerciseGIFs", "AppGuideLoader.swift")]

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    struct Mismatch: Error, CustomStringConvertible { var description: String }

    /// The lines between `// BEGIN docs/apps.md: NAME` and `// END docs/apps.md: NAME`.
    static func sketchSource(_ marker: String, file: String) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/Tests/GifPackCLITests/\(file)", encoding: .utf8)
        guard let begin = text.range(of: "// BEGIN docs/apps.md: \(marker)\n"),
              let end = text.range(of: "// END docs/apps.md: \(marker)", range: begin.upperBound..<text.endIndex) else {
            throw Mismatch(description: "\(file) has no BEGIN/END markers for \(marker)")
        }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    /// The ```swift block that follows `<!-- compiled: NAME -->` in docs/apps.md.
    static func guideBlock(_ marker: String) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/docs/apps.md", encoding: .utf8)
        guard let tag = text.range(of: "<!-- compiled: \(marker) -->"),
              let open = text.range(of: "```swift\n", range: tag.upperBound..<text.endIndex),
              let close = text.range(of: "\n```\n", range: open.upperBound..<text.endIndex) else {
            throw Mismatch(description: "docs/apps.md has no ```swift block after <!-- compiled: \(marker) -->")
        }
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }

    @Test func theGuidesBlocksAreTheCompiledFilesByteForByte() throws {
        for (marker, file) in Self.blocks {
            let guide = try Self.guideBlock(marker)
            let sketch = try Self.sketchSource(marker, file: file)
            #expect(guide == sketch, "docs/apps.md's \(marker) block differs from Tests/GifPackCLITests/\(file)")
        }
    }

    @Test func theTourInstallsReadsFromThePackAndOnDemand() async throws {
        let builds = try await PublishBuilds.make(count: 8)
        defer { builds.built.server.stop() }
        let site = builds.workspace.file("site")
        #expect(try await gifpackCLI(["publish", "--from", builds.v2, "--to", site]).status == 0)
        let nginx = try await NginxServer.start(root: site)
        defer { nginx.stop() }
        let index = try await PackIndexSource("\(builds.v2)/index.json").load()
        let pack = try #require(index.pack(named: "first"))
        let id = try #require(builds.built.server.catalog.exercises.map(\.id).sorted().first)
        let tour = try await clientTour(indexURL: nginx.baseURL + "/index.json", dist: builds.v2, packName: "first", exerciseID: id,
                                        cachesURL: URL(fileURLWithPath: builds.workspace.file("caches")),
                                        trustedKeyFile: builds.key.publicPath)
        let installed = try #require(tour.installed)
        let onDemand = try #require(tour.onDemand)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: installed))) == tour.fromPack)
        #expect(onDemand == tour.fromPack)
        #expect(sha256Hex(tour.fromPack) == pack.gifEntry(forExercise: id)?.sha256)
    }

    @Test func theSketchShowsPlaceholdersPostersAndGIFsFromASignedHostAndRefusesAnotherKey() async throws {
        let builds = try await PublishBuilds.make(count: 8)
        defer { builds.built.server.stop() }
        let site = builds.workspace.file("site")
        let published = try await gifpackCLI(["publish", "--from", builds.v2, "--to", site])
        #expect(published.status == 0, "\(published.error)")
        let nginx = try await NginxServer.start(root: site)
        defer { nginx.stop() }
        let indexURL = nginx.baseURL + "/index.json"

        let media = try ExerciseMedia(indexURL: indexURL, cacheDirectory: builds.workspace.file("app/media"),
                                      trustedKeyFile: builds.key.publicPath)
        let ids = builds.built.server.catalog.exercises.map(\.id).sorted()
        // Before any refresh: nothing to show but the default cell.
        #expect(await media.cell(for: ids[0]) == ExerciseCell(averageColor: nil, blurHash: nil, aspectRatio: 1, posterPath: nil))
        #expect(await media.gif(for: ids[0]) == nil)

        let report = try await media.refresh()
        #expect(report.gifsWritten > 0 && report.postersWritten > 0)
        for id in ids {
            let cell = await media.cell(for: id)
            let color = try #require(cell.averageColor)
            #expect(color.hasPrefix("#") && color.count == 7)
            #expect(cell.blurHash?.isEmpty == false)
            #expect(cell.aspectRatio > 0)
            let poster = try #require(cell.posterPath)
            #expect(try Data(contentsOf: URL(fileURLWithPath: poster)).starts(with: Array("GIF8".utf8)))
            let gif = try #require(await media.gif(for: id))
            #expect(try sha256Hex(Array(Data(contentsOf: gif.url))) == gif.cacheKey)
        }

        // A second refresh with nothing new writes nothing and keeps every path.
        let again = try await media.refresh()
        #expect(again.gifsWritten == 0 && again.postersWritten == 0)

        // An app trusting another key refuses the index before any pack request.
        let other = try TestSigningKey(workspace: builds.workspace, name: "other")
        let stranger = try ExerciseMedia(indexURL: indexURL, cacheDirectory: builds.workspace.file("app/stranger"),
                                         trustedKeyFile: other.publicPath)
        let mark = try await nginx.mark()
        await #expect(throws: PackClientError.self) { try await stranger.refresh() }
        let requests = try await nginx.log(since: mark).map(\.path)
        #expect(!requests.contains { $0.contains("/packs/") }, "\(requests)")
    }

    @Test func theLoaderBlockShowsPlaceholdersAndGIFsFromASignedHostAndChecksDailyWithOneRequest() async throws {
        let builds = try await PublishBuilds.make(count: 8)
        defer { builds.built.server.stop() }
        let site = builds.workspace.file("site")
        let published = try await gifpackCLI(["publish", "--from", builds.v2, "--to", site])
        #expect(published.status == 0, "\(published.error)")
        let nginx = try await NginxServer.start(root: site)
        defer { nginx.stop() }
        let key = try String(contentsOfFile: builds.key.publicPath, encoding: .utf8)
        let media = try ExerciseGIFs(indexURL: URL(string: nginx.baseURL + "/index.json")!,
                                     folder: URL(fileURLWithPath: builds.workspace.file("app/gifs")), publicKey: key)
        let ids = builds.built.server.catalog.exercises.map(\.id).sorted()
        #expect(await media.row(ids[0]) == nil)               // nothing installed yet
        #expect(try await media.dailyRefresh())
        for id in ids {
            let row = try #require(await media.row(id))
            #expect(row.averageColor?.hasPrefix("#") == true && row.blurHash?.isEmpty == false)
            let poster = try #require(row.posterURL)
            #expect(try Data(contentsOf: poster).starts(with: Array("GIF8".utf8)))
            let gif = try #require(try await media.gif(id))
            #expect(gif.tier == .installed || gif.tier == .memory)
            #expect(sha256Hex(Array(gif.data)) == gif.sha256 && gif.fileURL != nil)
        }
        await media.upcoming(ids).finished()
        let mark = try await nginx.mark()
        #expect(try await !media.dailyRefresh())
        let check = try await nginx.log(since: mark)
        #expect(check.count == 1 && check.first?.status == 304 && check.first?.bodyBytes == 0, "\(check)")
    }
}

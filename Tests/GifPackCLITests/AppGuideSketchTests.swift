import Foundation
import GifPackClient
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
import GifPackIndexReader

/// docs/apps.md's Swift blocks: each is compiled — here (the plain-Swift blocks are test files, byte
/// for byte, and run against a signed build served by nginx; the manifest block is resolved by
/// AppGuidePackageTests) or on Apple platforms (the SwiftUI/UIKit blocks, by the `guide-ios-simulator`
/// job of .github/workflows/apple.yml through scripts/apple-guide-snippets.py).
@Suite("App guide: the sketch compiles and runs against nginx", .tags(.nginx), .serialized, .timeLimit(.minutes(3)))
struct AppGuideSketchTests {
    /// Each compiled block: its name and the test file that holds it.
    static let blocks = [("clientTour", "AppGuideTour.swift"), ("ExerciseGIFs", "AppGuideLoader.swift"), ("CellContent", "AppGuideCell.swift")]

    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    struct Mismatch: Error, CustomStringConvertible { var description: String }

    /// The lines between `// BEGIN docs/apps.md: NAME` and `// END docs/apps.md: NAME`.
    static func sketchSource(_ marker: String, file: String) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/Tests/GifPackCLITests/\(file)", encoding: .utf8)
        guard let begin = text.range(of: "// BEGIN docs/apps.md: \(marker)\n"),
            let end = text.range(of: "// END docs/apps.md: \(marker)", range: begin.upperBound..<text.endIndex)
        else {
            throw Mismatch(description: "\(file) has no BEGIN/END markers for \(marker)")
        }
        return String(text[begin.upperBound..<end.lowerBound])
    }

    /// The ```swift block that follows `<!-- compiled: NAME -->` in docs/apps.md.
    static func guideBlock(_ marker: String) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/docs/apps.md", encoding: .utf8)
        guard let tag = text.range(of: "<!-- compiled: \(marker) -->"),
            let open = text.range(of: "```swift\n", range: tag.upperBound..<text.endIndex),
            let close = text.range(of: "\n```\n", range: open.upperBound..<text.endIndex)
        else {
            throw Mismatch(description: "docs/apps.md has no ```swift block after <!-- compiled: \(marker) -->")
        }
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }

    @Test(.computes) func theGuidesBlocksAreTheCompiledFilesByteForByte() throws {
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
        let tour = try await clientTour(
            indexURL: nginx.baseURL + "/index.json", dist: builds.v2, packName: "first", exerciseID: id,
            cachesURL: URL(fileURLWithPath: builds.workspace.file("caches")),
            trustedKeyFile: builds.key.publicPath)
        let installed = try #require(tour.installed)
        let onDemand = try #require(tour.onDemand)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: installed))) == tour.fromPack)
        #expect(onDemand == tour.fromPack)
        #expect(sha256Hex(tour.fromPack) == pack.gifEntry(forExercise: id)?.sha256)
    }

    @Test func everySwiftBlockIsCompiledHereOrByTheAppleWorkflow() async throws {
        let guide = try String(contentsOfFile: "\(Self.repositoryRoot)/docs/apps.md", encoding: .utf8)
        let lines = guide.components(separatedBy: "\n")
        var apple: [String] = []
        for (number, line) in lines.enumerated() where line == "```swift" {
            let marker = number > 0 ? lines[number - 1] : ""
            let name = marker.split(separator: ":").last.map { $0.dropLast(4).trimmingCharacters(in: .whitespaces) } ?? ""
            if marker.hasPrefix("<!-- compiled: ") {
                #expect(Self.blocks.contains { $0.0 == name }, "line \(number + 1): \(name) is no test file")
            } else if marker.hasPrefix("<!-- compiled manifest: ") {
                #expect(name == AppGuidePackageTests.marker, "line \(number + 1)")
            } else if marker.hasPrefix("<!-- compiled on Apple platforms: ") {
                apple.append(name)
            } else {
                Issue.record("docs/apps.md line \(number + 1): a Swift block that nothing compiles (no <!-- compiled…: NAME --> line above it)")
            }
        }
        #expect(apple.count >= 2, "the list screen and the background refresh: \(apple)")

        // The workflow's script puts every Apple block, and the plain blocks they use, in the package it builds.
        let out = try TemporaryDirectory()
        let script = try await run("/usr/bin/python3", ["\(Self.repositoryRoot)/scripts/apple-guide-snippets.py", out.path])
        #expect(script.status == 0, "\(script.error)")
        let written = DirectoryListing.names(out.file("Sources/AppGuideSnippets"))
        // The tour of the layers under the loader (`package` declarations) compiles here only, never in an app.
        let appBlocks = try Self.blocks.map(\.0).filter { try !Self.guideBlock($0).contains("import GifPackIndexReader") }
        #expect(appBlocks.count == Self.blocks.count - 1, "\(appBlocks)")
        #expect(Set(written) == Set((apple + appBlocks).map { "\($0).swift" }), "\(written)")
        for marker in appBlocks {
            #expect(try String(contentsOfFile: out.file("Sources/AppGuideSnippets/\(marker).swift"), encoding: .utf8) == Self.guideBlock(marker))
        }
        let manifest = try String(contentsOfFile: out.file("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(".product(name: \"GifPackClient\", package: \"gifpack\")") && manifest.contains(".iOS(.v15)"))
        let workflow = try String(contentsOfFile: "\(Self.repositoryRoot)/.github/workflows/apple.yml", encoding: .utf8)
        #expect(
            workflow.contains("python3 scripts/apple-guide-snippets.py .build/guide-snippets")
                && workflow.contains("-scheme AppGuideSnippets") && workflow.contains("IPHONEOS_DEPLOYMENT_TARGET=15.0"))
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
        let media = try ExerciseGIFs(
            indexURL: URL(string: nginx.baseURL + "/index.json")!,
            folder: URL(fileURLWithPath: builds.workspace.file("app/gifs")), publicKey: key)
        let ids = builds.built.server.catalog.exercises.map(\.id).sorted()
        #expect(await media.row(ids[0]) == nil)  // nothing installed yet
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

        // An app trusting another key refuses the index before any pack request.
        let other = try TestSigningKey(workspace: builds.workspace, name: "other")
        let stranger = try ExerciseGIFs(
            indexURL: URL(string: nginx.baseURL + "/index.json")!,
            folder: URL(fileURLWithPath: builds.workspace.file("app/stranger")),
            publicKey: try String(contentsOfFile: other.publicPath, encoding: .utf8))
        let before = try await nginx.mark()
        await #expect(throws: GIFLoaderError.self) { try await stranger.dailyRefresh() }
        let requests = try await nginx.log(since: before).map(\.path)
        #expect(!requests.contains { $0.contains("/packs/") }, "\(requests)")
    }
}

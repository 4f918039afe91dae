import Foundation
import Testing
@testable import GifPackTestSupport

/// The DocC documentation of GifPackClient (Sources/GifPackClient/GifPackClient.docc and the doc
/// comments of what `import GifPackClient` gives an app): `make docs` builds it with
/// scripts/docs.sh, with warnings as errors; here the same script runs on the modules this test run
/// was built with (no second build), so a broken ``symbol link`` in a doc comment or an article fails.
@Suite("DocC: the client's catalog builds without warnings", .timeLimit(.minutes(3)))
struct DocCCatalogTests {
    static var root: String { AppGuideSketchTests.repositoryRoot }
    static var catalog: String { "\(root)/Sources/GifPackClient/GifPackClient.docc" }
    /// The articles, by file name (DocC's page path is the name lowercased).
    static let articles = ["GettingStarted", "TheDailyRefresh", "OfflineUse", "ChoosingRenditions", "ChoosingFormats", "TrustAndKeys"]
    /// What the overview's first screen shows an app: the one type to hold and the values it answers.
    static let frontDoor = [
        "GIFLoader", "LoadedGIF", "LoaderPlaceholder", "PrefetchHandle", "RefreshProgress", "RefreshReport",
        "RenditionChoice", "TrustedKey", "HTTPTransport", "URLSessionTransport", "HTTPTimeouts",
        "GIFLoaderError", "GIFLoadFailure"
    ]

    /// scripts/docs.sh on the test run's own modules into `out`.
    static func buildDocs(into out: String, catalog: String? = nil) async throws -> ProcessResult {
        var environment = ProcessInfo.processInfo.environment
        if let catalog { environment["DOCS_CATALOG"] = catalog }
        return try await run("/bin/bash", ["\(root)/scripts/docs.sh", try FloorObjectScan.buildDirectory(), out], environment: environment)
    }

    @Test func theCatalogBuildsWithWarningsAsErrorsWithAPagePerArticleAndFrontDoorType() async throws {
        let work = try TemporaryDirectory()
        let out = work.file("docs")
        let result = try await Self.buildDocs(into: out)
        let diagnostics = (result.output + result.error).components(separatedBy: "\n").filter { $0.contains("warning:") || $0.contains("error:") }
        #expect(result.status == 0, "scripts/docs.sh: \(result.error)")
        #expect(diagnostics.isEmpty, "\(diagnostics.count) diagnostics:\n\(diagnostics.joined(separator: "\n"))")
        let pages = "\(out)/documentation/gifpackclient"
        #expect(FileManager.default.fileExists(atPath: "\(pages)/index.html"))
        for page in Self.articles + Self.frontDoor {
            #expect(FileManager.default.fileExists(atPath: "\(pages)/\(page.lowercased())/index.html"), "no page for \(page)")
            #expect(FileManager.default.fileExists(atPath: "\(out)/data/documentation/gifpackclient/\(page.lowercased()).json"), "no data for \(page)")
        }
        // A symbol page carries the type's doc comment.
        let loader = try String(contentsOfFile: "\(out)/data/documentation/gifpackclient/gifloader.json", encoding: .utf8)
        #expect(loader.contains("one object for exercise GIFs"))
    }

    @Test func aBrokenSymbolLinkFailsTheBuild() async throws {
        let work = try TemporaryDirectory()
        let copy = work.file("GifPackClient.docc")
        try FileManager.default.copyItem(atPath: Self.catalog, toPath: copy)
        let article = "\(copy)/OfflineUse.md"
        let text = try String(contentsOfFile: article, encoding: .utf8)
        try (text + "\nSee ``GIFLoader/noSuchMethod()`` and <doc:NoSuchArticle>.\n").write(toFile: article, atomically: true, encoding: .utf8)
        let result = try await Self.buildDocs(into: work.file("docs"), catalog: copy)
        let diagnostics = result.output + result.error  // docc prints them on standard output
        #expect(result.status != 0)
        #expect(diagnostics.contains("'noSuchMethod()' doesn't exist at '/GifPackClient/GIFLoader'"), "\(diagnostics)")
        #expect(diagnostics.contains("NoSuchArticle"), "\(diagnostics)")
    }

    /// The overview's first screen (before its Topics) names each front-door type as a symbol link,
    /// and every article is curated in its Topics.
    @Test(.computes) func theOverviewShowsTheLoaderAndItsValuesAndCuratesEveryArticle() throws {
        let overview = try String(contentsOfFile: "\(Self.catalog)/GifPackClient.md", encoding: .utf8)
        let topics = try #require(overview.range(of: "\n## Topics\n"))
        let firstScreen = overview[..<topics.lowerBound]
        for name in Self.frontDoor {
            #expect(firstScreen.contains("``\(name)``"), "the overview does not show \(name)")
        }
        for article in Self.articles {
            #expect(overview[topics.upperBound...].contains("<doc:\(article)>"), "the Topics do not list \(article)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.catalog).filter { $0.hasSuffix(".md") }
        #expect(Set(files) == Set((Self.articles + ["GifPackClient"]).map { "\($0).md" }), "\(files)")
    }

    /// A sample is compiled in one place: each Swift block of an article is, byte for byte, one of
    /// docs/apps.md's compiled blocks (compiled here by AppGuideSketchTests and AppGuidePackageTests,
    /// or by the Apple workflow).
    @Test(.computes) func theArticlesSwiftBlocksAreTheGuidesCompiledBlocks() throws {
        let guide = try String(contentsOfFile: "\(Self.root)/docs/apps.md", encoding: .utf8)
        let compiled = Self.swiftBlocks(in: guide, after: "<!-- compiled")
        #expect(compiled.count >= 6, "docs/apps.md's compiled blocks: \(compiled.count)")
        var used = 0
        for article in Self.articles {
            let text = try String(contentsOfFile: "\(Self.catalog)/\(article).md", encoding: .utf8)
            for block in Self.swiftBlocks(in: text, after: nil) {
                used += 1
                #expect(compiled.contains(block), "\(article).md has a Swift block that is not one of docs/apps.md's compiled blocks:\n\(block)")
            }
        }
        #expect(used >= 4, "the articles show the guide's compiled samples: \(used)")
    }

    /// The bodies of the ```swift blocks of `text`; with `marker`, only those whose previous line starts with it.
    static func swiftBlocks(in text: String, after marker: String?) -> [String] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [String] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard lines[index] == "```swift", marker.map({ index > 0 && lines[index - 1].hasPrefix($0) }) ?? true else { continue }
            guard let end = lines[(index + 1)...].firstIndex(of: "```") else { break }
            blocks.append(lines[(index + 1)..<end].joined(separator: "\n"))
            index = end
        }
        return blocks
    }

    @Test(.computes) func makeDocsBuildsTheClientWithTheTestBuildsFlagsThenRunsTheScript() throws {
        let makefile = try String(contentsOfFile: "\(Self.root)/Makefile", encoding: .utf8)
        let recipe = ClientWarningsTests.recipe("docs", in: makefile)
        #expect(recipe.contains { $0.contains("build --target GifPackClient $(STRICT)") }, "make docs: \(recipe)")
        #expect(recipe.contains { $0.contains("scripts/docs.sh") && $0.contains("$(DOCS_DIR)") }, "make docs: \(recipe)")
        #expect(makefile.contains("DOCS_DIR := .build/docs") && makefile.contains("@echo \"make docs "))
        let readme = try String(contentsOfFile: "\(Self.root)/README.md", encoding: .utf8)
        #expect(readme.contains("`make docs`"))
    }
}

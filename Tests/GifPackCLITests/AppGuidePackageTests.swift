import Foundation
import Testing
@testable import GifPackTestSupport

/// docs/apps.md's `Package.swift` block: an app's manifest that depends on a clone
/// of gifpack kept under any folder name. SwiftPM resolves the block, as written but pointed at a
/// clone in a folder of another name, and rejects the form without `name:` there (so the check can
/// fail). The clone is a stand-in with this package's name and client product, read from
/// Package.swift: resolving the real one would fetch its dependencies from the network.
@Suite("App guide: the Package.swift block works for a clone under any folder name", .serialized, .timeLimit(.minutes(3)))
struct AppGuidePackageTests {
    static let marker = "AppPackage"

    /// The ```swift block after `<!-- compiled manifest: AppPackage -->`.
    static func manifestBlock() throws -> String {
        let text = try String(contentsOfFile: "\(AppGuideSketchTests.repositoryRoot)/docs/apps.md", encoding: .utf8)
        guard let tag = text.range(of: "<!-- compiled manifest: \(marker) -->"),
            let open = text.range(of: "```swift\n", range: tag.upperBound..<text.endIndex),
            let close = text.range(of: "\n```\n", range: open.upperBound..<text.endIndex)
        else {
            throw AppGuideSketchTests.Mismatch(description: "docs/apps.md has no ```swift block after <!-- compiled manifest: \(marker) -->")
        }
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }

    /// `swift package show-dependencies` of an app whose manifest is `manifest`, beside a stand-in clone
    /// of gifpack in the folder `cloneFolder` (`work`'s), made a git repository tagged `tag` when given.
    static func resolve(
        _ manifest: String, cloneFolder: String, tag: String? = nil,
        in work: TemporaryDirectory? = nil
    ) async throws -> ProcessResult {
        let root = try String(contentsOfFile: "\(AppGuideSketchTests.repositoryRoot)/Package.swift", encoding: .utf8)
        let name = try #require(root.firstMatch(of: /let package = Package\(\s*name: "([^"]+)"/)?.1)
        #expect(root.contains(".library(name: \"GifPackClient\""))
        let work = try work ?? TemporaryDirectory()
        let clone = work.file(cloneFolder)
        try FileManager.default.createDirectory(atPath: "\(clone)/Sources/GifPackClient", withIntermediateDirectories: true)
        // The stand-in declares the real one's `Builder` trait, on by default: the guide's `traits: []` turns it off.
        #expect(root.contains(".default(enabledTraits: [\"Builder\"])"))
        try """
        // swift-tools-version:6.1
        import PackageDescription
        let package = Package(name: "\(name)", products: [.library(name: "GifPackClient", targets: ["GifPackClient"])],
                              traits: [.trait(name: "Builder"), .default(enabledTraits: ["Builder"])],
                              targets: [.target(name: "GifPackClient")])
        """.write(toFile: "\(clone)/Package.swift", atomically: true, encoding: .utf8)
        try "public let clientStandIn = 1\n".write(toFile: "\(clone)/Sources/GifPackClient/Client.swift", atomically: true, encoding: .utf8)
        if let tag {
            let git = ["-C", clone, "-c", "user.name=gifpack-test", "-c", "user.email=test@example.invalid"]
            for step in [["init", "-q"], ["add", "."], ["commit", "-qm", "stand-in"], ["tag", tag]] {
                let result = try await run("/usr/bin/git", git + step)
                try #require(result.status == 0, "git \(step): \(result.error)")
            }
        }
        let app = work.file("MyApp")
        try FileManager.default.createDirectory(atPath: "\(app)/Sources/MyApp", withIntermediateDirectories: true)
        try manifest.replacingOccurrences(of: "path: \"../gifpack\"", with: "path: \"../\(cloneFolder)\"")
            .write(toFile: "\(app)/Package.swift", atomically: true, encoding: .utf8)
        try "import GifPackClient\n".write(toFile: "\(app)/Sources/MyApp/App.swift", atomically: true, encoding: .utf8)
        let swift = try PackageDescription.swiftExecutable()
        return try await run(swift, ["package", "--package-path", app, "--scratch-path", work.file("scratch"), "show-dependencies"])
    }

    @Test func theBlockResolvesAgainstACloneUnderAnotherFolderNameAndTheFormWithoutNameDoesNot() async throws {
        let block = try Self.manifestBlock()
        #expect(block.contains(".package(name: \"gifpack\", path: \"../gifpack\", traits: [])"), "\(block)")
        let resolved = try await Self.resolve(block, cloneFolder: "gifpack-main")
        #expect(resolved.status == 0, "\(resolved.error)")
        #expect(resolved.output.contains("gifpack-main"), "\(resolved.output)")

        let withoutName = block.replacingOccurrences(of: ".package(name: \"gifpack\", path:", with: ".package(path:")
        let refused = try await Self.resolve(withoutName, cloneFolder: "gifpack-main")
        #expect(refused.status != 0 && refused.error.contains("unknown package 'gifpack'"), "\(refused.status): \(refused.error)")
    }

    @Test func theTaggedVersionByURLResolvesWithTheSameProductLine() async throws {
        let guide = try String(contentsOfFile: "\(AppGuideSketchTests.repositoryRoot)/docs/apps.md", encoding: .utf8)
        let line = ".package(url: \"https://<your git host>/<owner>/gifpack.git\", from: \"0.2.0\")"
        #expect(guide.contains(line))
        let changelog = try String(contentsOfFile: "\(AppGuideSketchTests.repositoryRoot)/CHANGELOG.md", encoding: .utf8)
        #expect(changelog.contains("## [0.2.0]"), "the version the guide names is a released one")
        let work = try TemporaryDirectory()
        let byURL = try Self.manifestBlock().replacingOccurrences(
            of: ".package(name: \"gifpack\", path: \"../gifpack\", traits: [])",
            with: line.replacingOccurrences(of: "https://<your git host>/<owner>/gifpack.git", with: "file://\(work.file("host/gifpack.git"))"))
        let resolved = try await Self.resolve(byURL, cloneFolder: "host/gifpack.git", tag: "0.2.0", in: work)
        #expect(resolved.status == 0, "\(resolved.error)")
        #expect(resolved.output.contains("gifpack") && resolved.output.contains("0.2.0"), "\(resolved.output)")
    }

    /// An app resolves swift-crypto alone. Every dependency of the package but
    /// swift-crypto is used only under the `Builder` trait (on by default, so the builder and the
    /// tests build as before), and an app that depends on the package with `traits: []` (the guide's
    /// block) neither clones nor builds GRDB, Yams, swift-argument-parser or swift-log; the products
    /// are the client and the two programs. Read from `swift package dump-package`.
    @Test func everyDependencyButSwiftCryptoIsTheBuilderTraitsAndTheProductsAreTheClientAndTwoPrograms() async throws {
        let work = try TemporaryDirectory()
        let swift = try PackageDescription.swiftExecutable()
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_INTERNAL_PRODUCTS"] = nil
        let dumped = try await run(
            swift,
            [
                "package", "--package-path", AppGuideSketchTests.repositoryRoot, "--scratch-path", work.file("scratch"),
                "dump-package"
            ], environment: environment)
        try #require(dumped.status == 0, "\(dumped.error)")
        let package = try #require(try JSONSerialization.jsonObject(with: Data(dumped.output.utf8)) as? [String: Any])
        let products = (package["products"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(products) == ["GifPackClient", "gifpack", "exercisedb-fixture"], "\(products)")
        let traits = package["traits"] as? [[String: Any]] ?? []
        let defaults = traits.first { $0["name"] as? String == "default" }?["enabledTraits"] as? [String]
        #expect(defaults == ["Builder"], "\(traits)")
        var builderOnly: Set<String> = []
        for target in package["targets"] as? [[String: Any]] ?? [] {
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                guard let product = dependency["product"] as? [Any], product.count >= 4, let from = product[1] as? String else { continue }
                let condition = (product[3] as? [String: Any])?["traits"] as? [String]
                if from == "swift-crypto" { continue }
                #expect(condition == ["Builder"], "\(target["name"] ?? "?") uses \(from) outside the Builder trait")
                builderOnly.insert(from)
            }
        }
        #expect(builderOnly == ["GRDB.swift", "Yams", "swift-argument-parser", "swift-log"], "\(builderOnly)")
        let declared = (package["dependencies"] as? [[String: Any]] ?? []).count
        #expect(declared == builderOnly.count + 1, "every package dependency is swift-crypto or the builder's")
    }
}

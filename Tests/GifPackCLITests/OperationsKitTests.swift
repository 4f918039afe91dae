import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackCLI
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures

/// What an operator installs and wires up: the files `make install` puts in place, the man page,
/// and the step outputs a CI job branches on.
@Suite("Operations kit: install, man page, CI step outputs", .timeLimit(.minutes(3)))
struct OperationsKitTests {
    private let repository = #filePath.replacingOccurrences(of: "/Tests/GifPackCLITests/OperationsKitTests.swift", with: "")

    @Test func makeInstallPutsTheBinaryManPageAndCompletionsInPlace() async throws {
        let stage = try TemporaryDirectory()
        let binDir = URL(fileURLWithPath: productPath("gifpack")).deletingLastPathComponent().path
        let result = try await run(
            "/usr/bin/make",
            [
                "--no-print-directory", "-C", repository, "install-files",
                "DESTDIR=\(stage.path)", "PREFIX=/usr", "BIN_DIR=\(binDir)"
            ])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(FileManager.default.isExecutableFile(atPath: stage.file("usr/bin/gifpack")))
        let man = try String(contentsOfFile: stage.file("usr/share/man/man1/gifpack.1"), encoding: .utf8)
        #expect(man.contains(".Dt GIFPACK 1") && man.contains("metrics-file"), "\(man.prefix(200))")
        let expected = [
            ("usr/share/bash-completion/completions/gifpack", "complete -o filenames -F _gifpack gifpack"),
            ("usr/share/zsh/site-functions/_gifpack", "#compdef gifpack"),
            ("usr/share/fish/vendor_completions.d/gifpack.fish", "complete -c 'gifpack'")
        ]
        for (path, marker) in expected {
            let script = try String(contentsOfFile: stage.file(path), encoding: .utf8)
            #expect(script.contains(marker) && script.contains("metrics-file") && script.contains("install"), "\(path)")
        }
        // Nothing outside the prefix.
        #expect(try FileManager.default.contentsOfDirectory(atPath: stage.path) == ["usr"])

        let missing = try await run(
            "/usr/bin/make",
            [
                "--no-print-directory", "-C", repository, "install-files",
                "DESTDIR=\(stage.path)", "BIN_DIR=\(stage.file("nowhere"))"
            ])
        #expect(missing.status != 0 && missing.error.contains("no gifpack in BIN_DIR"))
    }

    /// The shipped man page (docs/man/gifpack.1, made by `make man`) must name every option the
    /// command line has: adding one without regenerating the page fails here.
    @Test func theManPageNamesEveryOptionOfEveryCommand() async throws {
        let dump = try await run(productPath("gifpack"), ["--experimental-dump-help"])
        #expect(dump.status == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])
        var names: [String] = []
        func collect(_ command: [String: Any]) {
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                    if let text = name["name"] as? String { names.append(text) }
                }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { collect(sub) }
        }
        collect(try #require(root["command"] as? [String: Any]))
        #expect(names.contains("metrics-file") && names.contains("github-output") && names.contains("layout"))
        let man = try String(contentsOfFile: "\(repository)/docs/man/gifpack.1", encoding: .utf8)
        for name in Set(names) {
            // mdoc: `.It Fl -out Ar out`, or with a short name `.It Fl m , -manifest Ar manifest`.
            #expect(
                man.contains("Fl -\(name) ") || man.contains("Fl -\(name)\n") || man.contains(" , -\(name) ")
                    || man.contains(" , -\(name)\n"), "docs/man/gifpack.1 lacks --\(name): run make man")
        }
    }

    @Test func githubOutputSaysWhetherARunWroteANewVersion() async throws {
        let server = try startFixture(count: 6)
        defer { server.stop() }
        let workspace = try TemporaryDirectory()
        let manifest = try workspace.write(rapidAPIManifest(server: server), to: "manifest.yaml")
        let outputs = workspace.file("github-output")
        var environment = ProcessInfo.processInfo.environment
        environment["GIFPACK_TEST_KEY"] = testAPIKey
        let build = [
            "build", "-m", manifest, "--out", workspace.file("dist"), "--cache", workspace.file("cache"), "-q",
            "--github-output", outputs
        ]
        #expect(try await run(productPath("gifpack"), build, environment: environment).status == 0)
        #expect(try String(contentsOfFile: outputs, encoding: .utf8) == "published=true\nexit-status=0\npacks=all-v1\n")
        #expect(try await run(productPath("gifpack"), build, environment: environment).status == 0)
        #expect(try await run(productPath("gifpack"), build + ["--progress", "nope"], environment: environment).status == 2)
        #expect(
            try String(contentsOfFile: outputs, encoding: .utf8) == """
                published=true
                exit-status=0
                packs=all-v1
                published=false
                exit-status=0
                packs=
                published=false
                exit-status=2
                packs=

                """)
    }

    @Test(.computes) func stepOutputsOfAPartialRunThatWroteANewVersion() {
        var report = BuildReport(generator: "t", exitStatus: .partial, message: "")
        report.packs = [
            .init(
                name: "all", version: 4, file: "packs/all-v4.tar.zst", outcome: "published", exercises: 3, missing: 1,
                distinctGIFs: 2, bytes: 10, uncompressedBytes: 20),
            .init(
                name: "chest", version: 2, file: "packs/chest-v2.tar.zst", outcome: "unchanged", exercises: 1, missing: 0,
                distinctGIFs: 1, bytes: 10, uncompressedBytes: 20)
        ]
        #expect(StepOutputs.lines(report) == "published=true\nexit-status=3\npacks=all-v4\n")
        report.exitStatus = .failed
        #expect(StepOutputs.lines(report).hasPrefix("published=false\n"))
    }

    /// The modules of the portable client's closure: no system library, their C calls in Platform.swift.
    static let portableModules: Set<String> = [
        "GifPackClient", "GifPackFormat", "GifPackSystem", "GifPackTransport",
        "GifPackZstd", "GifPackGIFCore", "GifPackJSON", "GifPackSigning", "GifPackIndexReader"
    ]

    /// Package.swift claims the Apple platforms for the portable client only: every other Swift
    /// module stops a non-Linux build with an `#error` naming the reason; a portable module that
    /// calls the C library allows Linux and Apple platforms and stops any other; the two pure-Swift
    /// modules (zstd, GIF walker) need no guard.
    @Test(.computes) func thePackageClaimsOnlyWhatBuilds() throws {
        let package = try String(contentsOfFile: "\(repository)/Package.swift", encoding: .utf8)
        for platform in [".macOS(", ".iOS(", ".tvOS(", ".watchOS(", ".visionOS("] {
            #expect(package.contains(platform), "Package.swift does not declare \(platform) for the portable client")
        }
        #expect(!package.contains(".macCatalyst("), "Package.swift claims Mac Catalyst, which nothing here is written for")
        let sources = "\(repository)/Sources"
        for module in try FileManager.default.contentsOfDirectory(atPath: sources).sorted() {
            let files = try FileManager.default.subpathsOfDirectory(atPath: "\(sources)/\(module)").filter { $0.hasSuffix(".swift") }
            guard !files.isEmpty else { continue }  // system library targets: headers only
            // Lines without their indentation: swift-format indents a `#error` inside its `#if`.
            let texts = try files.map { try String(contentsOfFile: "\(sources)/\(module)/\($0)", encoding: .utf8) }
                .map { $0.split(separator: "\n", omittingEmptySubsequences: false).map { $0.drop { $0 == " " } }.joined(separator: "\n") }
            if Self.portableModules.contains(module) {
                #expect(
                    !texts.contains { $0.contains("#error(\"\(module) builds on Linux only") },
                    "\(module) is in the portable client's closure but stops non-Linux builds")
                if files.contains("Platform.swift") {
                    let platform = try String(contentsOfFile: "\(sources)/\(module)/Platform.swift", encoding: .utf8)
                    #expect(platform.contains("#error(\"\(module) supports Linux"), "\(module)'s Platform.swift has no guard for other platforms")
                } else {
                    #expect(
                        !texts.contains { $0.contains("import Glibc") || $0.contains("import Darwin") },
                        "\(module) imports the C library without a Platform.swift")
                }
            } else {
                #expect(
                    texts.contains { $0.contains("#if !os(Linux)\n#error(\"\(module) builds on Linux only") },
                    "\(module) has no Linux-only #error guard")
            }
        }
    }
}

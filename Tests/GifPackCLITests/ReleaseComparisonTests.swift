import ExerciseDBFixture
import Foundation
import Testing
@testable import GifPack
@testable import GifPackCLI
@testable import GifPackTestSupport
@testable import GifPackTestServers
@testable import GifPackDistFixtures
@testable import GifPackTestFixtures

/// `gifpack review` and `gifpack diff` compare every rendition (a
/// release that changes only the 360 px GIFs changes those exercises, and costs single-GIF readers
/// those frames), and Unicode bidi controls from the API never reach the review page or a terminal
/// raw (one helper, `TerminalText`, for both).
@Suite("Review and diff: every rendition compared, bidi controls neutralized", .timeLimit(.minutes(5)))
struct ReleaseComparisonTests {
    static let bidi: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}",
        "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}"
    ]

    static func holdsBidi(_ text: String) -> Bool { text.unicodeScalars.contains { bidi.contains($0) } }

    @Test func aReleaseChangingOnlyThe360PixelGIFsIsChangedInReviewAndDiffAndNamesStayInOrder() async throws {
        let server = try startFixture(count: 4) {
            $0.gifDimension = 180
            $0.framesRange = 2...3
            $0.duplicateEvery = 0
        }
        defer { server.stop() }
        let ids = server.catalog.exercises.map(\.id).sorted()
        let workspace = try TemporaryDirectory()
        let manifest = rapidAPIManifest(server: server, fetch: "  refresh_after: 0").replacingOccurrences(of: "resolution: 180", with: "resolutions: [180, 360]")
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        try FileManager.default.copyItem(atPath: workspace.file("dist"), toPath: workspace.file("v1"))
        // v2: exercise 1 gets a new 360 px GIF (its 180 px one stays), exercise 2 a name holding
        // every bidi control (each would display the rest of its line reversed or reordered).
        server.replaceGIF(id: ids[1], resolution: 360, with: try GIFSynthesizer.animatedGIF(width: 360, height: 360, frames: 2, colors: 4, seed: 4_360))
        let hostileName = "Curl" + String(String.UnicodeScalarView(Self.bidi)) + "fig.exe"
        server.renameExercise(id: ids[2], to: hostileName)
        #expect(try await runBuild(manifest: manifest, workspace: workspace).exitStatus == .success)
        let (v1, v2) = (try readIndex(workspace.file("v1/index.json")), try readIndex(workspace.file("dist/index.json")))
        #expect(v1.packs[0].exercises == v2.packs[0].exercises, "the 180 px GIFs did not change")
        #expect(v1.renditionPacks?[0].exercises != v2.renditionPacks?[0].exercises, "a 360 px GIF did")

        let diff = IndexDiff(old: v1, new: v2)
        #expect(diff.changed == [ids[1]] && diff.added.isEmpty && diff.removed.isEmpty)
        let newFrame = try #require(v2.renditionPacks?[0].gifs.first { gif in !(v1.renditionPacks?[0].gifs.contains { $0.sha256 == gif.sha256 } ?? true) })
        #expect(diff.newGIFFrameBytes == newFrame.location.frameLength, "single-GIF readers fetch the new 360 px frame")

        let printed = try await gifpackCLI(["diff", workspace.file("v1/index.json"), workspace.file("dist/index.json")])
        #expect(printed.status == 0 && printed.output.contains("changed: 1 — \(ids[1])"), "\(printed.output)")
        #expect(printed.output.contains("single-GIF reads instead: \(newFrame.location.frameLength) bytes"), "\(printed.output)")

        let html = workspace.file("review")
        let review = try await gifpackCLI(["review", workspace.file("v1"), workspace.file("dist"), "--html", html])
        #expect(review.status == 0 && review.output.contains("4 exercises: 0 added, 1 changed, 0 removed"), "\(review.output) \(review.error)")
        var shown = false
        for file in try FileManager.default.subpathsOfDirectory(atPath: html) where file.hasSuffix(".html") {
            let page = try String(contentsOfFile: "\(html)/\(file)", encoding: .utf8)
            #expect(!Self.holdsBidi(page), "\(file) holds a raw bidi control")
            shown = shown || page.contains("Curl\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200e}\\u{200f}\\u{61c}fig.exe")
        }
        #expect(shown, "the name is shown with its controls written out, as a terminal shows them")
        #expect(!Self.holdsBidi(review.output + review.error))
    }

    /// The build's summary quotes what the API sent (a rejection's detail holds its Content-Type):
    /// each line passes the terminal's escaping, bidi controls included.
    @Test(.computes) func theBuildSummaryNeverPrintsABidiControlRaw() {
        var report = BuildReport(generator: "gifpack test", exitStatus: .partial, message: "done \u{202E}gnorw")
        report.stageSeconds["catalog"] = 1
        report.rejections = [
            FetchRejection(
                exerciseID: "0001", url: "http://api.example/0001", reason: .wrongContentType,
                detail: "Content-Type is image/\u{202E}fig\u{2066}; expected image/gif", status: 200)
        ]
        let lines = ReportPrinter(report: report).lines(quiet: false)
        #expect(lines.contains("  0001: wrong-content-type — Content-Type is image/\\u{202e}fig\\u{2066}; expected image/gif"), "\(lines)")
        #expect(lines.last == "partial: done \\u{202e}gnorw (exit 3)", "\(lines)")
        #expect(!lines.contains { Self.holdsBidi($0) })
    }
}

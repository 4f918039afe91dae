import Foundation
import Testing
@testable import GifPackTestSupport

/// The client adds no warning to an app's build (issue 44, item 8): `make test` builds the client's
/// closure with warnings as errors (in a scratch path of its own), and so does the Apple workflow's
/// macOS build of the product.
@Suite("The client's closure builds with warnings as errors", .timeLimit(.minutes(1)))
struct ClientWarningsTests {
    static var root: String { AppGuideSketchTests.repositoryRoot }

    /// The recipe lines of a Makefile target, variables not expanded.
    static func recipe(_ target: String, in makefile: String) -> [String] {
        let lines = makefile.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("\(target):") }) else { return [] }
        return Array(lines[(start + 1)...].prefix { $0.hasPrefix("\t") })
    }

    @Test(.computes) func makeTestAndTheAppleWorkflowTreatTheClientsWarningsAsErrors() throws {
        let makefile = try String(contentsOfFile: "\(Self.root)/Makefile", encoding: .utf8)
        let test = Self.recipe("test", in: makefile)
        let strict = test.firstIndex { $0.contains("--target GifPackClient") && $0.contains("-Xswiftc -warnings-as-errors") }
        let run = test.firstIndex { $0.contains("test --skip-build") }
        #expect(strict != nil && run != nil && strict! < run!, "make test: \(test)")
        #expect(test.contains { $0.contains("--scratch-path $(STRICT_SCRATCH)") } && makefile.contains("STRICT_SCRATCH := .build/"),
                "the strict build has a scratch path of its own, so it does not rebuild .build")
        let workflow = try String(contentsOfFile: "\(Self.root)/.github/workflows/apple.yml", encoding: .utf8)
        #expect(workflow.contains("run: swift build --product GifPackClient -Xswiftc -warnings-as-errors"))
    }
}

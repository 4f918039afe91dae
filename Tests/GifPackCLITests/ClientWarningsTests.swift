import Foundation
import Testing
@testable import GifPackTestSupport

/// The package adds no warning to an app's build: `make test` builds every module and test with
/// warnings as errors (the flag on its build line, `STRICT`), and so does the Apple workflow's macOS
/// build of the client's product.
@Suite("Warnings are errors in make test and the Apple workflow", .timeLimit(.minutes(1)))
struct ClientWarningsTests {
    static var root: String { AppGuideSketchTests.repositoryRoot }

    /// The recipe lines of a Makefile target, variables not expanded.
    static func recipe(_ target: String, in makefile: String) -> [String] {
        let lines = makefile.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("\(target):") }) else { return [] }
        return Array(lines[(start + 1)...].prefix { $0.hasPrefix("\t") })
    }

    @Test(.computes) func makeTestAndTheAppleWorkflowTreatWarningsAsErrors() throws {
        let makefile = try String(contentsOfFile: "\(Self.root)/Makefile", encoding: .utf8)
        let test = Self.recipe("test", in: makefile)
        let build = test.firstIndex { $0.contains("build --build-tests $(STRICT)") }
        let run = test.firstIndex { $0.contains("test --skip-build") }
        #expect(build != nil && run != nil && build! < run!, "make test: \(test)")
        #expect(makefile.contains("STRICT := -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error"))
        let workflow = try String(contentsOfFile: "\(Self.root)/.github/workflows/apple.yml", encoding: .utf8)
        #expect(workflow.contains("run: swift build --product GifPackClient -Xswiftc -warnings-as-errors"))
    }
}

import Foundation
import Testing
@testable import GifPackTestSupport

/// What `import GifPackClient` puts in front of an app is a small front door: at
/// most 150 public declarations, each with a doc comment. scripts/public-api.sh counts them from the
/// symbol graph of the test run's own modules (swift-symbolgraph-extract, as scripts/docs.sh), per
/// module they are declared in; a declaration made public again, or left without a doc comment,
/// fails here.
@Suite("Public API: one import gives an app a small, documented front door", .timeLimit(.minutes(2)))
struct PublicAPITests {
    static let limit = 150
    /// The modules whose declarations an app sees: the client, and the transport it re-exports.
    static let frontModules: Set<String> = ["GifPackClient", "GifPackTransport"]

    struct Count {
        var perModule: [String: (declarations: Int, undocumented: Int)] = [:]
        var total = 0
        var undocumented = 0
        var undocumentedNames: [String] = []
    }

    /// scripts/public-api.sh's report, parsed (`environment` adds GRAPHS and the like).
    static func count(environment extra: [String: String] = [:]) async throws -> Count {
        var environment = ProcessInfo.processInfo.environment
        environment["LIST"] = "1"
        environment.merge(extra) { $1 }
        let result = try await run(
            "/bin/bash", ["\(DocCCatalogTests.root)/scripts/public-api.sh", try FloorObjectScan.buildDirectory()],
            environment: environment)
        try #require(result.status == 0, "scripts/public-api.sh: \(result.error)")
        var count = Count()
        for line in result.output.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            if fields.count == 3, let declarations = Int(fields[1]), let undocumented = Int(fields[2]) {
                if fields[0] == "total" {
                    count.total = declarations
                    count.undocumented = undocumented
                } else {
                    count.perModule[fields[0]] = (declarations, undocumented)
                }
            } else if line.hasSuffix(" [undocumented]") {
                count.undocumentedNames.append(String(line))
            }
        }
        return count
    }

    @Test func anAppSeesAtMost150PublicDeclarationsEachDocumented() async throws {
        let count = try await Self.count()
        let table = count.perModule.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.declarations) (\($0.value.undocumented) undocumented)" }
        #expect(count.total > 0 && count.total <= Self.limit, "\(count.total) public declarations: \(table)")
        #expect(count.undocumented == 0, "without a doc comment:\n\(count.undocumentedNames.joined(separator: "\n"))")
        #expect(Set(count.perModule.keys).isSubset(of: Self.frontModules), "declarations from \(table)")
        #expect(count.perModule.values.map(\.declarations).reduce(0, +) == count.total)
        // The front door itself is there.
        #expect((count.perModule["GifPackClient"]?.declarations ?? 0) >= 40, "\(table)")
    }

    /// The counter counts: a made-up graph of 151 declarations (an extension block among them, which
    /// is not one), one without a doc comment, reads as 151 and 1.
    @Test func theCounterCountsEveryDeclarationButExtensionBlocksAndSeesAMissingDocComment() async throws {
        let work = try TemporaryDirectory()
        let graphs = work.file("graphs")
        try FileManager.default.createDirectory(atPath: graphs, withIntermediateDirectories: true)
        func symbol(_ name: String, kind: String = "swift.property", documented: Bool = true) -> [String: Any] {
            var symbol: [String: Any] = [
                "kind": ["identifier": kind], "pathComponents": ["Big", name],
                "location": ["uri": "file:///src/Sources/GifPackClient/Big.swift"]
            ]
            if documented { symbol["docComment"] = ["lines": [["text": "A property."]]] }
            return symbol
        }
        var symbols = (0..<150).map { symbol("p\($0)") } + [symbol("bare", documented: false), symbol("Big", kind: "swift.extension")]
        // A synthesized member has no location: it counts in its type's module.
        symbols[0]["pathComponents"] = ["Big"]
        symbols[0]["kind"] = ["identifier": "swift.struct"]
        symbols[1]["pathComponents"] = ["Big", "init(from:)"]
        symbols[1]["location"] = nil
        let graph: [String: Any] = ["symbols": symbols, "relationships": []]
        try JSONSerialization.data(withJSONObject: graph).write(to: URL(fileURLWithPath: "\(graphs)/GifPackClient.symbols.json"))
        let count = try await Self.count(environment: ["GRAPHS": graphs])
        #expect(count.total == 151 && count.undocumented == 1, "\(count.total) \(count.undocumented)")
        #expect(count.perModule["GifPackClient"]?.declarations == 151)
        #expect(count.undocumentedNames == ["GifPackClient swift.property Big.bare [undocumented]"], "\(count.undocumentedNames)")
    }
}

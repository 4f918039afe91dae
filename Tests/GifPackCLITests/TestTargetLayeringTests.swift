import Foundation
import Testing

/// Each test target depends on the modules it tests, so a client change does not rebuild
/// the builder or the builder's tests (docs/ARCHITECTURE.md, "Which test target holds what"). The
/// dependency graph is read from the package itself (`swift package describe --type json`, as
/// ``ClientPortabilityTests`` reads it): no path of target dependencies may lead from the builder's
/// side (the builder, its test support and fixtures, the builder's and the format's tests) to the
/// client or the command line, nor from the client, its index reader or its tests to the builder;
/// and none from the format's tests or the shared test support to the HTTP client or the fixture server.
@Suite("Test targets: the builder's side does not reach the client", .timeLimit(.minutes(5)))
struct TestTargetLayeringTests {
    /// Each target, and the targets no path of its dependencies may reach.
    static let apart: [(target: String, unreachable: [String])] = [
        ("GifPackIndexReader", ["GifPack", "GifPackClient"]),
        ("GifPackClient", ["GifPack", "GifPackCLI"]),
        ("GifPack", ["GifPackClient", "GifPackCLI"]),
        // The format's tests and the support every target shares build no HTTP client (curl) and no
        // fixture server: the servers are GifPackTestServers'.
        ("GifPackTestSupport", ["GifPack", "GifPackClient", "GifPackCLI", "GifPackHTTP", "CCurl", "ExerciseDBFixture"]),
        ("GifPackTestServers", ["GifPack", "GifPackClient", "GifPackCLI"]),
        ("GifPackTestFixtures", ["GifPackClient", "GifPackCLI"]),
        // The client's tests read dists the built binary makes (GifPackDistFixtures): they compile
        // neither the builder nor the command line.
        ("GifPackDistFixtures", ["GifPack", "GifPackClient", "GifPackCLI"]),
        ("GifPackClientTests", ["GifPack", "GifPackCLI", "GifPackTestFixtures"]),
        ("GifPackFormatTests", ["GifPack", "GifPackClient", "GifPackCLI", "GifPackHTTP", "CCurl", "ExerciseDBFixture"]),
        ("GifPackBuilderTests", ["GifPackClient", "GifPackCLI"])
    ]

    @Test("no dependency path leads from the builder's side to the client, or from the client to the builder")
    func theBuildersSideDoesNotReachTheClient() async throws {
        let package = try await PackageDescription.describe()
        let problems = try package.layeringProblems(Self.apart)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // The check itself, on a made-up graph that breaks the rule through two targets in between.

    @Test("the check names the whole path to a module that must not be reached, and passes a graph without one", .computes)
    func theCheckNamesThePath() throws {
        let json = """
            {"targets": [
              {"name": "BuilderTests", "type": "test", "path": "Tests/BuilderTests", "target_dependencies": ["Fixtures", "Format"]},
              {"name": "Fixtures", "type": "library", "path": "Tests/Fixtures", "target_dependencies": ["Builder"]},
              {"name": "Builder", "type": "library", "path": "Sources/Builder", "target_dependencies": ["Format", "Client"]},
              {"name": "Client", "type": "library", "path": "Sources/Client", "target_dependencies": ["Format"]},
              {"name": "Format", "type": "library", "path": "Sources/Format"}
            ],
            "products": []}
            """
        let package = try PackageDescription(json: Data(json.utf8), root: "/x")
        #expect(
            try package.layeringProblems([("BuilderTests", ["Client"]), ("Client", ["Builder"])]) == [
                "BuilderTests reaches Client: BuilderTests → Fixtures → Builder → Client"
            ])
        #expect(try package.layeringProblems([("Format", ["Client", "Builder"])]).isEmpty)
        #expect(try package.layeringProblems([("Nowhere", ["Client"])]) == ["no target Nowhere in the package"])
    }
}

extension PackageDescription {
    /// One line per target that reaches a target it must not, with the path that leads there, and
    /// per rule whose target the package does not have.
    func layeringProblems(_ rules: [(target: String, unreachable: [String])]) throws -> [String] {
        var problems: [String] = []
        for rule in rules {
            guard targets[rule.target] != nil else {
                problems.append("no target \(rule.target) in the package")
                continue
            }
            for forbidden in rule.unreachable {
                if let path = try dependencyPath(from: rule.target, to: forbidden) {
                    problems.append("\(rule.target) reaches \(forbidden): \(path.joined(separator: " → "))")
                }
            }
        }
        return problems
    }

    /// The shortest chain of target dependencies from `start` to `goal` (both included), nil when none.
    func dependencyPath(from start: String, to goal: String) throws -> [String]? {
        guard targets[start] != nil else { throw DescribeError("no target \(start)") }
        var cameFrom: [String: String] = [:]
        var queue = [start]
        var next = 0
        while next < queue.count {
            let name = queue[next]
            next += 1
            if name == goal {
                var path = [goal]
                while let previous = cameFrom[path[0]] { path.insert(previous, at: 0) }
                return path
            }
            guard let target = targets[name] else { throw DescribeError("\(cameFrom[name] ?? start) depends on unknown target \(name)") }
            for dependency in target.targetDependencies where dependency != start && cameFrom[dependency] == nil {
                cameFrom[dependency] = name
                queue.append(dependency)
            }
        }
        return nil
    }
}

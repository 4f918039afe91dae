import Foundation
import Testing
@testable import GifPackTestSupport

/// The test sources stay fit for a cooperative pool of two threads: no synchronous
/// function starts a process (waiting for one is async only, ``ChildProcess/exitStatus()``), the
/// process and wait primitives live in ChildProcess.swift alone, every suite has a time limit,
/// waiting suites run on threads of their own (`.ownThread`), synchronous tests off the pool
/// (`.computes` or `.ownThread`), no test sleeps to order events (the only sleeps are the polling helpers of Waiting.swift), and no
/// test returns quietly when a file it needs is missing (it skips visibly with `.enabled(if:)`).
///
/// The checks read the sources through the shared scanner (``SwiftSource``, GifPackTestSupport:
/// comments and string literals blanked out). Each is also run on
/// small sources that break its rule, so a check that cannot fail shows. They read every test
/// target's folder below Tests/ (the test targets and the support targets). `GIFPACK_TEST_SOURCES`
/// points them at another checkout's Tests folder (to audit an older tree).
@Suite("Test hygiene: async process waits, time limits, waits on own threads, synchronous tests off the pool, no sleeps for ordering, no quiet skips", .timeLimit(.minutes(2)))
struct TestHygieneTests {
    /// The Tests folder.
    static var directory: String {
        ProcessInfo.processInfo.environment["GIFPACK_TEST_SOURCES"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// The Swift files of every folder below ``directory``, named by file name (unique across them).
    static func sources() throws -> [SwiftSource] {
        let files = FileManager.default
        var sources: [SwiftSource] = []
        for folder in try files.contentsOfDirectory(atPath: directory).sorted() {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: "\(directory)/\(folder)", isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            let names = try files.contentsOfDirectory(atPath: "\(directory)/\(folder)").filter { $0.hasSuffix(".swift") }.sorted()
            sources += try names.map { SwiftSource(name: $0, text: try String(contentsOfFile: "\(directory)/\(folder)/\($0)", encoding: .utf8)) }
        }
        return sources
    }

    /// ``sources()`` read and blanked once for all the checks, on a thread of its own (seconds of
    /// work in a debug build, too long to hold one of the cooperative pool's two threads).
    static let scan = Task { () async throws -> [SwiftSource] in
        try await onAThreadOfItsOwn("gifpack.test-hygiene-scan") { () throws -> [SwiftSource] in try Self.sources() }
    }

    /// ``scan``'s sources, checked here.
    static func scanned() async throws -> [SwiftSource] {
        let sources = try await scan.value
        #expect(sources.count > 50, "test sources found in \(directory)")
        #expect(Set(sources.map { $0.name }).count == sources.count, "two test sources with one name in \(directory)")
        return sources
    }

    @Test func noSynchronousFunctionStartsAProcess() async throws {
        let problems = HygieneRules.synchronousProcessStarters(try await Self.scanned())
        #expect(problems.isEmpty, "make these async and wait with `await child.exitStatus()`:\n\(problems.joined(separator: "\n"))")
    }

    @Test func processAndWaitPrimitivesLiveInChildProcessAlone() async throws {
        let problems = HygieneRules.primitivesOutsideChildProcess(try await Self.scanned())
        #expect(problems.isEmpty, "start processes with ChildProcess, wait with exitStatus():\n\(problems.joined(separator: "\n"))")
    }

    @Test func everySuiteAndEveryTestHasATimeLimit() async throws {
        let problems = HygieneRules.testsWithoutTimeLimit(try await Self.scanned())
        #expect(problems.isEmpty, "add .timeLimit(.minutes(N)) to the suite:\n\(problems.joined(separator: "\n"))")
    }

    /// The whole suite runs in one process whose cooperative pool has two threads, which tests
    /// that compute for a minute can hold: a test that waits for an event with a bound must not
    /// depend on getting one (``OwnThreadTrait``).
    @Test func everyWaitingSuiteRunsItsTestsOnThreadsOfTheirOwn() async throws {
        let problems = HygieneRules.waitingTestsWithoutOwnThread(try await Self.scanned())
        #expect(problems.isEmpty, "add .ownThread to the suite:\n\(problems.joined(separator: "\n"))")
    }

    /// A synchronous test holds the thread it runs on to its end: on the pool, two of them stall
    /// every other test's awaits (``ComputesTrait``).
    @Test func everySynchronousTestRunsOffThePool() async throws {
        let problems = HygieneRules.synchronousTestsOnThePool(try await Self.scanned())
        #expect(problems.isEmpty, "add .computes to the suite or the test:\n\(problems.joined(separator: "\n"))")
    }

    @Test func ownThreadSuitesStartTheirTasksOnTheirThread() async throws {
        let problems = HygieneRules.plainTasksBesideOwnThreads(try await Self.scanned())
        #expect(problems.isEmpty, "use testTask { … } in a suite with .ownThread:\n\(problems.joined(separator: "\n"))")
    }

    @Test func noSleepOutsideThePollingHelpers() async throws {
        let problems = HygieneRules.sleeps(try await Self.scanned())
        #expect(problems.isEmpty, "poll for the event (waitUntil, holdsThroughout) instead:\n\(problems.joined(separator: "\n"))")
    }

    @Test func noTestReturnsQuietlyWhenAFileIsMissing() async throws {
        let problems = HygieneRules.quietSkips(try await Self.scanned())
        #expect(problems.isEmpty, "skip visibly with @Test(.enabled(if: …)) instead:\n\(problems.joined(separator: "\n"))")
    }

    /// Names and comments say what the code does or what a test holds, not which tracker issue
    /// asked for it (the tracker is not in the repository). Tests/ and Sources/ are read as text,
    /// comments included.
    @Test func noSourceNamesAnIssueNumber() async throws {
        let root = URL(fileURLWithPath: Self.directory).deletingLastPathComponent().path
        let problems = try await onAThreadOfItsOwn("gifpack.test-issue-numbers") { () throws -> [String] in
            try ["Tests", "Sources"].flatMap { try HygieneRules.issueNumbers(under: "\(root)/\($0)") }
        }
        #expect(problems.isEmpty, "say what is done or tested instead of the issue's number:\n\(problems.joined(separator: "\n"))")
    }

    // MARK: The checks can fail

    @Test(.computes) func issueNumbersAreFound() {
        // Spelled in pieces, so that this file does not break the rule it checks.
        let (issue, issues) = ("Issue" + " 33", "issues" + " 7")
        let text = "/// \(issue), bug 4: a download\nlet a = 1 // see \(issues) and 9\n// an issue of ordering, #12\n"
        #expect(
            HygieneRules.issueNumbers(in: "Bad.swift", text: text) == [
                "Bad.swift:1: /// \(issue), bug 4: a download",
                "Bad.swift:2: let a = 1 // see \(issues) and 9"
            ])
    }

    @Test(.computes) func quietReturnsWhenAFileIsMissingAreFound() {
        let bad = SwiftSource(
            name: "Bad.swift",
            text: """
                func a() throws { guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/x") else { return } }
                func b() { guard FileManager.default.fileExists(atPath: "/x") else { return } }
                func c() { if !FileManager.default.fileExists(atPath: "/x") { return } }
                func d() -> [String] { guard let t = try? String(contentsOfFile: "/x", encoding: .utf8) else { return [] }; return [t] }
                func e() { guard FileManager.default.fileExists(atPath: "/x") else { Issue.record("missing"); return } }
                """)
        let problems = HygieneRules.quietSkips([bad])
        #expect(problems.count == 3, "\(problems)")
    }

    @Test(.computes) func aSynchronousTestThatRunsAProcessIsFound() {
        let source = SwiftSource(
            name: "Bad.swift",
            text: """
                @Suite(.timeLimit(.minutes(1))) struct Bad {
                    static func helper(_ path: String) throws -> Int32 {
                        let child = try ChildProcess("/bin/true", [path]) // "ChildProcess(" in a comment is not a call
                        return 0
                    }
                    static func wrapper() throws -> Int32 { try helper("x") }
                    static func fine() async throws -> Int32 { await try ChildProcess("/bin/true", []).exitStatus() }
                    @Test func syncTest() throws { _ = try Self.wrapper() }
                    @Test func asyncTest() async throws { _ = try await Self.fine() }
                    @Test func mentionsItInAString() { _ = "ChildProcess(" }
                }
                """)
        let problems = HygieneRules.synchronousProcessStarters([source])
        #expect(problems.count == 3, "\(problems)")
        #expect(
            problems.contains { $0.contains("helper") } && problems.contains { $0.contains("wrapper") }
                && problems.contains { $0.contains("syncTest") }, "\(problems)")
    }

    @Test(.computes) func primitivesOutsideChildProcessAreFound() {
        let bad = SwiftSource(
            name: "Bad.swift",
            text: """
                func a() { let p = Process(); try? p.run(); p.waitUntilExit() }
                func b() { var s: Int32 = 0; waitpid(1, &s, 0) }
                func c() { _ = "waitpid(" }
                """)
        let home = SwiftSource(name: "ChildProcess.swift", text: "func d() { var s: Int32 = 0; waitpid(1, &s, 0) }")
        let problems = HygieneRules.primitivesOutsideChildProcess([bad, home])
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.allSatisfy { $0.hasPrefix("Bad.swift:") }, "\(problems)")
    }

    @Test(.computes) func waitingSuitesWithoutOwnThreadsAreFound() {
        let waits = SwiftSource(
            name: "Waits.swift",
            text: """
                @Suite("pool", .timeLimit(.minutes(2))) struct A { @Test func a() async throws { try await waitUntil { true } } }
                @Suite("own", .ownThread, .timeLimit(.minutes(2))) struct B {
                    @Test func b() async throws { _ = try await holdsThroughout(.seconds(1)) { true } }
                    struct Nested { @Test func nested() {} }
                }
                extension B { @Test func inExtension() {} }
                extension A { @Test func alsoA() {} }
                @Test(.ownThread) func free() {}
                @Test func freeWithout() {}
                """)
        let computes = SwiftSource(
            name: "Computes.swift",
            text: """
                @Suite("pool", .timeLimit(.minutes(2))) struct C { @Test func c() { _ = "waitUntil {" } }
                func waitUntil(_ condition: () -> Bool) {}
                """)
        let tasks = SwiftSource(
            name: "Tasks.swift",
            text: """
                @Suite(.ownThread, .timeLimit(.minutes(1))) struct D {
                    @Test func d() async {
                        let a = Task { 1 }
                        let b = Task(priority: .high) { 2 }
                        let c = testTask { 3 }
                        await withTaskGroup(of: Int.self) { group in group.addTask { 4 } }
                        _ = (await a.value, await b.value, await c.value)
                    }
                }
                """)
        #expect(HygieneRules.plainTasksBesideOwnThreads([tasks, computes]) == ["Tasks.swift:3", "Tasks.swift:4"])
        let problems = HygieneRules.waitingTestsWithoutOwnThread([waits, computes])
        #expect(problems.count == 3, "\(problems)")
        for name in ["a", "alsoA", "freeWithout"] {
            #expect(problems.contains { $0.hasPrefix("Waits.swift:") && $0.hasSuffix(" " + name) }, "\(name) in \(problems)")
        }
    }

    @Test(.computes) func synchronousTestsOnThePoolAreFound() {
        let source = SwiftSource(
            name: "Sync.swift",
            text: """
                @Suite("pool", .timeLimit(.minutes(2))) struct A {
                    @Test func a() throws {}
                    @Test func b() async throws {}
                    @Test(.computes) func c() {}
                    @Test("named", .computes, arguments: [1]) func d(value: Int) {}
                }
                @Suite("computing", .computes, .timeLimit(.minutes(2))) struct B {
                    @Test func e() {}
                    struct Nested { @Test func f() {} }
                }
                extension B { @Test func g() {} }
                @Suite(.ownThread, .timeLimit(.minutes(2))) struct C { @Test func h() {} }
                extension A { @Test func i() {} }
                @Test func j() {}
                @Test(.computes) func k() {}
                """)
        let problems = HygieneRules.synchronousTestsOnThePool([source])
        #expect(problems.count == 3, "\(problems)")
        for name in ["a", "i", "j"] {
            #expect(problems.contains { $0.hasPrefix("Sync.swift:") && $0.hasSuffix(" " + name) }, "\(name) in \(problems)")
        }
    }

    @Test(.computes) func suitesWithoutATimeLimitAreFound() {
        let source = SwiftSource(
            name: "Bad.swift",
            text: """
                @Suite("no limit") struct A { @Test func a() {} }
                @Suite("limited", .serialized, .timeLimit(.minutes(2))) struct B {
                    @Test func b() {}
                    struct Nested { @Test func nested() {} }
                }
                extension B { @Test func inExtension() {} }
                struct C { @Test(arguments: [1, 2]) func c(value: Int) {} }
                extension A { @Test func alsoA() {} }
                @Test(.timeLimit(.minutes(1))) func free() {}
                @Test func freeWithout() {}
                """)
        let problems = HygieneRules.testsWithoutTimeLimit([source])
        #expect(problems.count == 4, "\(problems)")
        for name in ["a", "c", "alsoA", "freeWithout"] {
            #expect(problems.contains { $0.hasSuffix(" " + name) }, "\(name) in \(problems)")
        }
    }

    @Test(.computes) func sleepsOutsideThePollingHelpersAreFound() {
        let bad = SwiftSource(
            name: "Bad.swift",
            text: """
                func a() async throws { try await Task.sleep(for: .milliseconds(100)) }
                func b() { usleep(10_000); sleep(1); Thread.sleep(forTimeInterval: 0.1) }
                func c() { _ = "usleep(1)" } // sleep(1)
                func asleep(_ x: Int) {}
                """)
        let helper = SwiftSource(name: "Waiting.swift", text: "func w() async throws { try await Task.sleep(for: .milliseconds(10)) }")
        let problems = HygieneRules.sleeps([bad, helper])
        #expect(problems.count == 4, "\(problems)")
    }
}

/// A `func` or `init` declaration with a body.
struct SwiftFunction {
    let source: SwiftSource
    let name: String
    let isAsync: Bool
    let isTest: Bool
    /// The offset of `func` / `init`, and the body's braces.
    let start: Int
    let body: Range<Int>

    var location: String { "\(source.name):\(source.line(at: start)) \(name)" }
    var bodyText: String { source.text(body) }
}

enum HygieneRules {
    /// The lines of `text` that name a tracker issue by number: the word, singular or plural and in
    /// any case, then a number, with or without `#`.
    static func issueNumbers(in name: String, text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"\bissues? #?[0-9]"#, options: [.caseInsensitive])
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            let line = String(line)
            guard pattern.firstMatch(in: line, range: NSRange(location: 0, length: line.utf16.count)) != nil else { return nil }
            return "\(name):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))"
        }
    }

    /// ``issueNumbers(in:text:)`` for every Swift file below `folder`, named by path from it.
    static func issueNumbers(under folder: String) throws -> [String] {
        let names = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }.sorted()
        guard !names.isEmpty else { throw PublishTestFailure("no Swift files under \(folder)") }
        return try names.flatMap { try issueNumbers(in: $0, text: String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8)) }
    }

    /// Every function and initializer with a body, in every source.
    static func functions(_ sources: [SwiftSource]) -> [SwiftFunction] {
        sources.flatMap { source in
            let text = String(decoding: source.code, as: UTF8.self)
            let pattern = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_.])(func\s+[A-Za-z_][A-Za-z0-9_]*|init[?!]?)\s*(<[^>{]*>)?\s*\("#)
            return pattern.matches(in: text, range: NSRange(location: 0, length: text.utf16.count)).compactMap { match in
                let utf8 = text.utf8
                let start = utf8.distance(from: utf8.startIndex, to: String.Index(utf16Offset: match.range.location, in: text))
                let end = utf8.distance(from: utf8.startIndex, to: String.Index(utf16Offset: NSMaxRange(match.range), in: text))
                return function(in: source, start: start, parameters: end - 1, header: String(decoding: source.code[start..<end], as: UTF8.self))
            }
        }
    }

    private static func function(in source: SwiftSource, start: Int, parameters: Int, header: String) -> SwiftFunction? {
        let code = source.code
        // The parameter clause, then the effects and result up to the body's `{`.
        var position = parameters, depth = 0
        repeat {
            if code[position] == UInt8(ascii: "(") { depth += 1 }
            if code[position] == UInt8(ascii: ")") { depth -= 1 }
            position += 1
        } while depth > 0 && position < code.count
        let effectsStart = position
        // (The test sources declare no protocols: every declaration has a body.)
        while position < code.count, code[position] != UInt8(ascii: "{") { position += 1 }
        guard position < code.count else { return nil }
        let effects = source.text(effectsStart..<position)
        let bodyStart = position
        depth = 0
        repeat {
            if code[position] == UInt8(ascii: "{") { depth += 1 }
            if code[position] == UInt8(ascii: "}") { depth -= 1 }
            position += 1
        } while depth > 0 && position < code.count
        let name =
            header.hasPrefix("func")
            ? String(header.dropFirst(4).trimmingCharacters(in: .whitespaces).prefix { $0.isLetter || $0.isNumber || $0 == "_" })
            : "init"
        return SwiftFunction(
            source: source, name: name, isAsync: effects.range(of: #"\basync\b"#, options: .regularExpression) != nil,
            isTest: attributes(before: start, in: source).contains("@Test"), start: start, body: bodyStart..<position)
    }

    /// The attributes and modifiers written before the declaration at `start`: back to the end of
    /// the previous declaration or statement (`}`, `{` or `;` outside parentheses).
    static func attributes(before start: Int, in source: SwiftSource) -> String {
        var position = start, depth = 0
        while position > 0 {
            let byte = source.code[position - 1]
            if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]") { depth += 1 }
            if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "[") { depth -= 1 }
            if depth == 0, [UInt8(ascii: "}"), UInt8(ascii: "{"), UInt8(ascii: ";")].contains(byte) { break }
            position -= 1
        }
        return source.text(position..<start)
    }

    /// Synchronous functions that create a ``ChildProcess``, directly or through other synchronous
    /// functions of the test sources, and synchronous tests that call any of them. Calls are matched
    /// by name, so a function sharing a name with a starter counts too: a false alarm, never a miss.
    static func synchronousProcessStarters(_ sources: [SwiftSource]) -> [String] {
        let all = functions(sources)
        var starters: Set<String> = ["ChildProcess"]
        var found: [String: SwiftFunction] = [:]
        var changed = true
        while changed {
            changed = false
            for function in all where !function.isAsync && found[function.location] == nil {
                if calls(function.bodyText, anyOf: starters) {
                    found[function.location] = function
                    if function.name != "init" && !function.isTest { starters.insert(function.name) }
                    changed = true
                }
            }
        }
        return found.keys.sorted()
    }

    private static func calls(_ body: String, anyOf names: Set<String>) -> Bool {
        names.contains { body.range(of: #"(?<![A-Za-z0-9_])"# + $0 + #"\s*\("#, options: .regularExpression) != nil }
    }

    /// Process starts and waits other than through ChildProcess.
    static func primitivesOutsideChildProcess(_ sources: [SwiftSource]) -> [String] {
        let primitive = #"(?<![A-Za-z0-9_])(Process\s*\(|posix_spawnp?\s*\(|waitpid\s*\(|waitid\s*\(|system\s*\(|popen\s*\(|fork\s*\()|\.waitUntilExit\s*\("#
        return sources.filter { $0.name != "ChildProcess.swift" }.flatMap { matches(of: primitive, in: $0) }
    }

    /// Sleeps outside Waiting.swift.
    static func sleeps(_ sources: [SwiftSource]) -> [String] {
        let sleep = #"(?<![A-Za-z0-9_])(u|nano)?sleep\s*\(|\.sleep\s*\(|Thread\.sleep"#
        return sources.filter { $0.name != "Waiting.swift" }.flatMap { matches(of: sleep, in: $0) }
    }

    /// A `guard … else { return }` or `if !… { return }` on a file's presence or contents: a test
    /// that passes without running when the file is missing.
    static func quietSkips(_ sources: [SwiftSource]) -> [String] {
        let file = #"(fileExists|contentsOfDirectory|contentsOfFile|contentsOf\s*:)"#
        let quiet = #"guard[^{}\n]*"# + file + #"[^{}\n]*else\s*\{\s*return\s*\}|if\s*![^{}\n]*"# + file + #"[^{}\n]*\{\s*return\s*\}"#
        return sources.flatMap { matches(of: quiet, in: $0) }
    }

    private static func matches(of pattern: String, in source: SwiftSource) -> [String] {
        let text = String(decoding: source.code, as: UTF8.self)
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(location: 0, length: text.utf16.count)).map { match in
            let offset = text.utf8.distance(from: text.utf8.startIndex, to: String.Index(utf16Offset: match.range.location, in: text))
            return "\(source.name):\(source.line(at: offset)): \((text as NSString).substring(with: match.range))"
        }
    }

    /// Tests whose suite (or an enclosing one, or the type an extension extends) has no
    /// `.timeLimit`, and free tests without one of their own.
    static func testsWithoutTimeLimit(_ sources: [SwiftSource]) -> [String] {
        testsWithout(".timeLimit(", sources)
    }

    /// Tests in a file that waits for events with a bound (`waitUntil`, `holdsThroughout`) whose
    /// suite (or an enclosing one, or the type an extension extends) does not run them on threads of
    /// their own (`.ownThread`), and such free tests without the trait.
    static func waitingTestsWithoutOwnThread(_ sources: [SwiftSource]) -> [String] {
        let call = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_])(?<!func )(waitUntil|holdsThroughout)\s*[({]"#)
        let waiting = Set(
            sources.filter { source in
                let text = String(decoding: source.code, as: UTF8.self)
                return call.firstMatch(in: text, range: NSRange(location: 0, length: text.utf16.count)) != nil
            }.map(\.name))
        return testsWithout(".ownThread", sources, inFiles: waiting)
    }

    /// `Task { … }` in a file whose suites run on threads of their own: an unstructured task does
    /// not inherit the test's executor and would start on the cooperative pool (`testTask { … }`).
    static func plainTasksBesideOwnThreads(_ sources: [SwiftSource]) -> [String] {
        let task = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_.])Task\s*(\(priority:[^)]*\))?\s*\{"#)
        return sources.filter { String(decoding: $0.code, as: UTF8.self).contains(".ownThread") }.flatMap { source in
            let text = String(decoding: source.code, as: UTF8.self)
            return task.matches(in: text, range: NSRange(location: 0, length: text.utf16.count)).map { match in
                let offset = text.utf8.distance(from: text.utf8.startIndex, to: String.Index(utf16Offset: match.range.location, in: text))
                return "\(source.name):\(source.line(at: offset))"
            }
        }
    }

    /// Tests without `trait` (the text that starts it) on their suite, an enclosing suite, the suite
    /// an extension extends, or their own `@Test`; only those in `inFiles` when given.
    static func testsWithout(_ trait: String, _ sources: [SwiftSource], inFiles: Set<String>? = nil) -> [String] {
        testsWithout(anyOf: [trait], sources, inFiles: inFiles)
    }

    /// Synchronous tests that would run on the cooperative pool: without `.computes` or
    /// `.ownThread` on their suite, an enclosing suite, the suite an extension extends, or their own
    /// `@Test`.
    static func synchronousTestsOnThePool(_ sources: [SwiftSource]) -> [String] {
        testsWithout(anyOf: [".computes", ".ownThread"], sources, only: { !$0.isAsync })
    }

    /// Tests (those `only` accepts) without any of `traits` on their suite, an enclosing suite, the
    /// suite an extension extends, or their own `@Test`; only those in `inFiles` when given.
    static func testsWithout(
        anyOf traits: [String], _ sources: [SwiftSource], inFiles: Set<String>? = nil,
        only: (SwiftFunction) -> Bool = { _ in true }
    ) -> [String] {
        // Types declared with the trait, by name.
        var limited: Set<String> = []
        var enclosing: [(source: SwiftSource, range: Range<Int>, name: String, isExtension: Bool, limited: Bool)] = []
        let declaration = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9_])(struct|class|enum|actor|extension)\s+([A-Za-z_][A-Za-z0-9_.]*)[^{]*\{"#)
        for source in sources {
            let text = String(decoding: source.code, as: UTF8.self)
            for match in declaration.matches(in: text, range: NSRange(location: 0, length: text.utf16.count)) {
                let start = text.utf8.distance(from: text.utf8.startIndex, to: String.Index(utf16Offset: match.range.location, in: text))
                var position = text.utf8.distance(from: text.utf8.startIndex, to: String.Index(utf16Offset: NSMaxRange(match.range), in: text)) - 1
                var depth = 0
                let bodyStart = position
                repeat {
                    if source.code[position] == UInt8(ascii: "{") { depth += 1 }
                    if source.code[position] == UInt8(ascii: "}") { depth -= 1 }
                    position += 1
                } while depth > 0 && position < source.code.count
                let name = (text as NSString).substring(with: match.range(at: 2))
                let isExtension = (text as NSString).substring(with: match.range(at: 1)) == "extension"
                let attributes = attributes(before: start, in: source)
                let hasLimit = attributes.contains("@Suite") && traits.contains { attributes.contains($0) }
                if hasLimit { limited.insert(name) }
                enclosing.append((source, bodyStart..<position, name, isExtension, hasLimit))
            }
        }
        return functions(sources).filter { test in test.isTest && only(test) && (inFiles?.contains(test.source.name) ?? true) }.compactMap { test in
            let own = attributes(before: test.start, in: test.source)
            guard !traits.contains(where: { own.contains($0) }) else { return nil }
            let containers = enclosing.filter { $0.source.name == test.source.name && $0.range.contains(test.start) }
            let covered = containers.contains { $0.limited || ($0.isExtension && limited.contains($0.name)) }
            return covered ? nil : test.location
        }
    }
}

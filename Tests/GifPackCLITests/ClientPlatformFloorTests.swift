import Foundation
import GifPackSystem
import Testing
@testable import GifPackTestSupport

/// The client closure (what product `GifPackClient` links) needs nothing newer
/// than the platforms Package.swift names: iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1.
///
/// What needs a newer runtime, and how each is kept out:
/// - Typed throws: a function that throws a typed error, and a closure of a typed-throws function
///   type passed or captured (BlockingWork's `() throws(E) -> T`), compile to the same calls on
///   every release. What needs the Swift 6.0 runtime (iOS 18, macOS 15) is the *metadata* of a
///   function type with a thrown error: the compiler diagnoses it on Apple targets ("runtime
///   support for typed throws function types is only available in macOS 15.0.0 or newer") where
///   it sees it (a cast, `as Any`, `.self`), and in generic code it becomes a call of
///   `swift_getExtendedFunctionTypeMetadata`, a weak symbol that is null on older releases. The
///   compiled closure is checked: no reference to that entry point, no metadata demand
///   (`…YKc…MD`/`Ma`) or mangled type string of a typed-throws function type.
/// - The runtime's other late entry points: parameterized existentials (`any P<T>`,
///   `swift_getExtendedExistentialTypeMetadata`, iOS 16) and parameter packs
///   (`swift_allocateMetadataPack`, iOS 17).
/// - Library types and functions: `Duration`, the clocks and `Task.sleep(for:)` (iOS 16),
///   Synchronization's `Mutex` and `Atomic` (iOS 18), `withDiscardingTaskGroup` (iOS 17),
///   `Regex` (iOS 16), `InlineArray`/`Span` (iOS 26), Foundation's `URL(filePath:)`,
///   `appending(path:)`, `path(percentEncoded:)`, `URL.temporaryDirectory` (iOS 16): both in the
///   sources (names) and in the compiled objects (their symbols).
///
/// Apple's compilers check the rest (`@available` of every Foundation and SDK API) in the
/// workflow `.github/workflows/apple.yml`; this machine cannot compile for Apple platforms.
@Suite("Client portability: platform floor", .timeLimit(.minutes(5)))
struct ClientPlatformFloorTests {
    @Test("no source in the GifPackClient closure names an API newer than iOS 15 / macOS 12")
    func closureSourcesStayAtTheFloor() async throws {
        let sources = try await PackageDescription.describe().closureSources(ofProduct: "GifPackClient")
        let problems = sources.flatMap { FloorSourceScan.problems(in: $0.text, file: $0.path) }
        #expect(sources.count > 50, "only \(sources.count) files scanned: the closure was not read")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("no compiled object of the GifPackClient closure needs a Swift runtime newer than iOS 15 / macOS 12")
    func closureObjectsStayAtTheFloor() async throws {
        let package = try await PackageDescription.describe()
        let closure = try package.closure(ofProduct: "GifPackClient")
        let build = try FloorObjectScan.buildDirectory()
        var problems: [String] = []
        var scanned = 0
        for target in closure.targets where target.moduleType == "SwiftTarget" {
            let objects = try FileManager.default.contentsOfDirectory(atPath: "\(build)/\(target.name).build")
                .filter { $0.hasSuffix(".o") }.sorted()
            #expect(!objects.isEmpty, "no object files of \(target.name) in \(build)")
            for object in objects {
                problems += try await FloorObjectScan.problems(
                    inObject: "\(build)/\(target.name).build/\(object)",
                    name: "\(target.name)/\(object)")
                scanned += 1
            }
        }
        #expect(scanned > 50, "only \(scanned) objects scanned: the closure was not read")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // The checks themselves, on made-up inputs that break each rule.

    @Test("the source scan names file, line and API of each post-floor use, and skips comments and strings", .computes)
    func sourceScanCatchesViolations() {
        let text = #"""
            import Synchronization
            let lock = Mutex<Int>(0)
            let counter = Atomic<Int>(0)
            var limit: Duration = .seconds(30)
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(1))
            // Duration and Mutex in a comment are fine
            let text = "a Duration in a string is fine"
            let url = URL(filePath: "/tmp").appending(path: "x")
            await withDiscardingTaskGroup { group in }
            let fine = TimeSpan.seconds(30); try await Task.sleep(nanoseconds: 1_000)
            let casted = body as? () throws(PackClientError) -> Void
            typealias Job<E: Error> = () throws(E) -> Void
            let jobs: [() throws(Errno) -> Int] = []
            """#
        let found = FloorSourceScan.problems(in: text, file: "F.swift")
        #expect(
            found == [
                "F.swift:1: Synchronization (Mutex, Atomic: iOS 18 / macOS 15; lock with GifPackSystem's Locked or an actor)",
                "F.swift:2: Mutex (Mutex, Atomic: iOS 18 / macOS 15; lock with GifPackSystem's Locked or an actor)",
                "F.swift:3: Atomic< (Mutex, Atomic: iOS 18 / macOS 15; lock with GifPackSystem's Locked or an actor)",
                "F.swift:4: Duration (Duration and the clocks: iOS 16 / macOS 13; use TimeSpan)",
                "F.swift:5: ContinuousClock (Duration and the clocks: iOS 16 / macOS 13; use TimeSpan)",
                "F.swift:6: sleep(for: (Duration and the clocks: iOS 16 / macOS 13; use TimeSpan)",
                "F.swift:9: URL(filePath:, appending(path: (Foundation's iOS 16 URL API: use URL(fileURLWithPath:), appendingPathComponent)",
                "F.swift:10: withDiscardingTaskGroup (iOS 17 / macOS 14: use withTaskGroup)",
                "F.swift:12: a typed-throws function type in a cast, a generic argument, an array or a typealias (its metadata needs iOS 18 / macOS 15)",
                "F.swift:13: a typed-throws function type in a cast, a generic argument, an array or a typealias (its metadata needs iOS 18 / macOS 15)",
                "F.swift:14: a typed-throws function type in a cast, a generic argument, an array or a typealias (its metadata needs iOS 18 / macOS 15)"
            ])
        // BlockingWork's pattern: a typed-throws closure parameter, passed and called, no metadata.
        let allowed = """
            package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
                let result: Result<T, E> = await withCheckedContinuation { c in enqueue { c.resume(returning: Result { () throws(E) -> T in try body() }) } }
                return try result.get()
            }
            """
        #expect(FloorSourceScan.problems(in: allowed, file: "A.swift").isEmpty)
    }

    @Test("the object scan finds typed-throws function metadata, Duration and Mutex in compiled code, and passes BlockingWork's pattern")
    func objectScanCatchesViolations() async throws {
        let directory = try TemporaryDirectory()
        let bad = try directory.write(
            """
            import Synchronization
            public struct Boom: Error {}
            public func erased(_ body: @escaping () throws(Boom) -> Void) -> Any { body }
            public func generic<E: Error>(_ body: @escaping () throws(E) -> Void) -> Int { [body].count }
            public func limit() -> Duration { .seconds(30) }
            public func guarded() -> Int { Mutex(1).withLock { $0 } }
            """, to: "Bad.swift")
        let good = try directory.write(
            """
            public func run<T, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
                let result: Result<T, E> = await withCheckedContinuation { c in later { c.resume(returning: Result { () throws(E) -> T in try body() }) } }
                return try result.get()
            }
            func later(_ job: @escaping @Sendable () -> Void) { job() }
            """, to: "Good.swift")
        let swiftc = try FloorObjectScan.swiftc()
        for (source, object) in [(bad, directory.file("Bad.o")), (good, directory.file("Good.o"))] {
            let compiled = try await run(swiftc, ["-parse-as-library", "-module-name", "Probe", "-c", source, "-o", object])
            #expect(compiled.status == 0, "\(compiled.error)")
        }
        let found = try await FloorObjectScan.problems(inObject: directory.file("Bad.o"), name: "Bad.o").joined(separator: "\n")
        #expect(found.contains("swift_getExtendedFunctionTypeMetadata"), "\(found)")
        #expect(found.contains("metadata of a typed-throws function type"), "\(found)")
        #expect(found.contains("Swift.Duration"), "\(found)")
        #expect(found.contains("Synchronization (Mutex, Atomic)"), "\(found)")
        #expect(try await FloorObjectScan.problems(inObject: directory.file("Good.o"), name: "Good.o") == [])
    }
}

/// Post-floor API names in Swift source text outside comments and string literals.
enum FloorSourceScan {
    struct Rule {
        var names: [String]
        var reason: String
    }

    static let rules: [Rule] = [
        Rule(names: ["Synchronization", "Mutex", "Atomic<"], reason: "Mutex, Atomic: iOS 18 / macOS 15; lock with GifPackSystem's Locked or an actor"),
        Rule(
            names: ["Duration", "ContinuousClock", "SuspendingClock", "InstantProtocol", "sleep(for:", "sleep(until:"],
            reason: "Duration and the clocks: iOS 16 / macOS 13; use TimeSpan"),
        Rule(
            names: [
                "URL(filePath:", "appending(path:", "appending(component:", "path(percentEncoded:", "URL.temporaryDirectory",
                "URL.homeDirectory", "URL.cachesDirectory"
            ],
            reason: "Foundation's iOS 16 URL API: use URL(fileURLWithPath:), appendingPathComponent"),
        Rule(names: ["withDiscardingTaskGroup", "withThrowingDiscardingTaskGroup"], reason: "iOS 17 / macOS 14: use withTaskGroup"),
        Rule(names: ["Regex<", "Regex(", "#/"], reason: "Regex: iOS 16 / macOS 13"),
        Rule(names: ["InlineArray", "Span<", "RawSpan", "Task.immediate", "Task(name:"], reason: "iOS 26 / macOS 26")
    ]

    /// A function type with a typed thrown error in a cast, an array, a generic argument or a
    /// typealias: each needs the type's metadata (iOS 18 / macOS 15).
    static let typedFunctionMetadata = try! NSRegularExpression(
        pattern:
            #"(\bas[?!]?\s+|\bis\s+|\[\s*|<\s*|typealias\s+\w+(<[^>]*>)?\s*=\s*)\(*\s*\([^()]*\)\s*(async\s+)?throws\(\s*(?!any\s+Error\s*\)|Never\s*\))"#)

    static func problems(in text: String, file: String) -> [String] {
        var problems: [String] = []
        for (index, line) in SwiftSource(name: file, text: text).lines.enumerated() {
            let isDeclaration = line.trimmingCharacters(in: .whitespaces).hasPrefix("import ")
            for rule in rules {
                let found = rule.names.filter { name in
                    isDeclaration ? line.contains(" \(name)") : contains(line, name)
                }
                if !found.isEmpty { problems.append("\(file):\(index + 1): \(found.joined(separator: ", ")) (\(rule.reason))") }
            }
            let range = NSRange(line.startIndex..., in: line)
            if typedFunctionMetadata.firstMatch(in: line, range: range) != nil {
                problems.append("\(file):\(index + 1): a typed-throws function type in a cast, a generic argument, an array or a typealias (its metadata needs iOS 18 / macOS 15)")
            }
        }
        return problems
    }

    /// `name` in `line`, not as the tail of a longer identifier (nor, for a name that is an
    /// identifier, its head).
    private static func contains(_ line: String, _ name: String) -> Bool {
        let isIdentifier: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" }
        var start = line.startIndex
        while let found = line.range(of: name, range: start..<line.endIndex) {
            let before = found.lowerBound == line.startIndex ? nil : line[line.index(before: found.lowerBound)]
            let after = found.upperBound == line.endIndex ? nil : line[found.upperBound]
            let endsInIdentifier = name.last.map(isIdentifier) == true
            if before.map(isIdentifier) != true, !endsInIdentifier || after.map(isIdentifier) != true { return true }
            start = found.upperBound
        }
        return false
    }
}

/// The symbols of a compiled object that need a Swift runtime or library newer than the floor.
enum FloorObjectScan {
    /// Runtime entry points, with the release that brought them.
    static let runtimeEntryPoints: [String: String] = [
        "swift_getExtendedFunctionTypeMetadata": "typed-throws or isolated(any) function type metadata, iOS 18 / macOS 15",
        "swift_getExtendedExistentialTypeMetadata": "parameterized existential metadata, iOS 16 / macOS 13",
        "swift_getExtendedExistentialTypeMetadata_unique": "parameterized existential metadata, iOS 16 / macOS 13",
        "swift_allocateMetadataPack": "parameter pack metadata, iOS 17 / macOS 14",
        "swift_allocateWitnessTablePack": "parameter pack witness tables, iOS 17 / macOS 14"
    ]
    /// Library declarations by their mangled prefix (Swift's `$s` mangling), with their floor.
    static let librarySymbols: [(mangled: String, name: String, floor: String)] = [
        ("s8DurationV", "Swift.Duration", "iOS 16 / macOS 13"),
        ("s15ContinuousClockV", "Swift.ContinuousClock", "iOS 16 / macOS 13"),
        ("s15SuspendingClockV", "Swift.SuspendingClock", "iOS 16 / macOS 13"),
        ("s5ClockP", "Swift.Clock", "iOS 16 / macOS 13"),
        ("15Synchronization", "Synchronization (Mutex, Atomic)", "iOS 18 / macOS 15"),
        ("17_StringProcessing5RegexV", "Regex", "iOS 16 / macOS 13"),
        ("s19DiscardingTaskGroupV", "Swift.DiscardingTaskGroup", "iOS 17 / macOS 14"),
        ("s27ThrowingDiscardingTaskGroupV", "Swift.ThrowingDiscardingTaskGroup", "iOS 17 / macOS 14"),
        ("s11InlineArrayV", "Swift.InlineArray", "iOS 26 / macOS 26"),
        ("s4SpanV", "Swift.Span", "iOS 26 / macOS 26"),
        ("s7RawSpanV", "Swift.RawSpan", "iOS 26 / macOS 26")
    ]

    static func problems(inObject path: String, name: String) async throws -> [String] {
        let listed = try await run("/usr/bin/nm", [path])
        guard listed.status == 0 else { throw DescribeError("nm \(path) exited \(listed.status): \(listed.error)") }
        var problems: Set<String> = []
        for line in listed.output.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard let symbol = fields.last.map(String.init) else { continue }
            let isUndefined = fields.count == 2 && fields[0] == "U"
            if let why = runtimeEntryPoints[symbol] { problems.insert("\(name): calls \(symbol) (\(why))") }
            if isUndefined, symbol.hasPrefix("$s") {
                for entry in librarySymbols where symbol.contains(entry.mangled) {
                    problems.insert("\(name): uses \(entry.name) (\(entry.floor))")
                }
            }
            let isMetadataUse = symbol.hasSuffix("MD") || symbol.hasSuffix("Ma") || symbol.hasPrefix("symbolic ")
            if isMetadataUse, symbol.contains("YKc") || symbol.contains("YKX") {
                problems.insert("\(name): needs the metadata of a typed-throws function type (\(symbol); iOS 18 / macOS 15)")
            }
        }
        return problems.sorted()
    }

    /// Where `swift build` put the closure's objects: the directory of the running test bundle.
    static func buildDirectory() throws -> String {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("GifPackClient.build").path) { return directory.path }
            directory = directory.deletingLastPathComponent()
        }
        throw DescribeError("no GifPackClient.build next to the test bundle \(executable.path)")
    }

    /// `swiftc` of the toolchain running the tests.
    static func swiftc() throws -> String {
        let swift = try PackageDescription.swiftExecutable()
        let swiftc = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("swiftc").path
        guard FileManager.default.isExecutableFile(atPath: swiftc) else { throw DescribeError("no swiftc next to \(swift)") }
        return swiftc
    }
}

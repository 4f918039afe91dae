import Foundation
import Testing
@testable import GifPackTestSupport

/// One way to work with files in the builder: `Sources/GifPack` does its file work one way,
/// through GifPackSystem (`FileSystem`, `RegularFile`, `SystemCalls`, `POSIXIO`): no `FileManager`,
/// and no call of the C library (`open(`, `fstat(`, `rename(`, `errno`, `O_…`, …) outside its
/// `Platform.swift`, read by the client's scanner (``CCallScan``). `GIFPACK_BUILDER_SOURCES`
/// points the suite at another checkout's `Sources/GifPack` (to count an older tree).
@Suite("The builder's file work goes one way, through GifPackSystem", .timeLimit(.minutes(5)))
struct BuilderFileWorkTests {
    static var directory: String {
        ProcessInfo.processInfo.environment["GIFPACK_BUILDER_SOURCES"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/Sources/GifPack"
    }

    /// What the scan finds in every Swift file under ``directory`` but `Platform.swift`: the files
    /// read, the C library uses and the `FileManager` uses. Read and scanned on a thread of its own
    /// (the scan of a hundred files is seconds of work in a debug build, too long to hold one of
    /// the cooperative pool's two threads).
    static func scan() async throws -> (files: Int, cCalls: [String], fileManager: [String]) {
        let directory = Self.directory
        return try await onAThreadOfItsOwn("gifpack.test-builder-scan") {
            let paths = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix(".swift") && !$0.hasSuffix("Platform.swift") }.sorted()
            var cCalls: [String] = [], fileManager: [String] = []
            for path in paths {
                let text = try String(contentsOfFile: "\(directory)/\(path)", encoding: .utf8)
                cCalls += CCallScan.problems(in: text, file: path)
                fileManager += SwiftSource(name: path, text: text).lines.enumerated().filter { $0.element.contains("FileManager") }.map { "\(path):\($0.offset + 1)" }
            }
            return (paths.count, cCalls, fileManager)
        }
    }

    @Test func theBuilderCallsTheCLibraryOnlyInItsPlatformFileAndUsesNoFileManager() async throws {
        let found = try await Self.scan()
        #expect(found.files > 80, "only \(found.files) files read in \(Self.directory)")
        #expect(found.cCalls.isEmpty, "\(found.cCalls.count) lines call the C library:\n\(found.cCalls.joined(separator: "\n"))")
        #expect(found.fileManager.isEmpty, "\(found.fileManager.count) uses of FileManager (use FileSystem):\n\(found.fileManager.joined(separator: "\n"))")
    }
}

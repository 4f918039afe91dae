import Foundation
import GifPackClient
import GifPackGIF
import Glibc
import Testing
@testable import GifPackTestSupport
@testable import GifPackDistFixtures
import GifPackFormat
import GifPackIndexReader

/// Hostile inputs against the client side: nested JSON, FIFOs and huge files as the
/// index, an entry hidden in the end-of-archive frame, the generation counter, a `<cache>.d` that is
/// not gifpack's, terminal escapes in ids and names, an index that breaks the format's rules.
@Suite("Client: hostile indexes, packs and caches", .ownThread, .timeLimit(.minutes(5)))
struct ClientHostileInputTests {
    /// The result of a `gifpack` run, or nil output when it had to be killed.
    struct Run {
        var status: Int32?
        var output: [UInt8]
        var error: String
        var text: String { String(decoding: output, as: UTF8.self) + error }
        /// True when the run finished on its own.
        var finished: Bool { status != nil }
    }

    /// Runs the built `gifpack`; a run still going after `limit` seconds (a hang, not slowness: the
    /// commands finish in well under a second) is killed and reported with a nil status.
    static func gifpack(_ arguments: [String], limit: Double = 60) async throws -> Run {
        let workspace = try TemporaryDirectory()
        let outPath = workspace.file("stdout"), errPath = workspace.file("stderr")
        let process = try ChildProcess(productPath("gifpack"), arguments, stdout: .file(outPath), stderr: .file(errPath))
        var status: Int32?
        do {
            try await waitUntil(deadline: .milliseconds(Int(limit * 1000)), every: .milliseconds(20)) { !process.isRunning }
            status = await process.exitStatus()
        } catch is WaitTimedOut {
            process.killAndReap()
        }
        return Run(status: status, output: try fileBytes(outPath), error: String(decoding: try fileBytes(errPath), as: UTF8.self))
    }

    static func gifs() throws -> [[UInt8]] { try ClientHostilePackTests.gifs() }

    /// `[[[…]]]` nested `depth` levels.
    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    // MARK: deeply nested JSON

    @Test func deeplyNestedCatalogJSONIsRefusedWithTheReasonByInstallAndInspect() async throws {
        let workspace = try TemporaryDirectory()
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.firstExerciseData = #"{"attributes":"# + Self.nested(500) + "}"
        let index = try forged.write(to: workspace.file("deep"))
        let cache = workspace.file("cache")
        do {
            _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
            Issue.record("a catalog nested 500 levels deep was installed")
        } catch {
            guard case .rejected(let rejection)? = error as? PackClientError else { Issue.record("expected a rejection, got \(error)"); return }
            #expect(rejection.reason == .catalogMismatch)
            #expect(rejection.detail.contains("nested deeper than 64 levels at byte"), "\(rejection)")
        }
        #expect(!FileManager.default.fileExists(atPath: cache), "the cache was created")

        let inspect = try await Self.gifpack(["inspect", workspace.file("deep/packs/evil-v1.tar.zst")])
        #expect(inspect.status == 1)
        #expect(inspect.error.contains("nested deeper than 64 levels at byte"), "\(inspect.text)")

        let install = try await Self.gifpack(["install", "--index", index, "--cache", cache])
        #expect(install.status == 1)
        #expect(install.error.contains("nested deeper than 64 levels at byte"), "\(install.text)")
    }

    @Test func deeplyNestedIndexJSONIsRefusedWithTheReason() async throws {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: try Self.gifs()).write(to: workspace.file("deep"))
        // An unknown key is ignored by readers, so only the nesting can make this index unreadable.
        var text = String(decoding: try fileBytes(index), as: UTF8.self)
        text.replaceSubrange(text.startIndex..<text.index(after: text.startIndex), with: #"{"extra":"# + Self.nested(500) + ",")
        try Data(text.utf8).write(to: URL(fileURLWithPath: index))

        for arguments in [
            ["install", "--index", index, "--cache", workspace.file("cache")], ["cat", index, "e0"],
            ["diff", index, index], ["verify", workspace.file("deep")]
        ] {
            let run = try await Self.gifpack(arguments)
            #expect(run.status == 1, "\(arguments[0]): \(run.text)")
            #expect(run.text.contains("nested deeper than 64 levels at byte"), "\(arguments[0]): \(run.text)")
        }
    }

    // MARK: the index loader: one cap, regular files only

    @Test func aFIFOAsTheIndexIsRefusedAtOnceByEveryCommand() async throws {
        let workspace = try TemporaryDirectory()
        let fifo = workspace.file("index.json")
        #expect(mkfifo(fifo, 0o644) == 0)
        let runs = [
            ["install", "--index", fifo, "--cache", workspace.file("cache")],
            ["cat", fifo, "0001"],
            ["verify", workspace.path],
            ["verify", fifo],
            ["diff", fifo, fifo],
            ["inspect", fifo]
        ]
        for arguments in runs {
            let run = try await Self.gifpack(arguments)
            #expect(run.finished, "gifpack \(arguments.joined(separator: " ")) hung on a FIFO")
            #expect(run.status != 0, "\(arguments[0]): \(run.text)")
            #expect(run.text.contains("not a regular file"), "\(arguments.joined(separator: " ")): \(run.text)")
        }
        // A directory (and a device) is refused the same way.
        let directory = try await Self.gifpack(["cat", workspace.path, "0001"])
        #expect(directory.status == 2 && directory.text.contains("not a regular file (a directory)"), "\(directory.text)")
        let device = try await Self.gifpack(["install", "--index", "/dev/zero", "--cache", workspace.file("cache")])
        #expect(device.status == 1 && device.text.contains("not a regular file (a character device)"), "\(device.text)")
    }

    @Test func anIndexOverTheCapIsRefusedUnreadByEveryCommand() async throws {
        let workspace = try TemporaryDirectory()
        let index = workspace.file("index.json")
        // Sparse: 1 GiB of nothing on disk. Refused from its size, before any byte is read.
        let fd = open(index, O_WRONLY | O_CREAT, 0o644)
        #expect(fd >= 0)
        #expect(ftruncate(fd, 1 << 30) == 0)
        close(fd)
        for arguments in [
            ["cat", index, "0001"], ["install", "--index", index, "--cache", workspace.file("cache")],
            ["verify", workspace.path], ["diff", index, index]
        ] {
            let run = try await Self.gifpack(arguments)
            #expect(run.status == 1, "\(arguments[0]): \(run.text)")
            #expect(run.text.contains("1073741824 bytes, larger than the 67108864-byte limit"), "\(arguments[0]): \(run.text)")
        }
    }

    // MARK: the end-of-archive frame

    /// The last frame replaced by a 1,024-byte tar entry named like the pack's first GIF.
    static func hiddenEntryForge() throws -> ForgedPack {
        var forged = ForgedPack(gifs: try gifs())
        let payload = Array("GIF89a not really: overwrites the GIF when stock tar extracts the pack\n".utf8)
        let hidden = RawPack.entry(header: RawPack.header(name: forged.entries[0].indexPath, size: payload.count), data: payload)
        #expect(hidden.count == 1024)
        forged.endFrame = RawPack.frame(hidden)
        return forged
    }

    @Test func anEntryHiddenInTheEndOfArchiveFrameIsNotInstalled() async throws {
        // The attacker controls the index too: sizes and hashes match the forged file.
        let forged = try Self.hiddenEntryForge()
        let rejection = try await ClientHostilePackTests.rejection(of: forged)
        #expect(rejection?.reason == .badFrame, "\(String(describing: rejection))")
        #expect(rejection?.detail.contains("end-of-archive frame") == true, "\(String(describing: rejection))")
        // verify lists the same problem (one check list).
        let workspace = try TemporaryDirectory()
        _ = try forged.write(to: workspace.path)
        let report = PackVerifier.verifyDirectory(workspace.path)
        #expect(report.problems.contains { $0.reason == .badFrame && $0.detail.contains("end-of-archive frame") })
    }

    @Test func anEntryHiddenInTheEndOfArchiveFrameOfAnHonestlyIndexedPackIsNotInstalled() async throws {
        // The attacker swaps the pack file only: the honest index's size and hash no longer match.
        let installed = try await ClientHostilePackTests.installedCache()
        let honestIndex = try ForgedPack(gifs: try Self.gifs()).write(to: installed.workspace.file("mirror"))
        let forgedDirectory = installed.workspace.file("forged")
        _ = try Self.hiddenEntryForge().write(to: forgedDirectory)
        let packPath = installed.workspace.file("mirror/packs/evil-v1.tar.zst")
        try FileManager.default.removeItem(atPath: packPath)
        try FileManager.default.copyItem(atPath: "\(forgedDirectory)/packs/evil-v1.tar.zst", toPath: packPath)
        // by-hash is not what is installed, so the install cannot stop at "already installed".
        do {
            _ = try await PackInstaller(cacheDirectory: installed.cache, layout: .byHash).install(from: PackIndexSource(honestIndex))
            Issue.record("the swapped pack was installed")
        } catch {
            guard case .rejected(let rejection)? = error as? PackClientError else { Issue.record("expected a rejection, got \(error)"); return }
            #expect([.packSize, .packChecksum].contains(rejection.reason), "\(rejection)")
        }
        #expect(try treeSnapshot(installed.cache) == installed.snapshot, "the cache changed")
    }

    // MARK: generations

    @Test func theGenerationCounterGoesPastNineHundredNinetyNineThousand() async throws {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: try Self.gifs()).write(to: workspace.file("dist"))
        let cache = workspace.file("cache")
        _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
        // Seed the cache at g999999, as a million installs would leave it.
        try FileManager.default.moveItem(atPath: "\(cache).d/g000001", toPath: "\(cache).d/g999999")
        try FileManager.default.removeItem(atPath: cache)
        try FileManager.default.createSymbolicLink(atPath: cache, withDestinationPath: "cache.d/g999999")

        let first = try await PackInstaller(cacheDirectory: cache, layout: .byHash).install(from: PackIndexSource(index))
        #expect(first.generation == 1_000_000)
        let second = try await PackInstaller(cacheDirectory: cache, layout: .byID).install(from: PackIndexSource(index))
        #expect(second.generation == 1_000_001)
        let opened = try InstalledCache(directory: cache)
        #expect(opened.gifPath(forExercise: "e0") != nil)
        #expect(try fileBytes("\(cache)/e0.gif") == (try Self.gifs())[0])
        #expect(Set(DirectoryListing.names("\(cache).d")) == ["g1000000", "g1000001", "install.lock"])
        // And again, now that nothing changes.
        let third = try await PackInstaller(cacheDirectory: cache, layout: .byID).install(from: PackIndexSource(index))
        #expect(third.isUnchanged && third.generation == 1_000_001)
    }

    // MARK: <cache>.d that gifpack did not make

    @Test func aStoreDirectoryThatIsASymbolicLinkIsRefusedAndItsTargetLeftAlone() async throws {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: try Self.gifs()).write(to: workspace.file("dist"))
        let victim = workspace.file("victim")
        for name in ["g000002", ".staging-g000003-x", "downloads"] {
            try FileManager.default.createDirectory(atPath: "\(victim)/\(name)", withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: "\(victim)/\(name)/precious.txt"))
        }
        let before = DirectoryListing.names(victim)
        let cache = workspace.file("cache")
        try FileManager.default.createSymbolicLink(atPath: "\(cache).d", withDestinationPath: victim)
        do {
            _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
            Issue.record("installed through a symbolic link at cache.d")
        } catch {
            guard case .cacheNotManaged(_, let detail)? = error as? PackClientError else { Issue.record("expected cacheNotManaged, got \(error)"); return }
            #expect(detail.contains("symbolic link"), "\(detail)")
        }
        #expect(DirectoryListing.names(victim) == before)
        for name in before { #expect(FileManager.default.fileExists(atPath: "\(victim)/\(name)/precious.txt")) }
        #expect(!FileManager.default.fileExists(atPath: cache))
    }

    @Test func entriesGifpackDidNotMakeInTheStoreAreNeverDeleted() async throws {
        let workspace = try TemporaryDirectory()
        let index = try ForgedPack(gifs: try Self.gifs()).write(to: workspace.file("dist"))
        let cache = workspace.file("cache")
        _ = try await PackInstaller(cacheDirectory: cache).install(from: PackIndexSource(index))
        // Look-alikes of old generations and leftovers, none of them made by an install.
        let store = "\(cache).d"
        try FileManager.default.createDirectory(atPath: "\(store)/g000005", withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: "\(store)/g000005/notes.txt"))
        try FileManager.default.createSymbolicLink(atPath: "\(store)/g000004", withDestinationPath: workspace.path)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: "\(store)/.staging-notes"))
        _ = try await PackInstaller(cacheDirectory: cache, layout: .byHash).install(from: PackIndexSource(index))
        _ = try await PackInstaller(cacheDirectory: cache, layout: .byID).install(from: PackIndexSource(index))
        #expect(FileManager.default.fileExists(atPath: "\(store)/g000005/notes.txt"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "\(store)/g000004")) == workspace.path)
        #expect(FileManager.default.fileExists(atPath: "\(store)/.staging-notes"))
        #expect(FileManager.default.fileExists(atPath: workspace.file("dist/index.json")))
        #expect(try fileBytes("\(cache)/e1.gif") == (try Self.gifs())[1])
    }

    // MARK: terminal escapes

    /// No raw C0, DEL, C1 or bidi control in what a command printed.
    static func expectNoRawControls(_ run: Run, _ label: String) {
        let scalars = run.text.unicodeScalars
        let raw = scalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
        #expect(raw.isEmpty, "\(label) printed raw control characters \(raw.map { String($0.value, radix: 16) })")
    }

    @Test func idsAndNamesWithControlCharactersNeverReachTheTerminalRaw() async throws {
        let workspace = try TemporaryDirectory()
        let csi = "\u{9B}2J\u{1B}]0;owned\u{07}"
        var forged = ForgedPack(gifs: try Self.gifs())
        forged.exercises[0].id = "e0" + csi
        forged.exercises[1].id = "e1\u{202E}fig.exe"
        forged.name = "evil" + csi
        let index = try forged.write(to: workspace.file("hostile"))
        let pack = try #require(DirectoryListing.names(workspace.file("hostile/packs")).first)

        let inspect = try await Self.gifpack(["inspect", workspace.file("hostile/packs/\(pack)")])
        Self.expectNoRawControls(inspect, "inspect")
        #expect(inspect.text.contains("e0\\u{9b}2J\\u{1b}]0;owned\\u{7}"), "\(inspect.text)")

        let honest = try ForgedPack(gifs: try Self.gifs()).write(to: workspace.file("honest"))
        let diff = try await Self.gifpack(["diff", honest, index])
        Self.expectNoRawControls(diff, "diff")
        #expect(diff.status == 1 && diff.text.contains("unsafe-name"), "\(diff.text)")

        let install = try await Self.gifpack(["install", "--index", index, "--cache", workspace.file("cache"), "--pack", "nope\u{9B}"])
        Self.expectNoRawControls(install, "install --pack")
        #expect(install.status != 0)

        let cat = try await Self.gifpack(["cat", workspace.file("hostile/packs/\(pack)"), "e0" + csi])
        Self.expectNoRawControls(Run(status: cat.status, output: [], error: cat.error), "cat")
    }

    // MARK: index rules

    /// Installs the honest forge, then loads `index` changed by `change` over the same pack file.
    static func refusalOfChangedIndex(_ change: (inout PackIndex) -> Void) async throws -> PackClientError? {
        let installed = try await ClientHostilePackTests.installedCache()
        let path = try ForgedPack(gifs: try gifs()).write(to: installed.workspace.file("changed"))
        var index = try readIndex(path)
        change(&index)
        try index.encoded().write(to: URL(fileURLWithPath: path))
        do {
            let report = try await PackInstaller(cacheDirectory: installed.cache).install(from: PackIndexSource(path))
            Issue.record("the index was accepted (unchanged: \(report.isUnchanged))")
            return nil
        } catch {
            #expect(try treeSnapshot(installed.cache) == installed.snapshot, "the cache changed")
            return try #require(error as? PackClientError)
        }
    }

    @Test func anIndexBreakingTheFormatRulesIsRefusedOnLoadWithAReason() async throws {
        func reason(_ error: PackClientError?) -> String? {
            if case .rejected(let rejection) = error { return rejection.reason.rawValue }
            return nil
        }
        // Same pack file, so a lax reader answers "already installed".
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs[0].gifs[0].location.size = -5 }) == "invalid-number")
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs[0].uncompressedBytes = -1 }) == "invalid-number")
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs[0].gifs[1].location.frameOffset -= 10 }) == "bad-frame")
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs[0].version = -3 }) == "invalid-number")
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs.append($0.packs[0]) }) == "duplicate")
        #expect(reason(try await Self.refusalOfChangedIndex { $0.packs[0].exercises.append($0.packs[0].exercises[0]) }) == "duplicate")
    }
}

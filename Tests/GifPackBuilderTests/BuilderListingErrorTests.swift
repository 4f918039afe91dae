import Foundation
import GifPackSystem
import Testing
@testable import GifPack
@testable import GifPackTestSupport

/// A listing that fails is reported ("could not read"), never taken for an empty directory where
/// it decides what is deleted or trusted: the builder's listings (the client's: ListingErrorTests).
/// Directories that cannot be listed are made real: a regular file where the directory should be
/// (`ENOTDIR`; the tests run as root, which permission bits do not stop).
@Suite("Listing errors are errors in the builder, never an empty directory", .timeLimit(.minutes(5)))
struct BuilderListingErrorTests {
    @Test func aPublishTargetFolderThatCannotBeListedIsAnErrorNotAnEmptyFolder() async throws {
        let workspace = try TemporaryDirectory()
        let target = DirectoryTarget(root: workspace.file("www"))
        try FileSystem.createDirectory(workspace.file("www"))
        #expect(try await target.listKeys(under: "packs/").isEmpty, "a folder that does not exist holds no keys")
        try FileSystem.writeAtomically(Array("x".utf8), to: workspace.file("www/packs"))
        await #expect {
            _ = try await target.listKeys(under: "packs/")
        } throws: { error in
            "\(error)".contains("could not read \(workspace.file("www/packs"))")
        }
    }

    @Test(.computes) func aDamagedStateIsNotRebuiltFromAnIndexThatCannotBeRead() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.file("cache"))
        let state = try BuildState(path: workspace.file("state.sqlite"), source: "test")
        var recovery = StateRecovery(reason: "test", movedTo: workspace.file("state.sqlite.corrupt"))
        func rebuild(_ indexPath: String) throws {
            try StateOpener.rebuild(&recovery, state: state, indexPath: indexPath, catalog: [], layout: layout, resolution: .pixels(180), fetch: FetchSettings())
        }
        try rebuild(workspace.file("missing.json"))
        #expect(recovery.rebuiltPacks == 0, "no index: no pack written to rebuild")
        let garbled = workspace.file("index.json")
        try FileSystem.writeAtomically(Array("{\"formatVersion\": ".utf8), to: garbled)
        #expect { try rebuild(garbled) } throws: { error in "\(error)".contains("could not read \(garbled)") }
    }
}

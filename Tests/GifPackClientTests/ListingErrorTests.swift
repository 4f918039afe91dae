import Foundation
import GifPackSystem
@testable import GifPackClient
import Testing
@testable import GifPackTestSupport
import GifPackIndexReader

/// A listing that fails is reported ("could not read"), never taken for an empty
/// directory where it decides what is deleted or trusted. Directories that cannot be listed are
/// made real: a regular file where the directory should be (`ENOTDIR`; the tests run as root,
/// which permission bits do not stop). The builder's listings: BuilderListingErrorTests.
@Suite("Listing errors are errors, never an empty directory", .timeLimit(.minutes(5)))
struct ListingErrorTests {
    @Test(.computes) func theClientsListingThrowsForAPathItCannotList() throws {
        let workspace = try TemporaryDirectory()
        let file = workspace.file("not-a-directory")
        try FileSystem.writeAtomically(Array("x".utf8), to: file)
        #expect(throws: PackClientError.self) { try FileOps.list(file) }
        #expect(try FileOps.list(workspace.file("missing")).isEmpty, "a directory that does not exist lists as empty")
    }

    @Test func theLazyCachesStoredBytesThrowsWhenItsGIFsCannotBeListed() async throws {
        let workspace = try TemporaryDirectory()
        let directory = workspace.file("lazy")
        let store = LazyGIFStore(directory: directory)
        try store.prepare()
        try FileSystem.writeAtomically([UInt8](repeating: 1, count: 100), to: store.gifPath(String(repeating: "a", count: 64)))
        let cache = LazyGIFCache(directory: directory, indexURL: "http://127.0.0.1:9/index.json")
        #expect(try await cache.storedBytes() == 100)
        FileSystem.removeTree(store.gifsPath)
        try FileSystem.writeAtomically(Array("x".utf8), to: store.gifsPath)
        await #expect(throws: PackClientError.self) { try await cache.storedBytes() }
    }
}

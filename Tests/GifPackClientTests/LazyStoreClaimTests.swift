import Foundation
import GifPackSystem
@testable import GifPackClient
import GifPackIndexReader
import Testing
@testable import GifPackTestSupport

/// Processes that open one lazy cache at once: each looks for the marker, and one that saw none
/// may list the directory after another has claimed it and made its folders. That directory is
/// the cache (it has the marker), not a foreign one; a directory with the same folders and no
/// marker still is.
@Suite("The lazy cache's claim, with other processes claiming at once", .timeLimit(.minutes(2)))
struct LazyStoreClaimTests {
    @Test(.computes) func aDirectoryClaimedByAnotherProcessSinceWeLookedIsTheCache() throws {
        let workspace = try TemporaryDirectory()
        let other = LazyGIFStore(directory: workspace.file("lazy"))
        try other.prepare()  // the other process: marker, then gifs/, indexes/, tmp/
        let late = LazyGIFStore(directory: workspace.file("lazy"))
        try late.claim()  // this one saw no marker a moment ago and claims now
        try late.prepare()

        let foreign = LazyGIFStore(directory: workspace.file("foreign"))
        try FileSystem.createDirectory(workspace.file("foreign/gifs"))
        #expect(throws: PackClientError.self) { try foreign.claim() }
        #expect(throws: PackClientError.self) { try foreign.prepare() }
    }
}

import Foundation
import Testing
@testable import GifPack
@testable import GifPackTestSupport

/// A download that is not kept leaves its file to the next download instead of being deleted
/// (`DownloadFiles`), up to a bound; the spares are deleted when the fetch ends.
@Suite("Download files: handed back and written over, not deleted", .computes, .timeLimit(.minutes(1)))
struct DownloadFilesTests {
    @Test func aFileHandedBackIsTheNextDownloadsAndKeptUntilThen() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.file("cache"))
        try FileSystem.createDirectory(layout.temporaryDirectory)
        let downloads = DownloadFiles(layout: layout)
        let first = downloads.take()
        #expect(CacheLayout.isOwnDownload(PathText.lastComponent(first)))
        #expect(PathText.parent(first) == layout.temporaryDirectory)
        try Data("a duplicate's bytes".utf8).write(to: URL(fileURLWithPath: first))
        downloads.giveBack(first)
        #expect(FileSystem.exists(first), "a file handed back is not deleted")
        #expect(downloads.take() == first)
        #expect(downloads.take() != first, "handed out once, not twice")
        // Handed back twice by mistake, it is still handed out once.
        downloads.giveBack(first)
        downloads.giveBack(first)
        #expect(downloads.spareCount == 1)
    }

    @Test func beyondTheBoundFilesAreDeletedAndTheSparesGoWhenTheFetchEnds() throws {
        let workspace = try TemporaryDirectory()
        let layout = CacheLayout(root: workspace.file("cache"))
        try FileSystem.createDirectory(layout.temporaryDirectory)
        let downloads = DownloadFiles(layout: layout)
        let paths = (0..<(DownloadFiles.maxSpares + 3)).map { _ in downloads.take() }
        #expect(Set(paths).count == paths.count)
        for path in paths {
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
            downloads.giveBack(path)
        }
        #expect(downloads.spareCount == DownloadFiles.maxSpares)
        #expect(paths.filter(FileSystem.exists).count == DownloadFiles.maxSpares)
        downloads.removeSpares()
        #expect(downloads.spareCount == 0)
        #expect(try FileSystem.list(layout.temporaryDirectory).isEmpty)
    }
}

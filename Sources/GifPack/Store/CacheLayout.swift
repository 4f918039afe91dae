import Foundation

/// Where the builder keeps its working files under the cache directory:
///
/// ```
/// <cache>/tmp/                                   downloads in progress (*.part), and the catalog's record
///                                                spool (an unnamed file: see RecordSpool)
/// <cache>/blobs/sha256/ab/<sha256>.gif           validated GIFs, content-addressed
/// <cache>/frames/zstd<L>-mtime<T>/ab/<sha256>.zst  each GIF's tar entry as one compressed zstd frame
/// <cache>/state.sqlite                           what each exercise's last fetch learnt (see BuildState)
/// <cache>/catalog-pages                          the last catalog's pages and exercises (see CatalogPageCache)
/// ```
package struct CacheLayout: Sendable, Equatable {
    package var root: String

    package init(root: String) { self.root = root }

    package var temporaryDirectory: String { "\(root)/tmp" }
    package var blobsDirectory: String { "\(root)/blobs/sha256" }
    /// The last catalog's list pages and their exercises (see ``CatalogPageCache``).
    var catalogPagesPath: String { "\(root)/catalog-pages" }
    /// The build state database (SQLite, WAL).
    package var statePath: String { "\(root)/state.sqlite" }

    package func blobPath(sha256: String) -> String { "\(blobsDirectory)/\(sha256.prefix(2))/\(sha256).gif" }

    package func framesDirectory(level: Int32, mtime: Int64) -> String {
        "\(root)/frames/zstd\(level)-mtime\(mtime)-p\(ZstdFrameCompressor.parametersVersion)"
    }

    package func framePath(sha256: String, level: Int32, mtime: Int64) -> String {
        "\(framesDirectory(level: level, mtime: mtime))/\(sha256.prefix(2))/\(sha256).zst"
    }

    /// Creates the directories and clears downloads left over by an interrupted run (its own
    /// `<UUID>.part` files only).
    package func prepare() throws(FileSystemError) {
        try FileSystem.createDirectory(temporaryDirectory)
        try FileSystem.createDirectory(blobsDirectory)
        for name in try FileSystem.list(temporaryDirectory) where Self.isOwnDownload(name) {
            FileSystem.remove("\(temporaryDirectory)/\(name)")
        }
    }

    /// True for the name of a download in progress as ``newTemporaryDownloadPath()`` makes it
    /// (`<UUID>.part`; the catalog spool also passes through such a name on its way to
    /// `catalog-pages`): the only files gifpack ever deletes from `tmp/`.
    static func isOwnDownload(_ name: String) -> Bool {
        guard name.hasSuffix(".part") else { return false }
        return UUID(uuidString: String(name.dropLast(".part".count))) != nil && name.count == 36 + 5
    }

    package func newTemporaryDownloadPath() -> String { "\(temporaryDirectory)/\(UUID().uuidString).part" }
}

import GifPackFormat

/// A pack file on local disk whose size and SHA-256 were checked against the index.
///
/// Only ``PackDownloader`` makes these, so holding one means the file was verified. For an index
/// on local disk `path` is the index's own pack file (nothing is copied and ``isCopy`` is false);
/// for a URL it is the verified download in the downloader's directory.
///
/// ```swift
/// let downloaded = try await downloader.fetch(pack, from: source)
/// print(downloaded.path, downloaded.bytesTransferred, downloaded.resumedFrom ?? 0)
/// ```
package struct DownloadedPack: Sendable, Equatable {
    /// The pack as the index describes it.
    package let pack: PackDescription
    /// The verified file.
    package let path: String
    /// True when the file is a download the installer may delete after use.
    package let isCopy: Bool
    /// Bytes received over the network for this pack (0 for a local index or a finished earlier download).
    package let bytesTransferred: Int64
    /// The offset of the first Range request, when an earlier partial download was resumed.
    package let resumedFrom: Int64?
    /// nil: the whole file is there, checked as above. A set: a sparse upgrade's file holding only
    /// the catalog's frame and these GIFs' frames at their offsets, each checked on its own
    /// (``RangeFetcher``); every other GIF must come from the previous generation.
    let fetchedGIFs: Set<String>?
    /// A local index's pack whose size was checked and whose SHA-256 the installer checks while it
    /// stages the pack (``PackInstaller``): made only by the installer's own fetch, never handed out.
    var checksumPending = false
    /// GIFs decoded, checked and written while the pack downloaded (``PackFollower``), by SHA-256.
    var ready: [String: PackFollower.Ready] = [:]
    /// The catalog's GIF records by SHA-256, read and checked (``CatalogCheck``) by the
    /// ``PackFollower`` while the pack downloaded: the plan takes them instead of reading the
    /// catalog's frame again.
    var checkedCatalog: [String: GIFMetadata]?

    init(
        pack: PackDescription, path: String, isCopy: Bool, bytesTransferred: Int64, resumedFrom: Int64?,
        fetchedGIFs: Set<String>? = nil
    ) {
        self.pack = pack
        self.path = path
        self.isCopy = isCopy
        self.bytesTransferred = bytesTransferred
        self.resumedFrom = resumedFrom
        self.fetchedGIFs = fetchedGIFs
    }
}

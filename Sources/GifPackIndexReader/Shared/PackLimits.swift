/// Upper bounds a client enforces on what an index or pack may make it read, allocate or write.
///
/// An index is untrusted input: these caps keep a hostile one from making the client download or
/// decompress without bound. A GIF larger than ``maxGIFBytes`` is refused as
/// ``PackRejection/Reason/oversize`` before any of it is decompressed.
///
/// ```swift
/// var limits = PackLimits.standard
/// limits.maxGIFBytes = 8 << 20
/// let installer = PackInstaller(cacheDirectory: dir, limits: limits)
/// ```
package struct PackLimits: Sendable, Equatable {
    /// Largest `index.json` read into memory.
    package var maxIndexBytes: Int64
    /// Largest `catalog.json` entry read into memory.
    package var maxCatalogBytes: Int64
    /// Largest single GIF entry.
    package var maxGIFBytes: Int64
    /// Largest pack file downloaded.
    package var maxPackBytes: Int64

    package init(
        maxIndexBytes: Int64 = 64 << 20, maxCatalogBytes: Int64 = 64 << 20, maxGIFBytes: Int64 = 32 << 20,
        maxPackBytes: Int64 = 8 << 30
    ) {
        self.maxIndexBytes = maxIndexBytes
        self.maxCatalogBytes = maxCatalogBytes
        self.maxGIFBytes = maxGIFBytes
        self.maxPackBytes = maxPackBytes
    }

    /// 64 MiB index and catalog, 32 MiB per GIF, 8 GiB per pack.
    package static let standard = PackLimits()
}

import GifPackFormat
import GifPackIndexReader

/// Reads posters from a local posters pack (`<pack>-posters`, format 1.2) through its index
/// description: the catalog is read once, when the reader is made, and checked against the content
/// digest; each poster is checked against the SHA-256 the catalog gives it, and only the frames read
/// are decompressed.
///
/// ```swift
/// let reader = try PosterPackReader(path: "dist/packs/all-posters-v1-1a2b3c4d.tar.zst", posters: pack.posters!)
/// let gif = try reader.poster(size: 80, gifSHA256: hash)
/// ```
package struct PosterPackReader: Sendable {
    package let posters: PosterPackDescription
    private let reader: PackFrameReader
    private let listed: PosterPackCatalog
    private let byPath: [String: PosterPackCatalog.Poster]
    private let locations: [String: EntryLocation]

    package init(path: String, posters: PosterPackDescription) throws(PackClientError) {
        let reader = try EntryReading.openPackFile(path, pack: posters.name, expectedBytes: posters.bytes)
        let bytes = try IndexedEntry.readAll(
            posters.catalog, sha256: posters.contentDigest, image: nil,
            pack: posters.name, reader: reader)
        let catalog: PosterPackCatalog
        do { catalog = try PosterPackCatalog.decode(from: bytes) } catch {
            throw .rejected(
                PackRejection(
                    .catalogMismatch, pack: posters.name, entry: PackCatalog.path,
                    detail: JSONValueDecoder.describe(error)))
        }
        self.posters = posters
        self.reader = reader
        self.listed = catalog
        self.byPath = Dictionary(catalog.posters.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        self.locations = Dictionary(posters.posters.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The posters pack's catalog (checked against its content digest).
    package func catalog() -> PosterPackCatalog { listed }

    /// The poster of the GIF with hash `gifSHA256` at longest side `size`.
    package func poster(size: Int, gifSHA256: String) throws(PackClientError) -> [UInt8] {
        let path = PosterPackDescription.path(size: size, sha256: gifSHA256)
        guard let location = locations[path], let entry = byPath[path] else {
            throw .rejected(
                PackRejection(
                    .missingEntry, pack: posters.name, entry: SafePath.printable(path),
                    detail: "the posters pack has no poster of this GIF at \(size) px (sizes: \(posters.sizes.map(String.init).joined(separator: ", ")))"))
        }
        return try IndexedEntry.readAll(location, sha256: entry.sha256, image: .gif, pack: posters.name, reader: reader)
    }
}

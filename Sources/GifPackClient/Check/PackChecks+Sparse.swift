import GifPackFormat
import GifPackIndexReader

extension PackChecks {
    /// The checks that apply to a sparse upgrade's file, which holds only the catalog's frame and
    /// the fetched GIFs' frames at their offsets (``RangeFetcher``): the index description and
    /// `catalog.json` against the content digest and the index, stopping at the first problem. The
    /// frame scan, the uncompressed size and the end-of-archive frame need the whole file and
    /// belong to whole downloads; every fetched GIF is still read through its frame and checked
    /// against its catalog record by the installer, as for a whole pack.
    ///
    /// ```swift
    /// let opened = try PackChecks.sparseStructure(path: sparsePath, pack: pack, limits: limits)
    /// ```
    static func sparseStructure(path: String, pack: PackDescription, limits: PackLimits) throws(PackClientError) -> Opened {
        let name = SafePath.printable(pack.name)
        if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }
        let reader: PackFrameReader
        do throws(PackReadError) { reader = try PackFrameReader(path: path) } catch {
            throw EntryReading.translate(error, pack: name, entry: pack.file, readerPath: path)
        }
        let catalog = try CatalogCheck.read(pack: pack, reader: reader)
        var byHash: [String: GIFMetadata] = [:]
        for exercise in catalog.exercises { if let gif = exercise.gif { byHash[gif.sha256] = gif } }
        return Opened(reader: reader, frames: [], metadata: byHash, entriesReadable: true)
    }
}

import GifPackFormat
import GifPackIndexReader

/// Random access to single GIFs inside a pack file, using the index's frame offsets.
///
/// Reading one exercise's GIF costs one `pread` of its zstd frame and its decompression; nothing
/// else in the pack is read. Each read checks the tar header (a regular file with the expected
/// name and size), caps decompression at the entry's size (bombs stop there), and compares the
/// SHA-256 with the index. The description is checked once, when the reader is made, and the
/// file's size must be the index's. The whole-file SHA-256 is not checked (that would read
/// everything): use ``PackDownloader`` or `gifpack verify` for that.
///
/// Reads block on disk I/O: call them off Swift's cooperative pool (a dedicated thread, or a
/// `DispatchQueue`). The reader is a value that shares one read-only file descriptor and is safe to
/// use from several threads at once.
///
/// ```swift
/// let index = try await PackIndexSource("dist/index.json").load()
/// let pack = index.pack(named: "all")!
/// let reader = try PackEntryReader(path: "dist/" + pack.file, pack: pack)
/// let gif: [UInt8] = try reader.gif(forExercise: "0001")
/// ```
package struct PackEntryReader: Sendable {
    /// The pack as the index describes it.
    package let pack: PackDescription
    private let reader: PackFrameReader
    private let name: String

    /// Opens the pack file at `path`; throws if `pack` fails the index checks or the file's size
    /// is not `pack.bytes`.
    package init(path: String, pack: PackDescription, limits: PackLimits = .standard) throws(PackClientError) {
        if let problem = PackDescriptionCheck.problems(in: pack, limits: limits).first { throw .rejected(problem) }
        let reader = try EntryReading.openPackFile(path, pack: pack.name, expectedBytes: pack.bytes)
        self.pack = pack
        self.reader = reader
        self.name = pack.name
    }

    /// The GIF of exercise `id`, verified. Throws ``PackClientError/unknownExercise(_:)`` when the
    /// pack does not list it and ``PackClientError/noGIF(exercise:)`` when it has no GIF.
    package func gif(forExercise id: String) throws(PackClientError) -> [UInt8] {
        guard let exercise = pack.exercises.first(where: { $0.id == id }) else { throw .unknownExercise(id) }
        guard let hash = exercise.gif else { throw .noGIF(exercise: id) }
        return try gif(sha256: hash)
    }

    /// The GIF whose SHA-256 is `hash`, verified.
    package func gif(sha256 hash: String) throws(PackClientError) -> [UInt8] {
        guard let entry = pack.gifs.first(where: { $0.sha256 == hash }) else {
            throw .rejected(
                PackRejection(
                    .missingEntry, pack: name, entry: GIFEntry.path(forSHA256: hash),
                    detail: "the pack lists no GIF with this hash"))
        }
        return try IndexedEntry.readAll(entry.location, sha256: entry.sha256, image: entry.imageFormat, side: pack.renditionSide, pack: name, reader: reader)
    }

    /// The pack's `catalog.json` (exercise names, API records, GIF metadata), verified against the
    /// index's content digest and exercise list.
    package func catalog() throws(PackClientError) -> PackCatalog {
        try CatalogCheck.read(pack: pack, reader: reader)
    }

    /// Hands the exercises of the pack's `catalog.json` to `body` one at a time, as they are
    /// decompressed (``PackCatalogStream``): memory holds one exercise, never the catalog, whatever
    /// its size. The entry is read twice: first checked (its SHA-256 is the index's content digest,
    /// it names this pack in a readable format version), then decoded, so `body` only sees a
    /// catalog that verified. The list itself is not compared with the index's here: a caller that
    /// needs that compares each exercise with `pack.exercises` as it comes. An error `body` throws
    /// stops the decoding and is rethrown.
    package func streamCatalog(_ body: (PackExercise) throws -> Void) throws {
        let name = SafePath.printable(pack.name)
        func rejection(_ failure: PackCatalogStream.Failure) -> PackClientError {
            .rejected(PackRejection(.catalogMismatch, pack: name, entry: PackCatalog.path, detail: failure.description))
        }
        var check = PackCatalogStream()
        var failure: PackCatalogStream.Failure?
        try IndexedEntry.read(pack.catalog, sha256: pack.contentDigest, image: nil, pack: name, reader: reader) { chunk in
            guard failure == nil else { return }
            do { try check.skim(chunk) } catch { failure = error as? PackCatalogStream.Failure }
        }
        if let failure { throw rejection(failure) }
        let head: PackCatalog
        do { head = try check.finish() } catch { throw rejection(error) }
        if let problem = CatalogCheck.headProblems(head, pack: pack).first { throw PackClientError.rejected(problem) }
        var stream = PackCatalogStream()
        var stopped: (any Error)?
        try IndexedEntry.read(pack.catalog, sha256: pack.contentDigest, image: nil, pack: name, reader: reader) { chunk in
            guard stopped == nil else { return }
            do { try stream.feed(chunk, body) } catch { stopped = error }
        }
        if let failure = stopped as? PackCatalogStream.Failure { throw rejection(failure) }
        if let stopped { throw stopped }
    }
}

import GifPackFormat
import GifPackGIFCore
import GifPackIndexReader

/// The one list of checks a pack file must pass, run by both `install` (which stops at the first
/// problem) and `verify` (which lists them all), so the two cannot drift apart.
///
/// ``structure(path:pack:limits:report:)`` runs, in order: the index description
/// (``PackDescriptionCheck``); the file's real zstd frames against the index (``FrameLayoutCheck``:
/// every entry one listed frame, no unlisted frame, nothing after the last frame); the frames'
/// total content size against `uncompressedBytes`; the end-of-archive frame, which must decompress
/// to exactly 1024 zero bytes (``EndOfArchiveCheck``; stock `tar` would extract anything hidden
/// there); and `catalog.json` against the content digest and the index (``CatalogCheck``). Then
/// every image entry is read through its frame (tar header, capped size, SHA-256: ``IndexedEntry``) and
/// walked by its format's walker and compared with its catalog record (``GIFMetadataCheck/problems(_:metadata:side:format:pack:entry:)``). The file's
/// size and SHA-256 are checked before, by ``PackDownloader``.
///
/// ```swift
/// let opened = try PackChecks.structure(path: path, pack: pack, limits: limits) { throw .rejected($0) }
/// ```
enum PackChecks {
    /// A pack file whose structure was checked: its reader and its catalog's GIF records by hash.
    struct Opened {
        let reader: PackFrameReader
        let frames: [ZstdFrameExtent]
        /// Nil when the catalog could not be read (verify goes on without it).
        let metadata: [String: GIFMetadata]?
        /// False when the description failed its checks: no entry may be read through it.
        let entriesReadable: Bool
    }

    /// Runs every check that does not read GIF data; each problem goes to `report`, which throws to
    /// stop or records and returns to go on. Returns nil when the file's frames cannot be read.
    /// The most frames the scan lists for `pack`: its entries (`catalog.json` among them) and the end
    /// of archive, plus one, and never more than a catalog within the limits can list.
    static func maxFrames(_ pack: PackDescription, _ limits: PackLimits) -> Int {
        let (expected, overflow) = max(pack.entryCount, 0).addingReportingOverflow(2)
        return overflow ? PackFileScan.maxFrames(limits) : min(expected, PackFileScan.maxFrames(limits))
    }

    /// `checkedCatalog`: the catalog's GIF records by SHA-256, when ``CatalogCheck`` already read
    /// them from this very file's catalog frame (a ``PackFollower`` while the file downloaded; the
    /// file's SHA-256 was checked since): the catalog frame is not read again.
    static func structure(
        path: String, pack: PackDescription, limits: PackLimits, checkedCatalog: [String: GIFMetadata]? = nil,
        report: (PackRejection) throws(PackClientError) -> Void
    ) throws(PackClientError) -> Opened? {
        let name = SafePath.printable(pack.name)
        let descriptionProblems = PackDescriptionCheck.problems(in: pack, limits: limits)
        for problem in descriptionProblems { try report(problem) }
        let frames: [ZstdFrameExtent]
        let reader: PackFrameReader
        do {
            // The index says how many frames there are (entries, end of archive): one more is
            // still listed (and refused as unlisted), further ones are not read into the list at all.
            frames = try ZstdFrames.frameExtents(in: path, maxFrames: Self.maxFrames(pack, limits))
            reader = try PackFrameReader(path: path)
        } catch {
            try report(rejection(EntryReading.translate(error, pack: name, entry: pack.file, readerPath: path), pack: name))
            return nil
        }
        for problem in FrameLayoutCheck.problems(frames: frames, pack: pack) { try report(problem) }
        var uncompressed: Int64 = 0
        for frame in frames { uncompressed = uncompressed.addingReportingOverflow(frame.contentSize ?? 0).partialValue }
        if uncompressed != pack.uncompressedBytes {
            try report(
                PackRejection(
                    .sizeMismatch, pack: name,
                    detail: "the frames hold \(uncompressed) bytes, uncompressedBytes says \(pack.uncompressedBytes)"))
        }
        if let last = frames.last, let problem = EndOfArchiveCheck.problem(path: path, frame: last, pack: name) {
            try report(problem)
        }
        // Entries are read only through a description that passed its checks (sizes within limits).
        guard descriptionProblems.isEmpty else {
            return Opened(reader: reader, frames: frames, metadata: nil, entriesReadable: false)
        }
        if let checkedCatalog { return Opened(reader: reader, frames: frames, metadata: checkedCatalog, entriesReadable: true) }
        var metadata: [String: GIFMetadata]?
        do {
            let catalog = try CatalogCheck.read(pack: pack, reader: reader)
            var byHash: [String: GIFMetadata] = [:]
            for exercise in catalog.exercises { if let gif = exercise.gif { byHash[gif.sha256] = gif } }
            metadata = byHash
        } catch {
            try report(rejection(error, pack: name))
        }
        return Opened(reader: reader, frames: frames, metadata: metadata, entriesReadable: true)
    }

    static func rejection(_ error: PackClientError, pack: String) -> PackRejection {
        if case .rejected(let rejection) = error { return rejection }
        return PackRejection(.unreadable, pack: pack, detail: error.description)
    }
}

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

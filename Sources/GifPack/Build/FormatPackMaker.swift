import Foundation

/// Makes a pack's WebP rendition (format 1.4, `formatPacks[]`): the pack `<pack>.<resolution>.webp`
/// with, for each of its exercises, the WebP of its GIF (`images/<sha256>.webp`, the WebP's hash)
/// or, where no WebP cleared the bar with fewer bytes (``WebPCache/Record/usesGIF``), the GIF itself
/// (`gifs/<sha256>.gif`). Its `catalog.json` and its index entry say each entry's `format`; sizes,
/// timing and placeholders are the source GIF's, which the WebP matches. No posters pack: the GIF
/// pack's posters serve both.
///
/// Versions and names follow ``PackMaker``'s rules (``PackMaker/place(_:summary:pack:outputDirectory:referenced:recorded:)``):
/// a `catalog.json` whose digest equals that of a pack written before, with its file present, writes nothing,
/// so a no-change rebuild is byte-identical; the entries are written in tar-path order.
struct FormatPackMaker: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let webp: WebPCache
    let placeholders: PlaceholderCache?
    /// The source as `catalog.json` names it (this resolution's, no base URL).
    let source: SourceDescription

    /// The name of `pack`'s WebP rendition at `resolution` pixels: `all.180.webp`.
    static func name(pack: String, resolution: Int) -> String { "\(pack).\(resolution).\(ImageFormat.webp.rawValue)" }

    /// One entry of the pack: its hash and tar path, where its bytes are, and its catalog row's metadata.
    private struct Entry {
        var path: String
        var sourcePath: String
        var metadata: GIFMetadata
    }

    /// The WebP pack of `entry` at `resolution`, made or found current.
    func make(
        _ entry: PackPlan.Entry, resolution: Int, results: FetchResults, records: [String: WebPCache.Record],
        history: PackMaker.History
    ) throws -> (PackDescription, PackMaker.Outcome) {
        let name = Self.name(pack: entry.spec.name, resolution: resolution)
        var refs = ExerciseRefList()
        refs.reserveCapacity(entry.exercises.count)
        var entries: [String: Entry] = [:]
        var previews: [String: GIFPlaceholder] = [:]
        var rows: [PackCatalogWriter.Row] = []
        try entry.exercises.readingRecords.forEach { exercise in
            guard case .stored(let gif)? = results[exercise.id] else {
                refs.append(ExerciseRef(id: exercise.id, gif: nil))
                rows.append(PackCatalogWriter.Row(exercise: exercise, gif: nil))
                return
            }
            guard let record = records[gif.sha256] else { throw FormatPackError.noRendition(gif.sha256) }
            var metadata = gif.metadata
            var item = Entry(
                path: GIFEntry.path(forSHA256: gif.sha256), sourcePath: frames.layout.blobPath(sha256: gif.sha256),
                metadata: metadata)
            if let hash = record.webpSHA256, let bytes = record.webpBytes {
                (metadata.sha256, metadata.bytes, metadata.format) = (hash, bytes, .webp)
                item = Entry(
                    path: ImageFormat.webp.entryPath(forSHA256: hash) ?? "", sourcePath: webp.webpPath(sha256: gif.sha256),
                    metadata: metadata)
            }
            if let placeholders {
                let still = try placeholders.ensure(sha256: gif.sha256, blobPath: frames.layout.blobPath(sha256: gif.sha256))
                (item.metadata.blurHash, item.metadata.averageColor) = (still.blurHash, still.averageColor)
                previews[item.metadata.sha256] = GIFPlaceholder(
                    blurHash: still.blurHash, averageColor: still.averageColor, width: gif.info.width, height: gif.info.height,
                    frames: gif.info.frameCount, durationMilliseconds: gif.info.durationMilliseconds, loopCount: gif.info.loopCount)
            }
            entries[item.metadata.sha256] = item
            refs.append(ExerciseRef(id: exercise.id, gif: item.metadata.sha256))
            rows.append(PackCatalogWriter.Row(exercise: exercise, gif: item.metadata))
        }
        let digest = try PackCatalogWriter.digest(pack: name, source: source, sortedExercises: rows).sha256
        if let current = current(digest, history: history) {
            var found = current
            found.exercises = refs
            return (found, .unchanged)
        }
        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let catalogPath = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).catalog.json")
        defer { FileSystem.remove(catalogPath) }
        _ = try PackCatalogWriter.write(pack: name, source: source, sortedExercises: rows, to: catalogPath)
        let temporary = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).tar.zst")
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendEntry(name: PackCatalog.path, sourcePath: catalogPath)
            // Every entry's bytes are hashed as they are packed: a cache file that no longer
            // matches its hash (cache files are not fsynced) fails the build rather than the app.
            for item in entries.values.sorted(by: { $0.path < $1.path }) {
                try assembler.appendEntry(name: item.path, sourcePath: item.sourcePath, expectedSHA256: item.metadata.sha256)
            }
            let summary = try assembler.finish()
            let (version, file, outcome) = try PackMaker.place(
                temporary, summary: summary, pack: name, outputDirectory: outputDirectory,
                referenced: history.references.map(\.written),
                recorded: history.recorded)
            // The index's description of the file just written.
            guard let catalogEntry = summary.entries.first, catalogEntry.name == PackCatalog.path else {
                throw PackMakerError.unexpectedLayout(file)
            }
            let byPath = Dictionary(uniqueKeysWithValues: entries.values.map { ($0.path, $0.metadata) })
            let gifs = try summary.entries.dropFirst().map { packed in
                guard let metadata = byPath[packed.name] else { throw PackMakerError.unexpectedLayout(file) }
                return GIFEntry(
                    sha256: metadata.sha256,
                    location: EntryLocation(
                        path: packed.name, size: packed.size,
                        frameOffset: packed.frameOffset, frameLength: packed.frameLength),
                    placeholder: previews[metadata.sha256], format: metadata.format)
            }
            var description = PackDescription(
                name: name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
                entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
                catalog: EntryLocation(
                    path: catalogEntry.name, size: catalogEntry.size,
                    frameOffset: catalogEntry.frameOffset, frameLength: catalogEntry.frameLength),
                gifs: gifs, exerciseList: refs)
            description.resolution = resolution
            description.format = .webp
            return (description, outcome)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }

    /// The pack written before whose catalog.json had `digest`, if its file is here at its recorded size.
    private func current(_ digest: String, history: PackMaker.History) -> PackDescription? {
        history.references
            .filter { $0.contentDigest == digest && FileSystem.fileSize("\(outputDirectory)/\($0.file)") == $0.bytes }
            .max { $0.version < $1.version }
    }
}

enum FormatPackError: Error, CustomStringConvertible {
    case noRendition(String)

    var description: String {
        switch self {
        case .noRendition(let hash): "the GIF \(hash) has no WebP rendition decided"
        }
    }
}

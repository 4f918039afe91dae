import GifPackFormat
import GifPackIndexReader

/// Reads a pack's `catalog.json` through the index and checks that it agrees with the index.
///
/// The catalog's SHA-256 must be the pack's `contentDigest`; it must decode, name the same pack,
/// have a readable format version, and list exactly the index's exercises with the same GIF hashes,
/// sizes and (format 1.4) formats. Installs rely on the index's exercise list; this check makes sure the pack's own
/// record says the same.
///
/// ```swift
/// let catalog = try CatalogCheck.read(pack: pack, reader: reader)
/// ```
enum CatalogCheck {
    static func read(pack: PackDescription, reader: PackFrameReader) throws(PackClientError) -> PackCatalog {
        let name = SafePath.printable(pack.name)
        let bytes = try IndexedEntry.readAll(
            pack.catalog, sha256: pack.contentDigest, image: nil, pack: name,
            reader: reader)
        let catalog: PackCatalog
        do { catalog = try PackCatalog.decode(from: bytes) } catch {
            throw .rejected(
                PackRejection(
                    .catalogMismatch, pack: name, entry: PackCatalog.path,
                    detail: "catalog.json does not decode: \(JSONValueDecoder.describe(error))"))
        }
        if let problem = problems(catalog, pack: pack).first { throw .rejected(problem) }
        return catalog
    }

    /// What the catalog's own keys get wrong: a format version this client cannot read, another pack's name.
    static func headProblems(_ catalog: PackCatalog, pack: PackDescription) -> [PackRejection] {
        let name = SafePath.printable(pack.name)
        var problems: [PackRejection] = []
        if !catalog.formatVersion.isReadable {
            problems.append(
                PackRejection(
                    .catalogMismatch, pack: name, entry: PackCatalog.path,
                    detail: "catalog format version \(catalog.formatVersion) is not readable"))
        }
        if catalog.pack != pack.name {
            problems.append(
                PackRejection(
                    .catalogMismatch, pack: name, entry: PackCatalog.path,
                    detail: "the catalog is for pack \(SafePath.printable(catalog.pack))"))
        }
        return problems
    }

    static func problems(_ catalog: PackCatalog, pack: PackDescription) -> [PackRejection] {
        let name = SafePath.printable(pack.name)
        func problem(_ detail: String) -> PackRejection {
            PackRejection(.catalogMismatch, pack: name, entry: PackCatalog.path, detail: detail)
        }
        var problems = headProblems(catalog, pack: pack)
        let fromCatalog = catalog.exercises.map { ExerciseRef(id: $0.id, gif: $0.gif?.sha256) }.sorted { $0.id < $1.id }
        let fromIndex = pack.exercises.sorted { $0.id < $1.id }
        if fromCatalog != fromIndex {
            let catalogIDs = Set(fromCatalog.map { "\($0.id)=\($0.gif ?? "-")" })
            let indexIDs = Set(fromIndex.map { "\($0.id)=\($0.gif ?? "-")" })
            let differing = catalogIDs.symmetricDifference(indexIDs).sorted().prefix(3)
            problems.append(problem("the catalog's exercises differ from the index's (e.g. \(differing.map(SafePath.printable).joined(separator: ", ")))"))
        }
        let sizes = Dictionary(pack.gifs.map { ($0.sha256, $0.location.size) }, uniquingKeysWith: { first, _ in first })
        for exercise in catalog.exercises {
            guard let gif = exercise.gif, let size = sizes[gif.sha256], size != gif.bytes else { continue }
            problems.append(problem("exercise \(SafePath.printable(exercise.id)): the catalog says \(gif.bytes) bytes, the index \(size)"))
        }
        let formats = Dictionary(pack.gifs.map { ($0.sha256, $0.imageFormat) }, uniquingKeysWith: { first, _ in first })
        for exercise in catalog.exercises {
            guard let gif = exercise.gif, let format = formats[gif.sha256], format != (gif.format ?? .gif) else { continue }
            problems.append(
                problem(
                    "exercise \(SafePath.printable(exercise.id)): the catalog says format \(SafePath.printable(gif.format?.rawValue ?? "gif")), "
                        + "the index \(format.rawValue)"))
        }
        return problems
    }
}

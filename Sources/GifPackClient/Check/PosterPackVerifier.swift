import GifPackFormat
import GifPackGIFCore
import GifPackSystem
import GifPackIndexReader

/// Verification of a posters pack (`<pack>-posters`, format 1.2), for ``PackVerifier``.
///
/// Alone (``verifyFile(_:catalog:into:)``): every entry after `catalog.json` must be a poster the
/// catalog lists (`posters/<size>/<sha256>.gif`, at one of its sizes), with the listed SHA-256 and
/// length, decode as a single-frame GIF whose longest side is at most its size, and every listed
/// poster must be present. Through an index (``verify(_:path:into:)``): the file's size and SHA-256,
/// the file's frames against the listed entries and the end-of-archive frame, the catalog against the
/// content digest, and every poster read at its listed frame. A sparse upgrade's file
/// (``verifySparse(_:path:fetched:into:)``), which holds only the catalog's frame and the fetched
/// posters' frames: the catalog against the content digest and the index, and every fetched poster
/// read at its frame; the file's hash, frame scan and end of archive need the whole file.
///
/// ```swift
/// var report = VerificationReport()
/// PosterPackVerifier.verify(pack.posters!, path: "dist/\(pack.posters!.file)", into: &report)
/// ```
enum PosterPackVerifier {
    static func verifyFile(_ scan: PackFileScan, catalog: PosterPackCatalog, into report: inout VerificationReport) {
        let name = PathText.lastComponent(scan.path)
        let listed = Dictionary(catalog.posters.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        report.problems += recordProblems(catalog, pack: name)
        var seen = Set<String>()
        for frame in scan.frames.dropFirst().dropLast() {
            let entry: PackFileScan.Entry
            do { entry = try scan.entry(frame, maxSize: scan.limits.maxGIFBytes) } catch {
                report.problems.append(PackRejection(.unreadable, pack: name, detail: "\(error)"))
                continue
            }
            let path = SafePath.printable(entry.header.name)
            guard let poster = listed[entry.header.name] else {
                report.problems.append(PackRejection(.unlistedEntry, pack: name, entry: path, detail: "catalog.json lists no such poster"))
                continue
            }
            seen.insert(poster.path)
            report.gifs += 1
            report.problems += problems(entry.data, sha256: entry.sha256, poster: poster, pack: name)
        }
        for poster in catalog.posters where !seen.contains(poster.path) {
            report.problems.append(
                PackRejection(
                    .missingEntry, pack: name, entry: SafePath.printable(poster.path),
                    detail: "catalog.json lists it but the pack does not hold it"))
        }
    }

    static func verify(_ posters: PosterPackDescription, path: String, into report: inout VerificationReport) {
        report.packs += 1
        let name = SafePath.printable(posters.name)
        do {
            let hash = try StreamingSHA256.file(at: path).sha256
            if hash != posters.sha256 {
                report.problems.append(
                    PackRejection(
                        .packChecksum, pack: name, entry: posters.file,
                        detail: "the file hashes to \(hash), the index says \(posters.sha256)"))
                return
            }
            let locations = [posters.catalog] + posters.posters
            // The catalog, the posters and the end of archive, plus one: the list never grows with the file.
            let frames = try ZstdFrames.frameExtents(in: path, maxFrames: locations.count + 2)
            report.frames += frames.count
            if frames.count != locations.count + 1
                || zip(frames, locations).contains(where: {
                    $0.offset != $1.frameOffset || $0.compressedLength != $1.frameLength
                })
            {
                report.problems.append(
                    PackRejection(
                        .badFrame, pack: name, entry: posters.file,
                        detail: "the file's zstd frames are not the entries the index lists plus the end of the archive"))
            }
            if let last = frames.last, let endProblem = EndOfArchiveCheck.problem(path: path, frame: last, pack: name) {
                report.problems.append(endProblem)
            }
            try verifyPosters(posters, path: path, only: nil, into: &report)
        } catch let error as PackClientError {
            if case .rejected(let rejection) = error {
                report.problems.append(rejection)
            } else {
                report.problems.append(PackRejection(.unreadable, pack: name, entry: posters.file, detail: error.description))
            }
        } catch {
            report.problems.append(PackRejection(.unreadable, pack: name, entry: posters.file, detail: "\(error)"))
        }
    }

    /// Verifies a sparse upgrade's posters file: `fetched` are the paths of the posters whose
    /// frames it holds (``RangeFetcher``); the other posters come from the installed generation.
    static func verifySparse(
        _ posters: PosterPackDescription, path: String, fetched: Set<String>,
        into report: inout VerificationReport
    ) {
        report.packs += 1
        do throws(PackClientError) {
            try verifyPosters(posters, path: path, only: fetched, into: &report)
        } catch {
            if case .rejected(let rejection) = error {
                report.problems.append(rejection)
            } else {
                report.problems.append(
                    PackRejection(
                        .unreadable, pack: SafePath.printable(posters.name), entry: posters.file,
                        detail: error.description))
            }
        }
    }

    /// The catalog (against the content digest and the index) and every poster (all, or those in
    /// `only`) read at its listed frame and checked.
    private static func verifyPosters(
        _ posters: PosterPackDescription, path: String, only: Set<String>?,
        into report: inout VerificationReport
    ) throws(PackClientError) {
        let name = SafePath.printable(posters.name)
        let reader = try PosterPackReader(path: path, posters: posters)
        let catalog = reader.catalog()
        let catalogProblems = catalogProblems(catalog, of: posters)
        report.problems += catalogProblems
        if only != nil, !catalogProblems.isEmpty { return }
        let listed = Dictionary(catalog.posters.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        for location in posters.posters where only?.contains(location.path) ?? true {
            guard let poster = listed[location.path] else { continue }
            let bytes = try reader.poster(size: poster.size, gifSHA256: poster.gif)
            report.gifs += 1
            report.problems += problems(bytes, sha256: poster.sha256, poster: poster, pack: name)
        }
    }

    /// A posters pack's catalog (already checked against the content digest) held to the index: it
    /// lists exactly the index's posters, each once, and each record's size and GIF name its path.
    static func catalogProblems(_ catalog: PosterPackCatalog, of posters: PosterPackDescription) -> [PackRejection] {
        let name = SafePath.printable(posters.name)
        var found: [PackRejection] = []
        let paths = catalog.posters.map(\.path)
        if Set(paths) != Set(posters.posters.map(\.path)) || Set(paths).count != paths.count {
            found.append(
                PackRejection(
                    .catalogMismatch, pack: name, entry: PackCatalog.path,
                    detail: "the catalog and the index list different posters"))
        }
        return found + recordProblems(catalog, pack: name)
    }

    /// Catalog records whose size and GIF name another path than theirs.
    private static func recordProblems(_ catalog: PosterPackCatalog, pack: String) -> [PackRejection] {
        catalog.posters.filter { $0.path != PosterPackDescription.path(size: $0.size, sha256: $0.gif) }.map { poster in
            PackRejection(
                .catalogMismatch, pack: pack, entry: SafePath.printable(poster.path),
                detail: "catalog.json gives it size \(poster.size) and GIF \(SafePath.printable(poster.gif)), which name another path")
        }
    }

    private static func problems(_ bytes: [UInt8], sha256: String, poster: PosterPackCatalog.Poster, pack: String) -> [PackRejection] {
        let entry = SafePath.printable(poster.path)
        var found: [PackRejection] = []
        if sha256 != poster.sha256 || Int64(bytes.count) != poster.bytes {
            found.append(PackRejection(.hashMismatch, pack: pack, entry: entry, detail: "the poster does not match its catalog record"))
        }
        do {
            let info = try GIFWalker.inspect(bytes: bytes)
            if info.frameCount != 1 || max(info.width, info.height) > poster.size {
                found.append(
                    PackRejection(
                        .badEntry, pack: pack, entry: entry,
                        detail: "a poster is one frame of at most \(poster.size) px; this is \(info.frameCount) frame(s) of \(info.width)x\(info.height)"))
            }
        } catch {
            found.append(PackRejection(.notAGIF, pack: pack, entry: entry, detail: "does not decode: \(error)"))
        }
        return found
    }
}

import Foundation
import GifPackFormat
import GifPackSystem
import GifPackIndexReader

/// Full verification of a build's output directory or of a single pack file, collecting every
/// problem instead of stopping at the first.
///
/// ``verifyDirectory(_:limits:trust:)`` reads `<dir>/index.json`, lists every problem of the index's
/// rules (`PackDescriptionCheck.indexProblems(in:limits:)`, the one function the clients run
/// when they load an index: names, paths, hashes, ids, resolutions), and for every pack: the file's size and SHA-256, every frame offset
/// against the real frame sequence (and that no unlisted frame exists), `uncompressedBytes`, the
/// end-of-archive frame, `catalog.json` against the content digest and the index, and every GIF
/// read through its frame offset (header, size, SHA-256), walked with `GIFWalker` and compared
/// with its catalog record; a WebP pack's (format 1.4) WebPs are walked with `WebPWalker`.
///
/// ``verifyPack(_:limits:)`` does the same for a pack file alone: it walks the frames, parses each
/// tar header, checks each `gifs/<sha256>.gif` (or `images/<sha256>.webp`) against its name,
/// matches the catalog's entries with the pack's both ways and walks every image.
///
/// Both block on disk I/O and decoding.
///
/// ```swift
/// let report = PackVerifier.verifyPack("dist/packs/all-v3-1a2b3c4d.tar.zst")
/// print(report.isOK, report.gifs)
/// ```
package enum PackVerifier {
    /// With `trust`, the index must first pass ``IndexTrust/verify(indexBytes:signature:location:installedSequence:limits:)``
    /// with `index.json.minisig` beside it; a refused index ends the check with ``VerificationReport/indexRefusal``.
    package static func verifyDirectory(
        _ directory: String, limits: PackLimits = .standard,
        trust: IndexTrust? = nil
    ) -> VerificationReport {
        var report = VerificationReport()
        let indexPath = "\(directory)/index.json"
        let index: PackIndex
        do {
            if let trust {
                index = try trust.verifyFile(indexPath, installedSequence: nil, limits: limits, checkRules: false)
            } else {
                index = try PackIndex.decode(from: try PackIndexSource.readFile(indexPath, maxBytes: limits.maxIndexBytes))
            }
        } catch PackClientError.untrusted(let refusal) {
            report.indexRefusal = refusal
            return report
        } catch PackClientError.index(let error) {
            report.problems.append(PackRejection(.unreadable, pack: "index.json", detail: error.description))
            return report
        } catch let error as IndexError {
            report.problems.append(PackRejection(.unreadable, pack: "index.json", detail: error.description))
            return report
        } catch {
            report.problems.append(PackRejection(.unreadable, pack: "index.json", detail: "\(error)"))
            return report
        }
        // The index's rules: the one function every client runs on loading an index, so verify
        // approves exactly the indexes the clients accept; each pack's file is checked after.
        report.problems += PackDescriptionCheck.indexProblems(in: index, limits: limits)
        let source = PackIndexSource(location: .file(indexPath))
        // Format 1.3: the rendition packs are checked like the others; format 1.4: the WebP packs too.
        for pack in index.allPacks { verify(pack, source: source, limits: limits, into: &report) }
        // Format 1.2: each pack's posters pack.
        for posters in index.packs.compactMap(\.posters) {
            do {
                guard case .file(let path) = try source.packLocation(for: posters) else { continue }
                PosterPackVerifier.verify(posters, path: path, into: &report)
            } catch {
                report.problems.append(problem(error, pack: SafePath.printable(posters.name)))
            }
        }
        return report
    }

    package static func verifyPack(_ path: String, limits: PackLimits = .standard) -> VerificationReport {
        var report = VerificationReport()
        let name = PathText.lastComponent(path)
        report.packs = 1
        let scan: PackFileScan
        do { scan = try PackFileScan(path: path, limits: limits) } catch {
            report.problems.append(problem(error, pack: name))
            return report
        }
        report.frames = scan.frames.count
        // A posters pack (format 1.2) has its own catalog.
        if let first = try? scan.entry(scan.frames[0], maxSize: limits.maxCatalogBytes), first.header.name == PackCatalog.path,
            let posters = try? PosterPackCatalog.decode(from: first.data)
        {
            PosterPackVerifier.verifyFile(scan, catalog: posters, into: &report)
            if let last = scan.frames.last, let endProblem = EndOfArchiveCheck.problem(path: path, frame: last, pack: name) {
                report.problems.append(endProblem)
            }
            return report
        }
        var catalog: PackCatalog?
        do { catalog = try scan.catalog() } catch { report.problems.append(problem(error, pack: name)) }
        let metadata = Dictionary(
            (catalog?.exercises ?? []).compactMap { $0.gif.map { ($0.sha256, $0) } },
            uniquingKeysWith: { first, _ in first })
        var entries = Set<String>()
        for frame in scan.frames.dropFirst().dropLast() {
            let entry: PackFileScan.Entry
            do { entry = try scan.entry(frame, maxSize: limits.maxGIFBytes) } catch {
                report.problems.append(problem(error, pack: name))
                continue
            }
            let path = SafePath.printable(entry.header.name)
            // A GIF, or (format 1.4) a WebP of a WebP pack.
            let format: ImageFormat = entry.header.name.hasPrefix("images/") ? .webp : .gif
            let prefix = format == .webp ? "images/" : "gifs/", suffix = format == .webp ? ".webp" : ".gif"
            let hash =
                entry.header.name.hasPrefix(prefix) && entry.header.name.hasSuffix(suffix)
                ? String(entry.header.name.dropFirst(prefix.count).dropLast(suffix.count)) : ""
            guard SafePath.isSHA256(hash), entry.header.name == format.entryPath(forSHA256: hash) else {
                report.problems.append(
                    PackRejection(
                        .unlistedEntry, pack: name, entry: path,
                        detail: "not a gifs/<sha256>.gif (or images/<sha256>.webp) entry"))
                continue
            }
            if !entries.insert(hash).inserted {
                report.problems.append(PackRejection(.duplicate, pack: name, entry: path, detail: "the GIF is stored twice"))
            }
            if entry.sha256 != hash {
                report.problems.append(
                    PackRejection(
                        .hashMismatch, pack: name, entry: path,
                        detail: "the data hashes to \(entry.sha256)"))
            }
            if catalog != nil, metadata[hash] == nil {
                report.problems.append(
                    PackRejection(
                        .unlistedEntry, pack: name, entry: path,
                        detail: "no exercise of catalog.json uses this GIF"))
            }
            report.gifs += 1
            report.problems += GIFMetadataCheck.problems(.bytes(entry.data), metadata: metadata[hash], format: format, pack: name, entry: path)
        }
        if let last = scan.frames.last, let endProblem = EndOfArchiveCheck.problem(path: path, frame: last, pack: name) {
            report.problems.append(endProblem)
        }
        if let catalog {
            for exercise in catalog.exercises {
                if !ExerciseID.isValid(exercise.id) {
                    report.problems.append(
                        PackRejection(
                            .unsafeName, pack: name, entry: SafePath.printable(exercise.id),
                            detail: "the exercise id is not 1-64 characters of A-Z a-z 0-9 _ -"))
                }
                if let gif = exercise.gif, !entries.contains(gif.sha256) {
                    report.problems.append(
                        PackRejection(
                            .missingEntry, pack: name, entry: exercise.id,
                            detail: "its GIF \(SafePath.printable(gif.sha256)) is not in the pack"))
                }
            }
        }
        return report
    }

    private static func verify(
        _ pack: PackDescription, source: PackIndexSource, limits: PackLimits,
        into report: inout VerificationReport
    ) {
        report.packs += 1
        let name = SafePath.printable(pack.name)
        guard case .file(let path) = (try? source.packLocation(for: pack)) ?? .url("") else { return }
        guard let size = FileOps.regularFileSize(path) else {
            report.problems.append(PackRejection(.unreadable, pack: name, entry: pack.file, detail: "the pack file is missing"))
            return
        }
        var fileProblem: PackRejection?
        do { try PackDownloader.verify(path, pack: pack) } catch { fileProblem = problem(error, pack: name) }
        // The same check list as an install (PackChecks), every problem collected.
        var found: [PackRejection] = []
        let opened = try? PackChecks.structure(path: path, pack: pack, limits: limits) { problem throws(PackClientError) in
            found.append(problem)
        }
        // The description's problems were listed with the index's (``PackDescriptionCheck/indexProblems(in:limits:)``):
        // the file's checksum first, then the rest.
        let descriptionCount = PackDescriptionCheck.problems(in: pack, limits: limits).count
        if let fileProblem {
            report.problems.append(fileProblem)
            if size != pack.bytes { return }
        }
        report.problems += found.dropFirst(descriptionCount)
        guard let opened else { return }
        report.frames += opened.frames.count
        guard opened.entriesReadable else { return }
        for gif in pack.gifs {
            do {
                let bytes = try IndexedEntry.readAll(
                    gif.location, sha256: gif.sha256, image: gif.imageFormat, side: pack.renditionSide, pack: name,
                    reader: opened.reader)
                report.gifs += 1
                report.problems += GIFMetadataCheck.problems(
                    .bytes(bytes), metadata: opened.metadata?[gif.sha256], format: gif.imageFormat,
                    pack: name, entry: gif.location.path)
            } catch {
                report.problems.append(problem(error, pack: name))
            }
        }
    }

    private static func problem(_ error: PackClientError, pack: String) -> PackRejection {
        if case .rejected(let rejection) = error { return rejection }
        return PackRejection(.unreadable, pack: pack, detail: error.description)
    }
}

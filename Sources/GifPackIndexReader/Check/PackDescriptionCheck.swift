import GifPackFormat

/// Structural checks of one pack's description in an index, made before its file is touched.
///
/// Everything an index says is untrusted: the pack name and file path must be safe names, hashes
/// must be SHA-256 hex, every location must name its expected tar path (`catalog.json`,
/// `gifs/<sha256>.gif`) and lie inside the pack file, sizes must be within ``PackLimits``, GIF
/// hashes and exercise ids must be unique, ids must pass `ExerciseID.isValid` (they become file
/// names) and every exercise's GIF must be one the pack lists. A pack's posters pack (format 1.2)
/// is held to the same kind of rules (``posterProblems(in:of:gifHashes:limits:)``).
///
/// ```swift
/// let problems = PackDescriptionCheck.problems(in: pack, limits: .standard)
/// if let first = problems.first { throw PackClientError.rejected(first) }
/// ```
package enum PackDescriptionCheck {
    /// The rules of a whole index: the one function every reader of an index runs before anything
    /// trusts it (``PackIndexSource``, ``IndexTrust``, the lazy cache) and `gifpack verify` lists
    /// the problems of (``PackVerifier``), so verify approves exactly what the clients accept.
    /// Every pack's description (``problems(in:limits:)``), rendition packs included (format 1.3),
    /// and pack names that appear once; a `packs[]` name is a plain name, a `renditionPacks[]` name
    /// is `<name>.<resolution>` of its own `resolution`; a pack's `resolution`, where present, is
    /// one of `source.resolutions` (with one resolution, `source.resolution`), and that of a
    /// `packs[]` entry is the first, `source.resolution`. Format 1.4: a `formatPacks[]` entry is named
    /// `<name>.<resolution>.<format>` of its own `resolution` (which it has) and `format` (which is
    /// `webp`: the decoder left out the formats it does not know), and has no posters pack; a pack of
    /// `packs[]` or `renditionPacks[]` has no `format` and lists GIFs only; an entry's `format` is
    /// `webp` or absent, and its path `images/<sha256>.webp` or `gifs/<sha256>.gif` accordingly
    /// (``problems(in:limits:)``).
    package static func indexProblems(in index: PackIndex, limits: PackLimits) -> [PackRejection] {
        var problems: [PackRejection] = []
        var names = Set<String>()
        for pack in index.allPacks where !names.insert(pack.name).inserted {
            problems.append(PackRejection(.duplicate, pack: SafePath.printable(pack.name), detail: "the index lists this pack name twice"))
        }
        for pack in index.packs where !ExerciseID.isValid(pack.name) {
            problems.append(
                PackRejection(
                    .unsafeName, pack: SafePath.printable(pack.name),
                    detail: "a pack of packs[] is named 1-64 characters of A-Z a-z 0-9 _ -"))
        }
        for pack in index.renditionPacks ?? [] where ExerciseID.isValid(pack.name) {
            problems.append(
                PackRejection(
                    .unsafeName, pack: SafePath.printable(pack.name),
                    detail: "a rendition pack is named <pack>.<resolution>"))
        }
        for pack in index.gifPacks {
            if let format = pack.format {
                problems.append(
                    PackRejection(
                        .unsafeName, pack: SafePath.printable(pack.name),
                        detail: "a pack of packs[] or renditionPacks[] holds GIFs and has no format, not \"\(SafePath.printable(format.rawValue))\""))
            }
            for gif in pack.gifs where gif.format != nil {
                problems.append(
                    PackRejection(
                        .entryMismatch, pack: SafePath.printable(pack.name), entry: SafePath.printable(gif.location.path),
                        detail: "a pack of packs[] or renditionPacks[] lists GIFs only, not an entry of format \"\(SafePath.printable(gif.format?.rawValue ?? ""))\""))
            }
        }
        for pack in index.formatPacks ?? [] {
            let name = SafePath.printable(pack.name)
            if pack.format == nil || pack.format == .gif {
                problems.append(PackRejection(.unsafeName, pack: name, detail: "a pack of formatPacks[] has a format other than gif (webp)"))
            }
            if pack.resolution == nil {
                problems.append(PackRejection(.invalidNumber, pack: name, detail: "a pack of formatPacks[] has a resolution"))
            }
            if pack.posters != nil {
                problems.append(PackRejection(.unlistedEntry, pack: name, detail: "a pack of formatPacks[] has no posters pack (posters stay the GIFs')"))
            }
        }
        let known = index.source.resolutions ?? index.source.resolution.map { [$0] } ?? []
        for (number, pack) in index.allPacks.enumerated() {
            guard let resolution = pack.resolution else { continue }
            if !known.contains(resolution) {
                problems.append(
                    PackRejection(
                        .invalidNumber, pack: SafePath.printable(pack.name),
                        detail: "resolution \(resolution) is not one of source.resolutions "
                            + "(\(known.map(String.init).joined(separator: ", ")))"))
            } else if number < index.packs.count, let first = index.source.resolution, resolution != first {
                problems.append(
                    PackRejection(
                        .invalidNumber, pack: SafePath.printable(pack.name),
                        detail: "a pack of packs[] is at the first resolution, \(first), not \(resolution)"))
            }
        }
        for pack in index.allPacks { problems += self.problems(in: pack, limits: limits) }
        return problems
    }

    /// A pack name: 1-64 characters of A-Z a-z 0-9 _ -, or (a rendition pack, format 1.3) such a
    /// name, `.` and the pack's own `resolution` (`all.360`), or (a format pack, format 1.4) such a
    /// name, `.`, its `resolution`, `.` and its `format` (`all.180.webp`).
    static func isValidPackName(_ pack: PackDescription) -> Bool {
        if let format = pack.format {
            guard let resolution = pack.resolution, resolution > 0, pack.name.hasSuffix(".\(resolution).\(format.rawValue)") else { return false }
            return ExerciseID.isValid(String(pack.name.dropLast(".\(resolution).\(format.rawValue)".count)))
        }
        if ExerciseID.isValid(pack.name) { return true }
        guard let resolution = pack.resolution, resolution > 0, let dot = pack.name.lastIndex(of: ".") else { return false }
        return pack.name[pack.name.index(after: dot)...] == String(resolution) && ExerciseID.isValid(String(pack.name[..<dot]))
    }

    package static func problems(in pack: PackDescription, limits: PackLimits) -> [PackRejection] {
        var problems: [PackRejection] = []
        func add(_ reason: PackRejection.Reason, _ entry: String?, _ detail: String) {
            problems.append(PackRejection(reason, pack: SafePath.printable(pack.name), entry: entry, detail: detail))
        }
        if !isValidPackName(pack) {
            add(
                .unsafeName, nil,
                "the pack name is not 1-64 characters of A-Z a-z 0-9 _ - (a rendition pack: then . and its resolution; "
                    + "a format pack: then . and its resolution, . and its format)")
        }
        if let (reason, detail) = SafePath.problem(in: pack.file) {
            add(reason, pack.file, detail)
        } else if !isPlainFilePath(pack.file) {
            add(.unsafeName, pack.file, "the pack file path must use only A-Z a-z 0-9 . _ - /")
        }
        if !SafePath.isSHA256(pack.sha256) { add(.unsafeName, nil, "sha256 \"\(SafePath.printable(pack.sha256))\" is not 64 hex digits") }
        if !SafePath.isSHA256(pack.contentDigest) {
            add(.unsafeName, nil, "contentDigest \"\(SafePath.printable(pack.contentDigest))\" is not 64 hex digits")
        }
        if pack.bytes < 0 {
            add(.invalidNumber, nil, "the pack size \(pack.bytes) is negative")
        } else if pack.bytes == 0 || pack.bytes > limits.maxPackBytes {
            add(.oversize, nil, "the pack size \(pack.bytes) is outside 1...\(limits.maxPackBytes)")
        }
        problems += locationProblems(pack.catalog, expectedPath: PackCatalog.path, maxSize: limits.maxCatalogBytes, pack: pack)

        var hashes = Set<String>()
        for gif in pack.gifs {
            guard SafePath.isSHA256(gif.sha256) else {
                add(.unsafeName, SafePath.printable(gif.location.path), "GIF hash \"\(SafePath.printable(gif.sha256))\" is not 64 hex digits")
                continue
            }
            if !hashes.insert(gif.sha256).inserted { add(.duplicate, gif.location.path, "the GIF is listed twice") }
            // Format 1.4: an entry's format is webp or absent (a GIF), and names its path.
            guard gif.format == nil || gif.format == .webp, let expected = gif.expectedPath else {
                add(
                    .entryMismatch, SafePath.printable(gif.location.path),
                    "the entry's format \"\(SafePath.printable(gif.format?.rawValue ?? ""))\" is not webp or absent (a GIF)")
                continue
            }
            problems += locationProblems(gif.location, expectedPath: expected, maxSize: limits.maxGIFBytes, pack: pack)
        }
        if pack.version < 1 { add(.invalidNumber, nil, "version \(pack.version) is not a positive number") }
        if pack.uncompressedBytes < 0 {
            add(.invalidNumber, nil, "uncompressedBytes \(pack.uncompressedBytes) is negative")
        }
        if pack.catalog.frameOffset != 0 {
            add(.entryMismatch, PackCatalog.path, "catalog.json must be the first frame (offset 0), not at \(pack.catalog.frameOffset)")
        }
        // Entries are frames in file order (catalog.json first, GIFs by hash) that never overlap.
        var end: Int64 = 0
        for location in [pack.catalog] + pack.gifs.map(\.location) where location.frameOffset >= 0 && location.frameLength > 0 {
            if location.frameOffset < end {
                add(
                    .badFrame, SafePath.printable(location.path),
                    "frame \(location.frameOffset)+\(location.frameLength) starts before the previous entry's frame ends at \(end)")
            }
            let next = location.frameOffset.addingReportingOverflow(location.frameLength)
            end = next.overflow ? .max : max(end, next.partialValue)
        }
        if pack.entryCount != pack.gifs.count + 1 {
            add(.missingEntry, nil, "entryCount is \(pack.entryCount) but the index lists \(pack.gifs.count + 1) entries")
        }

        // A list sorted by id (as builders write it) has no id twice: the set of ids is made only
        // for one that is not (100,000 ids are megabytes).
        var previous: String?
        let ascending = pack.exercises.allSatisfy { ref in
            defer { previous = ref.id }
            return previous.map { $0 < ref.id } ?? true
        }
        var ids = Set<String>()
        for exercise in pack.exercises {
            guard ExerciseID.isValid(exercise.id) else {
                add(.unsafeName, SafePath.printable(exercise.id), "the exercise id is not 1-64 characters of A-Z a-z 0-9 _ -")
                continue
            }
            if !ascending, !ids.insert(exercise.id).inserted { add(.duplicate, exercise.id, "the exercise is listed twice") }
            if let hash = exercise.gif, !hashes.contains(hash) {
                add(.missingEntry, exercise.id, "its GIF \(SafePath.printable(hash)) is not among the pack's GIFs")
            }
        }
        if let posters = pack.posters { problems += posterProblems(in: posters, of: pack, gifHashes: hashes, limits: limits) }
        return problems
    }

    /// The rules of a pack's posters pack description (format 1.2): named `<pack>-posters`, a safe
    /// plain file path, SHA-256 hex hashes, a size within the limits, sizes 16...512 ascending and
    /// distinct, `catalog.json` the first frame, and one `posters/<size>/<sha256>.gif` entry per
    /// listed size and GIF of the pack, frames in order without overlap.
    package static func posterProblems(
        in posters: PosterPackDescription, of pack: PackDescription, gifHashes: Set<String>,
        limits: PackLimits
    ) -> [PackRejection] {
        var problems: [PackRejection] = []
        func add(_ reason: PackRejection.Reason, _ entry: String?, _ detail: String) {
            problems.append(PackRejection(reason, pack: SafePath.printable(posters.name), entry: entry, detail: detail))
        }
        if posters.name != "\(pack.name)-posters" {
            add(.unsafeName, nil, "the posters pack of \(SafePath.printable(pack.name)) must be named \(SafePath.printable(pack.name))-posters")
        }
        if let (reason, detail) = SafePath.problem(in: posters.file) {
            add(reason, SafePath.printable(posters.file), detail)
        } else if !isPlainFilePath(posters.file) {
            add(.unsafeName, SafePath.printable(posters.file), "the pack file path must use only A-Z a-z 0-9 . _ - /")
        }
        for (label, hash) in [("sha256", posters.sha256), ("contentDigest", posters.contentDigest)] where !SafePath.isSHA256(hash) {
            add(.unsafeName, nil, "\(label) \"\(SafePath.printable(hash))\" is not 64 hex digits")
        }
        if posters.bytes <= 0 || posters.bytes > limits.maxPackBytes {
            add(posters.bytes < 0 ? .invalidNumber : .oversize, nil, "the pack size \(posters.bytes) is outside 1...\(limits.maxPackBytes)")
        }
        if posters.version < 1 { add(.invalidNumber, nil, "version \(posters.version) is not a positive number") }
        if posters.sizes.isEmpty || posters.sizes.contains(where: { !(16...512).contains($0) }) || Set(posters.sizes).count != posters.sizes.count {
            add(.invalidNumber, nil, "sizes \(posters.sizes) must be distinct longest sides in 16...512")
        }
        problems += locationProblems(
            posters.catalog, expectedPath: PackCatalog.path, maxSize: limits.maxCatalogBytes,
            packName: posters.name, packBytes: posters.bytes)
        if posters.catalog.frameOffset != 0 {
            add(.entryMismatch, PackCatalog.path, "catalog.json must be the first frame (offset 0), not at \(posters.catalog.frameOffset)")
        }
        let sizes = Set(posters.sizes)
        var seen = Set<String>()
        var end: Int64 = max(0, posters.catalog.frameOffset) &+ max(0, posters.catalog.frameLength)
        for location in posters.posters {
            var entry: String { SafePath.printable(location.path) }
            let parts = location.path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "posters", let size = Int(parts[1]), sizes.contains(size),
                parts[2].hasSuffix(".gif"), case let hash = String(parts[2].dropLast(4)), gifHashes.contains(hash),
                location.path == PosterPackDescription.path(size: size, sha256: hash)
            else {
                add(.unlistedEntry, entry, "not a posters/<size>/<sha256>.gif entry of one of the pack's GIFs at one of its sizes")
                continue
            }
            if !seen.insert(location.path).inserted { add(.duplicate, entry, "the poster is listed twice") }
            problems += locationProblems(
                location, expectedPath: location.path, maxSize: limits.maxGIFBytes,
                packName: posters.name, packBytes: posters.bytes)
            if location.frameOffset >= 0, location.frameLength > 0 {
                if location.frameOffset < end {
                    add(.badFrame, entry, "frame \(location.frameOffset)+\(location.frameLength) starts before the previous entry's frame ends at \(end)")
                }
                let next = location.frameOffset.addingReportingOverflow(location.frameLength)
                end = next.overflow ? .max : max(end, next.partialValue)
            }
        }
        if problems.isEmpty, seen.count != sizes.count * gifHashes.count {
            add(.missingEntry, nil, "the posters pack lists \(seen.count) posters; the pack's \(gifHashes.count) GIFs at \(sizes.count) size(s) need \(sizes.count * gifHashes.count)")
        }
        if posters.entryCount != posters.posters.count + 1 {
            add(.missingEntry, nil, "entryCount is \(posters.entryCount) but the index lists \(posters.posters.count + 1) entries")
        }
        return problems
    }

    /// Problems with one entry location: a safe path equal to `expectedPath`, a size within
    /// `0...maxSize`, and a frame range inside the file.
    static func locationProblems(
        _ location: EntryLocation, expectedPath: String, maxSize: Int64,
        pack: PackDescription
    ) -> [PackRejection] {
        locationProblems(location, expectedPath: expectedPath, maxSize: maxSize, packName: pack.name, packBytes: pack.bytes)
    }

    static func locationProblems(
        _ location: EntryLocation, expectedPath: String, maxSize: Int64,
        packName: String, packBytes: Int64
    ) -> [PackRejection] {
        let pack = (name: packName, bytes: packBytes)
        // Escaped for messages only when there is one to write (most entries have none).
        var name: String { SafePath.printable(pack.name) }
        var entry: String { SafePath.printable(location.path) }
        if let (reason, detail) = SafePath.problem(in: location.path) {
            return [PackRejection(reason, pack: name, entry: entry, detail: detail)]
        }
        var problems: [PackRejection] = []
        if location.path != expectedPath {
            problems.append(
                PackRejection(
                    .entryMismatch, pack: name, entry: entry,
                    detail: "the index names this entry \(entry), expected \(expectedPath)"))
        }
        if location.size < 0 {
            problems.append(PackRejection(.invalidNumber, pack: name, entry: entry, detail: "size \(location.size) is negative"))
        } else if location.size > maxSize {
            problems.append(
                PackRejection(
                    .oversize, pack: name, entry: entry,
                    detail: "size \(location.size) is outside the allowed 0...\(maxSize)"))
        }
        let end = location.frameOffset.addingReportingOverflow(location.frameLength)
        if location.frameOffset < 0 || location.frameLength <= 0 {
            problems.append(
                PackRejection(
                    .invalidNumber, pack: name, entry: entry,
                    detail: "frame \(location.frameOffset)+\(location.frameLength): a negative offset or a length below 1"))
        } else if end.overflow || end.partialValue > pack.bytes {
            problems.append(
                PackRejection(
                    .missingEntry, pack: name, entry: entry,
                    detail: "frame \(location.frameOffset)+\(location.frameLength) lies outside the \(pack.bytes)-byte pack"))
        }
        return problems
    }

    /// Letters, digits, `.`, `_`, `-` and `/` only: safe both as a relative file path and inside a URL.
    static func isPlainFilePath(_ path: String) -> Bool {
        path.utf8.allSatisfy { byte in
            ExerciseID.isValid(String(decoding: [byte], as: UTF8.self)) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/")
        }
    }
}

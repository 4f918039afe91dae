import Crypto
import Foundation
import GifPackGIF

/// Makes a pack's companion posters pack, `<pack>-posters` (format 1.2), or finds that the
/// one written before is current.
///
/// Its first entry is `catalog.json` (canonical JSON: sorted keys, no whitespace, trailing newline)
/// listing every poster by path with its own SHA-256, the GIF it shows and its size; the SHA-256 of
/// that catalog is the content digest. Then one entry per poster, `posters/<size>/<gif sha256>.gif`,
/// sorted by path, each its own zstd frame. Versions and names follow the pack's rules
/// (``PackMaker``): a posters pack in either index with the same digest whose file is there is
/// current and nothing is written; otherwise the file is assembled under a temporary name, fsynced and
/// named `packs/<pack>-posters-v<N>-<sha8>.tar.zst` by ``PackMaker/place(_:summary:pack:outputDirectory:referenced:recorded:)``
/// (same bytes, same name; a name is never given to other bytes).
///
/// ```swift
/// let maker = PosterPackMaker(outputDirectory: "dist", frames: frames, placeholders: placeholders)
/// let (posters, outcome) = try maker.make(pack: "chest", gifHashes: hashes, references: [], recorded: [])
/// ```
struct PosterPackMaker: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let placeholders: PlaceholderCache

    static func name(forPack pack: String) -> String { "\(pack)-posters" }

    /// `references`: the posters pack of this pack in the output directory's index and in
    /// `--previous-index`; `recorded`: the versions of it the state recorded.
    func make(pack: String, gifHashes: [String], references: [PosterPackDescription], recorded: [WrittenPack])
        throws -> (PosterPackDescription, PackMaker.Outcome)
    {
        let name = Self.name(forPack: pack)
        let sizes = placeholders.settings.posterSizes
        // `fresh`: derived by this process, its digest, length and frame known first-hand.
        var items: [(path: String, source: String, size: Int, gif: String, fresh: PosterFrameCache.Fresh?)] = []
        for size in sizes {
            for hash in Set(gifHashes) {
                items.append(
                    (
                        PosterPackDescription.path(size: size, sha256: hash),
                        placeholders.posterPath(sha256: hash, size: size), size, hash,
                        placeholders.posterFrames?.fresh(gifSHA256: hash, size: size)
                    ))
            }
        }
        items.sort { $0.path < $1.path }

        var catalog = Array(#"{"formatVersion":"#.utf8)
        CanonicalJSON.appendString(FormatVersion.withoutRenditions.description, to: &catalog)
        catalog += Array(#","pack":"#.utf8)
        CanonicalJSON.appendString(name, to: &catalog)
        catalog += Array(#","posters":["#.utf8)
        for (position, item) in items.enumerated() {
            let (count, hash): (Int, String)
            if let fresh = item.fresh {
                (count, hash) = (fresh.bytes, fresh.sha256)
            } else {
                let bytes = try checkedPoster(item.source, size: item.size, gifSHA256: item.gif)
                (count, hash) = (bytes.count, Hex.lowercase(SHA256.hash(data: bytes)))
            }
            if position > 0 { catalog.append(UInt8(ascii: ",")) }
            catalog += Array(#"{"bytes":\#(count),"gif":"\#(item.gif)","path":"\#(item.path)","sha256":"\#(hash)","size":\#(item.size)}"#.utf8)
        }
        catalog += Array(#"],"sizes":[\#(sizes.map(String.init).joined(separator: ","))]}"#.utf8)
        catalog.append(0x0A)
        let digest = Hex.lowercase(SHA256.hash(data: catalog))

        let current =
            references
            .filter { $0.contentDigest == digest && FileSystem.fileSize("\(outputDirectory)/\($0.file)") == $0.bytes }
            .max { $0.version < $1.version }
        if let current { return (current, .unchanged) }

        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let temporary = FileSystem.temporaryPath(beside: "\(outputDirectory)/packs/\(name).tar.zst")
        let summary: PackFileSummary
        let version: Int
        let file: String
        let outcome: PackMaker.Outcome
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendEntry(name: PackCatalog.path, bytes: catalog)
            for item in items {
                // A poster derived here was compressed as it was derived; any other is compressed now.
                if let fresh = item.fresh {
                    try assembler.appendFrame(
                        copyingFrom: fresh.framePath, uncompressedLength: fresh.entryLength,
                        trustedEntry: (item.path, Int64(fresh.bytes)))
                } else {
                    try assembler.appendEntry(name: item.path, sourcePath: item.source)
                }
            }
            summary = try assembler.finish()
            (version, file, outcome) = try PackMaker.place(
                temporary, summary: summary, pack: name,
                outputDirectory: outputDirectory,
                referenced: references.map(\.written), recorded: recorded)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
        guard let catalogEntry = summary.entries.first else { throw PackMakerError.unexpectedLayout(file) }
        func location(_ entry: PackedEntry) -> EntryLocation {
            EntryLocation(path: entry.name, size: entry.size, frameOffset: entry.frameOffset, frameLength: entry.frameLength)
        }
        let description = PosterPackDescription(
            name: name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
            entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
            sizes: sizes, catalog: location(catalogEntry), posters: summary.entries.dropFirst().map(location))
        return (description, outcome)
    }
}

extension PosterPackMaker {
    /// The cached poster's bytes, once they decode as a one-frame GIF whose longest side is at most
    /// `size`. A poster that does not (damaged in the cache: cache files are not fsynced) is derived
    /// again from the blob before anything is packed, so a broken poster never enters a posters pack.
    func checkedPoster(_ path: String, size: Int, gifSHA256 hash: String) throws -> [UInt8] {
        func usable(_ bytes: [UInt8]?) -> Bool {
            guard let bytes, let info = try? GIFInspector.inspect(bytes: bytes) else { return false }
            return info.frameCount == 1 && max(info.width, info.height) <= size
        }
        if let bytes = try FileSystem.readAll(path), usable(bytes) { return bytes }
        placeholders.forget(sha256: hash)
        _ = try placeholders.ensure(sha256: hash, blobPath: frames.layout.blobPath(sha256: hash))
        guard let bytes = try FileSystem.readAll(path), usable(bytes) else { throw PosterPackError.missingPoster(path) }
        return bytes
    }
}

enum PosterPackError: Error, CustomStringConvertible {
    case missingPoster(String)

    var description: String {
        switch self {
        case .missingPoster(let path): "the cached poster \(path) is missing or does not decode, even derived again"
        }
    }
}

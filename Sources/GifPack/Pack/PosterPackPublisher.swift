import Crypto
import Foundation

/// Publishes a pack's companion posters pack, `<pack>-posters` (format 1.1), or finds that the
/// published one is current.
///
/// Its first entry is `catalog.json` (canonical JSON: sorted keys, no whitespace, trailing newline)
/// listing every poster by path with its own SHA-256, the GIF it shows and its size; the SHA-256 of
/// that catalog is the content digest, and the versioning rules are the pack's: equal digest and the
/// file still there, nothing is written; otherwise version N+1 is assembled under a temporary name,
/// fsynced and renamed into `packs/<pack>-posters-v<N+1>.tar.zst`. Then one entry per poster,
/// `posters/<size>/<gif sha256>.gif`, sorted by path, each its own zstd frame.
///
/// ```swift
/// let publisher = PosterPackPublisher(outputDirectory: "dist", frames: frames, placeholders: placeholders)
/// let (posters, outcome) = try publisher.publish(pack: "chest", gifHashes: hashes, previous: nil)
/// ```
struct PosterPackPublisher: Sendable {
    let outputDirectory: String
    let frames: FrameCache
    let placeholders: PlaceholderCache

    static func name(forPack pack: String) -> String { "\(pack)-posters" }

    func publish(pack: String, gifHashes: [String], previous: PosterPackDescription?)
        throws -> (PosterPackDescription, PackPublisher.Outcome) {
        let name = Self.name(forPack: pack)
        let sizes = placeholders.settings.posterSizes
        var items: [(path: String, source: String, size: Int, gif: String)] = []
        for size in sizes {
            for hash in Set(gifHashes) {
                items.append((PosterPackDescription.path(size: size, sha256: hash),
                              placeholders.posterPath(sha256: hash, size: size), size, hash))
            }
        }
        items.sort { $0.path < $1.path }

        var catalog = Array(#"{"formatVersion":"#.utf8)
        CanonicalJSON.appendString(FormatVersion.current.description, to: &catalog)
        catalog += Array(#","pack":"#.utf8)
        CanonicalJSON.appendString(name, to: &catalog)
        catalog += Array(#","posters":["#.utf8)
        for (position, item) in items.enumerated() {
            guard let bytes = try FileSystem.readAll(item.source) else {
                throw PosterPackError.missingPoster(item.path)
            }
            let hash = Hex.lowercase(SHA256.hash(data: bytes))
            if position > 0 { catalog.append(UInt8(ascii: ",")) }
            catalog += Array(#"{"bytes":\#(bytes.count),"gif":"\#(item.gif)","path":"\#(item.path)","sha256":"\#(hash)","size":\#(item.size)}"#.utf8)
        }
        catalog += Array(#"],"sizes":[\#(sizes.map(String.init).joined(separator: ","))]}"#.utf8)
        catalog.append(0x0A)
        let digest = Hex.lowercase(SHA256.hash(data: catalog))

        if let previous, previous.contentDigest == digest,
           FileSystem.fileSize("\(outputDirectory)/\(previous.file)") == previous.bytes {
            return (previous, .unchanged)
        }
        let version = (previous?.version ?? 0) + 1
        let file = "packs/\(name)-v\(version).tar.zst"
        let finalPath = "\(outputDirectory)/\(file)"
        try FileSystem.createDirectory("\(outputDirectory)/packs")
        let temporary = FileSystem.temporaryPath(beside: finalPath)
        let summary: PackFileSummary
        do {
            var assembler = try PackAssembler(path: temporary, level: frames.level, mtime: frames.mtime)
            try assembler.appendEntry(name: PackCatalog.path, bytes: catalog)
            for item in items { try assembler.appendEntry(name: item.path, sourcePath: item.source) }
            summary = try assembler.finish()
            try FileSystem.publish(temporary, as: finalPath)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
        guard let catalogEntry = summary.entries.first else { throw PackPublishError.unexpectedLayout(file) }
        func location(_ entry: PackedEntry) -> EntryLocation {
            EntryLocation(path: entry.name, size: entry.size, frameOffset: entry.frameOffset, frameLength: entry.frameLength)
        }
        let description = PosterPackDescription(
            name: name, version: version, file: file, bytes: summary.bytes, sha256: summary.sha256,
            entryCount: summary.entries.count, uncompressedBytes: summary.uncompressedBytes, contentDigest: digest,
            sizes: sizes, catalog: location(catalogEntry), posters: summary.entries.dropFirst().map(location))
        return (description, .published)
    }
}

enum PosterPackError: Error, CustomStringConvertible {
    case missingPoster(String)

    var description: String {
        switch self {
        case .missingPoster(let path): "the cached poster for \(path) is missing"
        }
    }
}

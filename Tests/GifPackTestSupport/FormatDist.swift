import GIFSynthesis
import Foundation
import GifPackFormat
import GifPackGIF

/// WebP containers written by hand, chunk by chunk (Google's "WebP Container Specification"), for
/// the structural check's tests and the 1.4 dists below: a test can make what no encoder would
/// (a frame past the canvas, a size that runs past the end). The bitstream chunks carry a valid
/// `VP8L` or `VP8 ` header of the frame's size followed by filler bytes: the structure is real,
/// the pixels are not decodable.
enum HandWebP {
    /// One chunk: its four-character code, its little-endian size, its data and a pad byte when odd.
    static func chunk(_ code: String, _ data: [UInt8]) -> [UInt8] {
        precondition(code.utf8.count == 4)
        return Array(code.utf8) + le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
    }

    /// `RIFF`, the size of what follows, `WEBP`, then the chunks.
    static func riff(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = Array(chunks.joined())
        return Array("RIFF".utf8) + le32(body.count + 4) + Array("WEBP".utf8) + body
    }

    /// A `VP8L` chunk for a `width`×`height` image: the signature byte, the 14-bit sizes, version 0, then filler.
    static func vp8l(width: Int, height: Int, alpha: Bool = false, filler: Int = 9) -> [UInt8] {
        let bits = UInt32(width - 1) | UInt32(height - 1) << 14 | (alpha ? 1 << 28 : 0)
        return chunk("VP8L", [0x2F] + le32(Int(bits)) + [UInt8](repeating: 0x5A, count: filler))
    }

    /// A `VP8 ` (lossy) chunk: a key frame's tag, the start code, the 14-bit sizes, then filler.
    static func vp8(width: Int, height: Int, filler: Int = 12) -> [UInt8] {
        let firstPartition = 10
        let tag = UInt32(0) | 0 << 1 | 1 << 4 | UInt32(firstPartition) << 5  // key frame, version 0, shown
        let header: [UInt8] = [
            UInt8(tag & 0xFF), UInt8(tag >> 8 & 0xFF), UInt8(tag >> 16 & 0xFF), 0x9D, 0x01, 0x2A,
            UInt8(width & 0xFF), UInt8(width >> 8 & 0x3F), UInt8(height & 0xFF), UInt8(height >> 8 & 0x3F)
        ]
        return chunk("VP8 ", header + [UInt8](repeating: 0xA5, count: filler))
    }

    /// A `VP8X` chunk: the flags (animation, alpha) and the canvas size.
    static func vp8x(width: Int, height: Int, animation: Bool, alpha: Bool = false) -> [UInt8] {
        let flags: UInt8 = (animation ? 0x02 : 0) | (alpha ? 0x10 : 0)
        return chunk("VP8X", [flags, 0, 0, 0] + le24(width - 1) + le24(height - 1))
    }

    /// An `ANIM` chunk: background colour and loop count (0: forever).
    static func anim(loopCount: Int, background: UInt32 = 0xFFFF_FFFF) -> [UInt8] {
        chunk("ANIM", le32(Int(background)) + [UInt8(loopCount & 0xFF), UInt8(loopCount >> 8 & 0xFF)])
    }

    /// An `ANMF` chunk: the frame's offset (even), size and duration, then its image chunks.
    static func anmf(x: Int = 0, y: Int = 0, width: Int, height: Int, duration: Int, image: [UInt8]) -> [UInt8] {
        chunk("ANMF", le24(x / 2) + le24(y / 2) + le24(width - 1) + le24(height - 1) + le24(duration) + [0x00] + image)
    }

    /// An animated WebP of `frames` full-canvas frames of `delay` ms each, lossless and lossy in
    /// turn (`seed` varies the filler, so equal sizes need not give equal bytes).
    static func animated(width: Int, height: Int, frames: Int, delay: Int = 100, loopCount: Int = 0, seed: Int = 0) -> [UInt8] {
        riff(
            [vp8x(width: width, height: height, animation: true), anim(loopCount: loopCount)]
                + (0..<frames).map { frame in
                    anmf(
                        width: width, height: height, duration: delay,
                        image: frame % 2 == 0
                            ? vp8l(width: width, height: height, filler: 9 + frame + seed)
                            : vp8(width: width, height: height, filler: 12 + frame + seed))
                })
    }

    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le24(_ value: Int) -> [UInt8] { (0..<3).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
}

/// One image of a pack written by hand: its bytes, its format (nil: a GIF) and what a catalog records of it.
struct HandImage: Sendable {
    var bytes: [UInt8]
    var format: ImageFormat?
    var width: Int
    var height: Int
    var frames: Int
    var durationMilliseconds: Int
    var loopCount: Int?

    var sha256: String { sha256Hex(bytes) }

    /// A GIF, its metadata read by the GIF inspector.
    static func gif(_ bytes: [UInt8]) throws -> HandImage {
        let info = try GIFInspector.inspect(bytes: bytes)
        return HandImage(
            bytes: bytes, format: nil, width: info.width, height: info.height, frames: info.frameCount,
            durationMilliseconds: info.durationMilliseconds, loopCount: info.loopCount)
    }

    /// A hand-made animated WebP (``HandWebP/animated(width:height:frames:delay:loopCount:seed:)``).
    static func webp(width: Int, height: Int, frames: Int, delay: Int = 100, loopCount: Int = 0, seed: Int = 0) -> HandImage {
        HandImage(
            bytes: HandWebP.animated(width: width, height: height, frames: frames, delay: delay, loopCount: loopCount, seed: seed),
            format: .webp,
            width: width, height: height, frames: frames, durationMilliseconds: frames * delay, loopCount: loopCount)
    }

    var metadata: GIFMetadata {
        GIFMetadata(
            sha256: sha256, bytes: Int64(bytes.count), width: width, height: height, frames: frames,
            durationMilliseconds: durationMilliseconds, loopCount: loopCount, format: format)
    }
}

/// A pack written by hand in the format's layout (one zstd frame per tar entry, entries by hash,
/// the end-of-archive frame), its description filled in as a builder would: `all` of GIFs, or
/// (format 1.4) `all.180.webp` of WebPs and the GIFs standing in for some.
struct HandPack {
    var name: String
    var version = 1
    var resolution: Int?
    var format: ImageFormat?
    /// Exercise ids in order and their image (nil: no GIF).
    var exercises: [(id: String, image: HandImage?)]

    /// Writes `packs/<name>-v<version>-<sha8>.tar.zst` under `directory`; returns its description.
    func write(into directory: String, source: SourceDescription) throws -> PackDescription {
        let catalog = try PackCatalog(
            pack: name, source: SourceDescription(kind: source.kind, baseURL: nil, resolution: source.resolution),
            exercises: exercises.map { PackExercise(id: $0.id, name: "exercise \($0.id)", gif: $0.image?.metadata, data: .object([:])) }
        )
        .encoded()
        let catalogEntry = RawPack.entry(header: RawPack.header(name: PackCatalog.path, size: catalog.count), data: catalog)
        var file = RawPack.frame(catalogEntry)
        var uncompressed = Int64(catalogEntry.count)
        let catalogLocation = EntryLocation(path: PackCatalog.path, size: Int64(catalog.count), frameOffset: 0, frameLength: Int64(file.count))
        var images: [String: HandImage] = [:]
        for case let image? in exercises.map(\.image) { images[image.sha256] = image }
        var entries: [GIFEntry] = []
        for (hash, image) in images.sorted(by: { $0.key < $1.key }) {
            let path = (image.format ?? .gif).entryPath(forSHA256: hash) ?? "images/\(hash).\(image.format?.rawValue ?? "bin")"
            let content = RawPack.entry(header: RawPack.header(name: path, size: image.bytes.count), data: image.bytes)
            let frame = RawPack.frame(content)
            entries.append(
                GIFEntry(
                    sha256: hash,
                    location: EntryLocation(
                        path: path, size: Int64(image.bytes.count), frameOffset: Int64(file.count),
                        frameLength: Int64(frame.count)),
                    format: image.format))
            file += frame
            uncompressed += Int64(content.count)
        }
        file += RawPack.endOfArchive
        uncompressed += 1024
        let sha = sha256Hex(file)
        let relative = "packs/\(name)-v\(version)-\(sha.prefix(8)).tar.zst"
        try FileManager.default.createDirectory(atPath: "\(directory)/packs", withIntermediateDirectories: true)
        try Data(file).write(to: URL(fileURLWithPath: "\(directory)/\(relative)"))
        var pack = PackDescription(
            name: name, version: version, file: relative, bytes: Int64(file.count), sha256: sha, entryCount: entries.count + 1,
            uncompressedBytes: uncompressed, contentDigest: sha256Hex(catalog), catalog: catalogLocation, gifs: entries,
            exercises: exercises.map { ExerciseRef(id: $0.id, gif: $0.image?.sha256) })
        pack.resolution = resolution
        pack.format = format
        return pack
    }
}

/// A format 1.4 dist written by hand: `all` in `packs[]`, of GIFs, and its WebP rendition
/// `all.180.webp` in `formatPacks[]`, in which every exercise has its WebP except those in
/// `gifStandsIn` (listed with their GIF, as when the WebP could not beat it) and those without a GIF.
struct FormatDist {
    let directory: String
    let index: PackIndex
    /// Exercise id → its GIF (nil: none).
    let gifs: [String: HandImage?]
    /// Exercise id → what the WebP pack lists for it (a WebP, or the GIF standing in).
    let webpPackImages: [String: HandImage?]
    var ids: [String] { gifs.keys.sorted() }
    var gifPack: PackDescription { index.packs[0] }
    var webpPack: PackDescription { index.formatPacks![0] }

    /// `count` exercises `0000`…, 180 px GIFs of 2–4 frames; `noGIF` positions have none.
    static func write(
        to directory: String, count: Int = 4, noGIF: Set<Int> = [], gifStandsIn: Set<Int> = [],
        withFormats: Bool = true
    ) throws -> FormatDist {
        var gifs: [String: HandImage?] = [:], webps: [String: HandImage?] = [:]
        var rows: [(String, HandImage?)] = [], webpRows: [(String, HandImage?)] = []
        for position in 0..<count {
            let id = String(format: "%04d", position)
            var gif: HandImage?, webp: HandImage?
            if !noGIF.contains(position) {
                let frames = 2 + position % 3
                let image = try HandImage.gif(GIFSynthesizer.animatedGIF(width: 180, height: 180, frames: frames, colors: 4, seed: UInt64(4700 + position)))
                gif = image
                webp =
                    gifStandsIn.contains(position)
                    ? image
                    : HandImage.webp(
                        width: 180, height: 180, frames: image.frames, delay: image.durationMilliseconds / max(1, image.frames),
                        loopCount: image.loopCount ?? 0, seed: position)
            }
            gifs[id] = gif
            webps[id] = webp
            rows.append((id, gif))
            webpRows.append((id, webp))
        }
        let source = SourceDescription(kind: "exercisedb-v1", baseURL: nil, resolution: 180, formats: withFormats ? [.gif, .webp] : nil)
        let all = try HandPack(name: "all", exercises: rows).write(into: directory, source: source)
        let formatPacks =
            withFormats
            ? [try HandPack(name: "all.180.webp", resolution: 180, format: .webp, exercises: webpRows).write(into: directory, source: source)] : []
        let index = PackIndex(generator: "hand", source: source, packs: [all], formatPacks: formatPacks)
        try index.encoded().write(to: URL(fileURLWithPath: directory + "/index.json"))
        return FormatDist(directory: directory, index: index, gifs: gifs, webpPackImages: webps)
    }

    /// Writes `index` as the dist's index.json (a test's changed copy).
    func rewrite(_ index: PackIndex) throws {
        try index.encoded().write(to: URL(fileURLWithPath: directory + "/index.json"))
    }
}

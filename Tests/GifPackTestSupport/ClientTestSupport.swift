import CZstd
import Foundation
import GifPackFormat
import GifPackGIF
import Glibc
import Testing

struct ClientTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sorted directory entries; empty when the directory does not exist.
enum DirectoryListing {
    static func names(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

func fileBytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// inode number and modification time of a file; a missing file throws (two missing files must
/// not compare as the same one).
func fileIdentity(_ path: String) throws -> (inode: UInt64, mtime: Int) {
    var info = stat()
    guard stat(path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return (UInt64(info.st_ino), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec)
}

/// Every path under the cache (through its link), with its type and content digest, and the link
/// target itself: two equal snapshots mean nothing in the cache changed.
func treeSnapshot(_ cache: String) throws -> [String] {
    var lines: [String] = []
    lines.append("link -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: cache)) ?? "none"))
    let root = URL(fileURLWithPath: cache).resolvingSymlinksInPath().path
    let names = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted()
    for name in names {
        let path = "\(root)/\(name)"
        var info = stat()
        lstat(path, &info)
        let identity = try fileIdentity(path)
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            lines.append("\(name) file \(sha256Hex(try fileBytes(path))) inode \(identity.inode) mtime \(identity.mtime)")
        case S_IFDIR: lines.append("\(name) dir")
        default: lines.append("\(name) other \(info.st_mode)")
        }
    }
    return lines
}

/// Raw pack bytes for hostile-pack tests: ustar headers written by hand and zstd frames made with
/// libzstd directly, so the tests can produce what the builder never would.
enum RawPack {
    /// A ustar header block with a valid checksum.
    static func header(name: String, size: Int, typeflag: UInt8 = UInt8(ascii: "0"), linkName: String = "") -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, _ offset: Int, _ length: Int) {
            for (index, byte) in text.utf8.prefix(length).enumerated() { block[offset + index] = byte }
        }
        func octal(_ value: Int, _ offset: Int, _ length: Int) {
            put(String(String(value, radix: 8).suffix(length - 1)).leftPadded(to: length - 1), offset, length - 1)
        }
        put(name, 0, 100)
        octal(0o644, 100, 8)
        octal(0, 108, 8)
        octal(0, 116, 8)
        octal(size, 124, 12)
        octal(1_700_000_000, 136, 12)
        block[156] = typeflag
        put(linkName, 157, 100)
        put("ustar", 257, 6)
        put("00", 263, 2)
        for index in 148..<156 { block[index] = 0x20 }
        let sum = block.reduce(0) { $0 + Int($1) }
        put(String(sum, radix: 8).leftPadded(to: 6), 148, 6)
        block[154] = 0
        block[155] = 0x20
        return block
    }

    /// Header, data and zero padding to a multiple of 512.
    static func entry(header: [UInt8], data: [UInt8]) -> [UInt8] {
        header + data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    /// One zstd frame with a content checksum, declaring its content size unless told not to.
    static func frame(_ content: [UInt8], declareSize: Bool = true) -> [UInt8] {
        let context = ZSTD_createCCtx()
        defer { ZSTD_freeCCtx(context) }
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, declareSize ? 1 : 0)
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(content.count))
        let written = output.withUnsafeMutableBytes { out in
            content.withUnsafeBytes { input in ZSTD_compress2(context, out.baseAddress, out.count, input.baseAddress, input.count) }
        }
        precondition(ZSTD_isError(written) == 0)
        return Array(output[0..<written])
    }

    /// A decompression bomb: `content` compressed without a size, then its frame header rewritten
    /// to declare only `declared` bytes.
    static func lyingFrame(_ content: [UInt8], declared: Int) -> [UInt8] {
        var frame = frame(content, declareSize: false)
        let descriptor = frame[4]
        precondition(descriptor & 0xE3 == 0, "expected a frame without content size, single segment or dictionary")
        frame[4] = descriptor | 0x80  // Frame_Content_Size_flag 2: a 4-byte field after the window descriptor
        frame.insert(contentsOf: withUnsafeBytes(of: UInt32(declared).littleEndian, Array.init), at: 6)
        return frame
    }

    static let endOfArchive = frame([UInt8](repeating: 0, count: 1024))

    /// One entry of a pack ``write(_:to:)`` wrote: its name, data size and zstd frame's byte range.
    struct WrittenEntry: Equatable {
        let name: String
        let size: Int64
        let frameOffset: Int64
        let frameLength: Int64
    }

    /// Writes a well-formed pack to `path`, laid out as the builder lays one out: each entry a zstd
    /// frame of its own, then the end-of-archive frame. Returns the file's size and its entries.
    static func write(_ entries: [(name: String, bytes: [UInt8])], to path: String) throws -> (bytes: Int64, entries: [WrittenEntry]) {
        var file: [UInt8] = []
        var written: [WrittenEntry] = []
        for (name, bytes) in entries {
            let frame = frame(entry(header: header(name: name, size: bytes.count), data: bytes))
            written.append(WrittenEntry(name: name, size: Int64(bytes.count), frameOffset: Int64(file.count), frameLength: Int64(frame.count)))
            file += frame
        }
        file += endOfArchive
        try Data(file).write(to: URL(fileURLWithPath: path))
        return (Int64(file.count), written)
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}

/// A forged pack plus an index that lists it, as an attacker who controls both would write them.
///
/// Starts as an honest pack of `gifs` (exercise `e<i>` uses GIF i); a test changes entries (header,
/// frame, what the index says) or adds frames before ``write(to:)``. The catalog and the index are
/// made consistent with whatever the index claims, and the index carries the real file size and
/// SHA-256, so only the content checks can catch the forgery.
struct ForgedPack {
    struct Entry {
        var data: [UInt8]
        var sha256: String
        /// The tar path the index gives.
        var indexPath: String
        /// The size the index (and catalog) give.
        var indexSize: Int
        /// The tar header written (default: a regular file at `indexPath` of `data.count` bytes).
        var header: [UInt8]?
        /// The whole frame written (default: the entry compressed honestly).
        var frame: [UInt8]?
    }

    var name = "evil"
    var entries: [Entry]
    var extraFrames: [[UInt8]] = []
    /// Replaces the end-of-archive frame (1024 zero bytes) when set.
    var endFrame: [UInt8]?
    /// Raw JSON text written as the first exercise's `data` in catalog.json (default `{}`).
    var firstExerciseData: String?
    /// Exercise ids and the entry index each uses (nil: no GIF).
    var exercises: [(id: String, entry: Int?)]
    /// Overrides the pack SHA-256 the index gives.
    var indexSHA256: String?

    init(gifs: [[UInt8]]) {
        entries = gifs.map { gif in
            let hash = sha256Hex(gif)
            return Entry(data: gif, sha256: hash, indexPath: "gifs/\(hash).gif", indexSize: gif.count)
        }
        exercises = gifs.indices.map { ("e\($0)", $0) }
    }

    /// Writes `<directory>/packs/<name>-v1.tar.zst` and `<directory>/index.json`; returns the index path.
    func write(to directory: String) throws -> String {
        let placeholder = "@@first-exercise-data@@"
        let catalogExercises = exercises.enumerated().map { position, exercise in
            PackExercise(
                id: exercise.id, name: "exercise \(exercise.id)",
                gif: exercise.entry.map { index in
                    // The GIF's real metadata where it decodes (install and verify compare it).
                    let info = try? GIFInspector.inspect(bytes: entries[index].data)
                    return GIFMetadata(
                        sha256: entries[index].sha256, bytes: Int64(entries[index].indexSize),
                        width: info?.width ?? 1, height: info?.height ?? 1, frames: info?.frameCount ?? 1,
                        durationMilliseconds: info?.durationMilliseconds ?? 0, loopCount: info?.loopCount)
                }, data: position == 0 && firstExerciseData != nil ? .string(placeholder) : .object([:]))
        }
        var catalog = try PackCatalog(
            pack: name, source: SourceDescription(kind: "forged", baseURL: nil, resolution: 180),
            exercises: catalogExercises
        ).encoded()
        if let firstExerciseData {
            catalog = Array(
                String(decoding: catalog, as: UTF8.self)
                    .replacingOccurrences(of: "\"\(placeholder)\"", with: firstExerciseData).utf8)
        }
        var file = RawPack.frame(RawPack.entry(header: RawPack.header(name: "catalog.json", size: catalog.count), data: catalog))
        let catalogLocation = EntryLocation(
            path: "catalog.json", size: Int64(catalog.count), frameOffset: 0,
            frameLength: Int64(file.count))
        var uncompressed = Int64(RawPack.entry(header: RawPack.header(name: "x", size: catalog.count), data: catalog).count)
        var gifs: [GIFEntry] = []
        // Frames in hash order, as the format has them.
        for entry in entries.sorted(by: { $0.sha256 < $1.sha256 }) {
            let content = RawPack.entry(
                header: entry.header ?? RawPack.header(name: entry.indexPath, size: entry.data.count),
                data: entry.data)
            let frame = entry.frame ?? RawPack.frame(content)
            gifs.append(
                GIFEntry(
                    sha256: entry.sha256,
                    location: EntryLocation(
                        path: entry.indexPath, size: Int64(entry.indexSize), frameOffset: Int64(file.count),
                        frameLength: Int64(frame.count))))
            file += frame
            uncompressed += Int64(content.count)
        }
        for frame in extraFrames { file += frame }
        file += endFrame ?? RawPack.endOfArchive
        uncompressed += 1024
        let pack = PackDescription(
            name: name, version: 1, file: "packs/\(name)-v1.tar.zst", bytes: Int64(file.count),
            sha256: indexSHA256 ?? sha256Hex(file), entryCount: gifs.count + 1, uncompressedBytes: uncompressed,
            contentDigest: sha256Hex(catalog), catalog: catalogLocation, gifs: gifs,
            exercises: exercises.map { ExerciseRef(id: $0.id, gif: $0.entry.map { entries[$0].sha256 }) })
        try FileManager.default.createDirectory(atPath: "\(directory)/packs", withIntermediateDirectories: true)
        try Data(file).write(to: URL(fileURLWithPath: "\(directory)/packs/\(name)-v1.tar.zst"))
        let index = PackIndex(
            generator: "forged", source: SourceDescription(kind: "forged", baseURL: nil, resolution: 180),
            packs: [pack])
        try index.encoded().write(to: URL(fileURLWithPath: "\(directory)/index.json"))
        return "\(directory)/index.json"
    }
}

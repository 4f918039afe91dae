import GifPackFormat
import GifPackGIFCore
import GifPackIndexReader

/// Walks a GIF with ``GIFWalker`` (pure Swift, the checks giflib makes) and compares what it finds with the pack catalog's record.
///
/// ```swift
/// let problems = GIFMetadataCheck.problems(bytes: gif, metadata: exercise.gif, pack: "all", entry: path)
/// ```
enum GIFMetadataCheck {
    static func problems(bytes: [UInt8], metadata: GIFMetadata?, side: Int? = nil, pack: String, entry: String) -> [PackRejection] {
        let info: GIFInfo
        do { info = try GIFWalker.inspect(bytes: bytes) } catch {
            return [PackRejection(.notAGIF, pack: pack, entry: entry, detail: "does not decode: \(error)")]
        }
        return compare(info, byteCount: Int64(bytes.count), metadata: metadata, side: side, pack: pack, entry: entry)
    }

    /// The same for a GIF already written to `path`, read back whole: the installer wrote it from an
    /// entry whose size the index bounds and whose SHA-256 it checked.
    static func problems(file path: String, metadata: GIFMetadata?, side: Int? = nil, pack: String, entry: String) -> [PackRejection] {
        let info: GIFInfo
        do {
            let reader = try PackFrameReader(path: path)
            let bytes = try reader.readBytes(at: 0, count: Int(try reader.fileSize()))
            info = try GIFWalker.inspect(bytes: bytes)
        } catch {
            return [PackRejection(.notAGIF, pack: pack, entry: entry, detail: "does not decode: \(error)")]
        }
        return compare(info, byteCount: FileOps.regularFileSize(path) ?? -1, metadata: metadata, side: side, pack: pack, entry: entry)
    }

    /// `side`: a rendition pack's resolution, the larger side its GIFs' logical screens must have.
    private static func compare(_ info: GIFInfo, byteCount: Int64, metadata: GIFMetadata?, side: Int?, pack: String,
                                entry: String) -> [PackRejection] {
        if let side, max(info.width, info.height) != side {
            return [PackRejection(.wrongResolution, pack: pack, entry: entry,
                                  detail: "the GIF is \(info.width)×\(info.height), not the pack's resolution of \(side) px")]
        }
        guard let metadata else { return [] }
        var differences: [String] = []
        if metadata.bytes != byteCount { differences.append("bytes \(metadata.bytes) vs \(byteCount)") }
        if metadata.width != info.width || metadata.height != info.height {
            differences.append("dimensions \(metadata.width)x\(metadata.height) vs \(info.width)x\(info.height)")
        }
        if metadata.frames != info.frameCount { differences.append("frames \(metadata.frames) vs \(info.frameCount)") }
        if metadata.durationMilliseconds != info.durationMilliseconds {
            differences.append("duration \(metadata.durationMilliseconds) ms vs \(info.durationMilliseconds) ms")
        }
        if metadata.loopCount != info.loopCount {
            differences.append("loop count \(metadata.loopCount.map(String.init) ?? "none") vs \(info.loopCount.map(String.init) ?? "none")")
        }
        guard !differences.isEmpty else { return [] }
        return [PackRejection(.catalogMismatch, pack: pack, entry: entry,
                              detail: "catalog.json vs the decoded GIF: " + differences.joined(separator: ", "))]
    }
}

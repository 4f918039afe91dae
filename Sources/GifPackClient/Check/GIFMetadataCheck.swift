import GifPackFormat
import GifPackGIFCore
import GifPackIndexReader

/// Walks an image — a GIF with ``GIFWalker`` (pure Swift, the checks giflib makes), a WebP (format
/// 1.4) with ``WebPWalker`` (its RIFF container, frames and limits) — and compares what it finds
/// with the pack catalog's record, the entry's format included.
///
/// ```swift
/// let problems = GIFMetadataCheck.problems(.bytes(gif), metadata: exercise.gif, format: .gif, pack: "all", entry: path)
/// ```
enum GIFMetadataCheck {
    /// What a walk found: the canvas, frames and timing both formats have.
    struct Walked: Equatable {
        var width: Int
        var height: Int
        var frames: Int
        var durationMilliseconds: Int
        var loopCount: Int?
    }

    /// Where an image's verified bytes are: in memory, or in a file the installer wrote from an
    /// entry whose size the index bounds and whose SHA-256 it checked (read back whole).
    enum Source {
        case bytes([UInt8])
        case file(String)
    }

    /// The image (already read through ``IndexedEntry``, so its hash is right) walked — a GIF decoded,
    /// a WebP's container (format 1.4) — and compared with its catalog record (`metadata`; nil: walked only).
    /// `side`: a rendition pack's resolution, the larger side its GIFs' logical screens must have.
    static func problems(
        _ image: Source, metadata: GIFMetadata?, side: Int? = nil, format: ImageFormat, pack: String, entry: String
    ) -> [PackRejection] {
        let bytes: [UInt8]
        switch image {
        case .bytes(let inMemory): bytes = inMemory
        case .file(let path):
            do {
                let reader = try PackFrameReader(path: path)
                bytes = try reader.readBytes(at: 0, count: Int(try reader.fileSize()))
            } catch {
                return [PackRejection(format == .webp ? .notAWebP : .notAGIF, pack: pack, entry: entry, detail: "cannot be read back: \(error)")]
            }
        }
        let info: Walked
        switch walk(bytes, format: format, pack: pack, entry: entry) {
        case .failure(let problem): return [problem]
        case .success(let walked): info = walked
        }
        let byteCount = if case .file(let path) = image { FileOps.regularFileSize(path) ?? -1 } else { Int64(bytes.count) }
        let kind = format == .webp ? "WebP" : "GIF"
        if let side, max(info.width, info.height) != side {
            return [
                PackRejection(
                    .wrongResolution, pack: pack, entry: entry,
                    detail: "the \(kind) is \(info.width)×\(info.height), not the pack's resolution of \(side) px")
            ]
        }
        guard let metadata else { return [] }
        var differences: [String] = []
        if (metadata.format ?? .gif) != format { differences.append("format \(metadata.format?.rawValue ?? "gif") vs \(format.rawValue)") }
        if metadata.bytes != byteCount { differences.append("bytes \(metadata.bytes) vs \(byteCount)") }
        if metadata.width != info.width || metadata.height != info.height {
            differences.append("dimensions \(metadata.width)x\(metadata.height) vs \(info.width)x\(info.height)")
        }
        if metadata.frames != info.frames { differences.append("frames \(metadata.frames) vs \(info.frames)") }
        if metadata.durationMilliseconds != info.durationMilliseconds {
            differences.append("duration \(metadata.durationMilliseconds) ms vs \(info.durationMilliseconds) ms")
        }
        if metadata.loopCount != info.loopCount {
            differences.append("loop count \(metadata.loopCount.map(String.init) ?? "none") vs \(info.loopCount.map(String.init) ?? "none")")
        }
        guard !differences.isEmpty else { return [] }
        return [
            PackRejection(
                .catalogMismatch, pack: pack, entry: entry,
                detail: "catalog.json vs the decoded \(kind): " + differences.joined(separator: ", "))
        ]
    }

    private static func walk(_ bytes: [UInt8], format: ImageFormat, pack: String, entry: String) -> Result<Walked, PackRejection> {
        if format == .webp {
            do {
                let info = try WebPWalker.inspect(bytes: bytes)
                return .success(
                    Walked(
                        width: info.width, height: info.height, frames: info.frameCount,
                        durationMilliseconds: info.durationMilliseconds, loopCount: info.loopCount))
            } catch {
                return .failure(PackRejection(.notAWebP, pack: pack, entry: entry, detail: "the WebP container is refused: \(error)"))
            }
        }
        do {
            let info = try GIFWalker.inspect(bytes: bytes)
            return .success(
                Walked(
                    width: info.width, height: info.height, frames: info.frameCount,
                    durationMilliseconds: info.durationMilliseconds, loopCount: info.loopCount))
        } catch {
            return .failure(PackRejection(.notAGIF, pack: pack, entry: entry, detail: "does not decode: \(error)"))
        }
    }
}

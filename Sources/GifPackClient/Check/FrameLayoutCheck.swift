import GifPackFormat
import GifPackIndexReader

/// Compares a pack file's actual zstd frames (from `ZstdFrames.frameExtents`) with the index.
///
/// The index must describe the file completely: `catalog.json` is the first frame, every listed
/// entry is exactly one frame (same offset and compressed length) whose header declares exactly the
/// entry's tar length (`512 + size` rounded up to 512), each frame is listed at most once, and the
/// only unlisted frame is the last one, the 1024-byte end-of-archive marker. A frame the index does
/// not list is an entry a stock `tar -x` would extract behind the client's back: it is refused.
///
/// ```swift
/// let frames = try ZstdFrames.frameExtents(in: path)
/// if let problem = FrameLayoutCheck.problems(frames: frames, pack: pack).first { throw … }
/// ```
enum FrameLayoutCheck {
    /// Uncompressed size of the end-of-archive frame: two zero blocks.
    static let endOfArchiveSize = Int64(2 * TarHeader.blockSize)

    /// `TarHeader.entryLength` for sizes an index may claim, nil when negative or so large the
    /// arithmetic would overflow.
    static func entryLength(_ size: Int64) -> Int64? {
        guard size >= 0, size <= Int64.max / 2 else { return nil }
        return TarHeader.entryLength(dataSize: size)
    }

    static func problems(frames: [ZstdFrameExtent], pack: PackDescription) -> [PackRejection] {
        var problems: [PackRejection] = []
        func add(_ reason: PackRejection.Reason, _ entry: String?, _ detail: String) {
            problems.append(PackRejection(reason, pack: SafePath.printable(pack.name), entry: entry, detail: detail))
        }
        var byOffset: [Int64: ZstdFrameExtent] = [:]
        for frame in frames { byOffset[frame.offset] = frame }
        var listed = Set<Int64>()

        let locations = [pack.catalog] + pack.gifs.map(\.location)
        for location in locations {
            let entry = SafePath.printable(location.path)
            guard let frame = byOffset[location.frameOffset], frame.compressedLength == location.frameLength else {
                add(.missingEntry, entry, "no frame of \(location.frameLength) bytes starts at offset \(location.frameOffset)")
                continue
            }
            if !listed.insert(frame.offset).inserted {
                add(.duplicate, entry, "the frame at offset \(frame.offset) is listed for two entries")
            }
            guard let declared = frame.contentSize else {
                add(.badFrame, entry, "the frame at offset \(frame.offset) does not declare its content size")
                continue
            }
            guard let expected = entryLength(location.size) else {
                add(.oversize, entry, "size \(location.size) is not a possible entry size")
                continue
            }
            if declared > expected {
                add(.oversize, entry, "the frame declares \(declared) bytes; a \(location.size)-byte entry takes \(expected)")
            } else if declared < expected {
                add(.sizeMismatch, entry, "the frame declares \(declared) bytes; a \(location.size)-byte entry takes \(expected)")
            }
        }
        if let first = frames.first, first.offset != pack.catalog.frameOffset {
            add(.entryMismatch, SafePath.printable(pack.catalog.path), "catalog.json must be the first frame (offset 0)")
        }
        guard let last = frames.last else {
            add(.badFrame, nil, "the pack holds no zstd frame")
            return problems
        }
        for frame in frames.dropLast() where !listed.contains(frame.offset) {
            add(
                .unlistedEntry, "frame@\(frame.offset)",
                "the frame at offset \(frame.offset) (\(frame.compressedLength) bytes, declaring \(frame.contentSize.map(String.init) ?? "no") content size) is not listed in the index")
        }
        if listed.contains(last.offset) {
            add(.badFrame, nil, "the pack lacks its end-of-archive frame")
        } else if last.contentSize != endOfArchiveSize {
            add(
                .unlistedEntry, "frame@\(last.offset)",
                "the last frame declares \(last.contentSize.map(String.init) ?? "no") content size, not the \(endOfArchiveSize)-byte end-of-archive marker")
        }
        return problems
    }
}

import GifPackFormat
import GifPackIndexReader

/// Reads one tar entry from its zstd frame with every check a client needs, streaming the data.
///
/// The frame is decompressed by `PackFrameReader`, capped at the entry length the caller allows
/// (so a bomb stops at the cap), the header is checked by `validate` before any data is passed
/// on (paths, type, name and size), the data is hashed on the way through, and the first bytes
/// are kept so callers can check a signature. Failures come back as ``PackClientError``:
/// content problems as ``PackRejection``s, I/O as ``PackClientError/fileSystem(path:operation:errno:)``.
///
/// ```swift
/// let read = try EntryReading.read(reader: reader, pack: "all", frameOffset: 512, frameLength: 9000,
///                                  maxSize: 40_000, validate: { _ in nil }) { chunk in … }
/// read.sha256   // hex digest of the data
/// ```
enum EntryReading {
    struct Result {
        var header: TarHeader
        var sha256: String
        /// The first (up to) 16 data bytes.
        var prefix: [UInt8]
    }

    static func read(
        reader: PackFrameReader, pack: String, entry: String, frameOffset: Int64, frameLength: Int64,
        maxSize: Int64, validate: (TarHeader) -> PackRejection?,
        into consumer: (UnsafeRawBufferPointer) throws(PackReadError) -> Void
    ) throws(PackClientError) -> Result {
        var headerProblem: PackRejection?
        var digest = StreamingSHA256()
        var prefix: [UInt8] = []
        let header: TarHeader
        do {
            header = try reader.streamEntry(
                frameOffset: frameOffset, frameLength: frameLength, maxSize: maxSize,
                onHeader: { header throws(PackReadError) in
                    if let problem = validate(header) {
                        headerProblem = problem
                        throw .badTarHeader(problem.detail)
                    }
                },
                into: { chunk throws(PackReadError) in
                    digest.update(chunk)
                    if prefix.count < 16 { prefix.append(contentsOf: chunk.prefix(16 - prefix.count)) }
                    try consumer(chunk)
                })
        } catch {
            if let headerProblem { throw .rejected(headerProblem) }
            throw translate(error, pack: pack, entry: entry, readerPath: reader.path)
        }
        return Result(header: header, sha256: digest.hex, prefix: prefix)
    }

    /// The problem with a tar header that every client refuses whatever the index says: an unsafe
    /// name, or anything but a regular file.
    static func unsafeHeaderProblem(_ header: TarHeader, pack: String) -> PackRejection? {
        let name = SafePath.printable(header.name)
        if let (reason, detail) = SafePath.problem(in: header.name) {
            return PackRejection(reason, pack: pack, entry: name, detail: "tar entry name: \(detail)")
        }
        switch header.typeflag {
        case UInt8(ascii: "1"):
            return PackRejection(
                .link, pack: pack, entry: name,
                detail: "entry is a hard link to \(SafePath.printable(header.linkName))")
        case UInt8(ascii: "2"):
            return PackRejection(
                .link, pack: pack, entry: name,
                detail: "entry is a symbolic link to \(SafePath.printable(header.linkName))")
        case UInt8(ascii: "3"), UInt8(ascii: "4"):
            return PackRejection(.deviceFile, pack: pack, entry: name, detail: "entry is a device file")
        case UInt8(ascii: "6"):
            return PackRejection(.deviceFile, pack: pack, entry: name, detail: "entry is a FIFO")
        default:
            guard header.isRegularFile else {
                let type = String(decoding: [header.typeflag], as: UTF8.self)
                return PackRejection(
                    .notARegularFile, pack: pack, entry: name,
                    detail: "entry has tar type \"\(SafePath.printable(type))\", not a regular file")
            }
            return nil
        }
    }

    /// True when `prefix` starts with `GIF87a` or `GIF89a`.
    static func hasGIFSignature(_ prefix: [UInt8]) -> Bool {
        prefix.starts(with: Array("GIF87a".utf8)) || prefix.starts(with: Array("GIF89a".utf8))
    }
    /// Opens a pack file (or a posters pack) for reading frames, refusing it when its size is not the
    /// one its index description gives.
    static func openPackFile(_ path: String, pack: String, expectedBytes: Int64) throws(PackClientError) -> PackFrameReader {
        let reader: PackFrameReader
        let size: Int64
        do {
            reader = try PackFrameReader(path: path)
            size = try reader.fileSize()
        } catch {
            throw translate(error, pack: pack, entry: path, readerPath: path)
        }
        guard size == expectedBytes else {
            throw .rejected(
                PackRejection(
                    .packSize, pack: pack, entry: path,
                    detail: "the file is \(size) bytes, the index says \(expectedBytes)"))
        }
        return reader
    }


    static func translate(_ error: PackReadError, pack: String, entry: String, readerPath: String) -> PackClientError {
        switch error {
        case let .io(path, operation, code):
            return .fileSystem(path: path, operation: operation, errno: code)
        case let .notRegularFile(path, kind):
            return .unreadable(location: path, detail: "not a regular file (\(kind))")
        case let .frameTooLarge(offset, limit):
            return .rejected(
                PackRejection(
                    .bomb, pack: pack, entry: entry,
                    detail: "the frame at offset \(offset) decompresses to more than the \(limit) bytes the index allows"))
        case .badTarHeader(let detail):
            return .rejected(PackRejection(.badEntry, pack: pack, entry: entry, detail: detail))
        case .notZstd, .badFrameHeader, .checksumMismatch, .corruptFrame, .truncatedFrame, .trailingData:
            return .rejected(PackRejection(.badFrame, pack: pack, entry: entry, detail: error.description))
        }
    }
}

import Crypto
import Foundation

/// Writes a pack's `catalog.json` to a file one exercise at a time, so its size never sits in
/// memory, and hashes it on the way (the hash is the pack's content digest).
///
/// The output is ``PackCatalog/encoded()``'s canonical form (``PackCatalogJSON``, docs/FORMAT.md);
/// each exercise's `data` is its ``RawRecord`` copied as is.
///
/// ```swift
/// let written = try PackCatalogWriter.write(pack: "all", source: source, exercises: rows, to: temporaryPath)
/// print(written.sha256, written.bytes)
/// ```
enum PackCatalogWriter {
    struct Row {
        var exercise: Exercise
        var gif: GIFMetadata?
    }

    /// Rows given as sorted were not: writing them would not be `catalog.json`'s canonical form.
    struct OutOfOrder: Error, CustomStringConvertible {
        var previous: String
        var next: String
        var description: String { "catalog.json rows out of id order (\(next) after \(previous))" }
    }

    struct Written: Equatable {
        var sha256: String
        var bytes: Int64
    }

    /// GIFs whose `gif` value is kept once encoded (about 300 bytes each).
    static let maxEncodedGIFs = 8192

    /// Writes `rows` sorted by exercise id.
    static func write(pack: String, source: SourceDescription, exercises rows: [Row], to path: String) throws -> Written {
        try write(pack: pack, source: source, sortedExercises: rows.sorted(by: { $0.exercise.id < $1.exercise.id }), to: path)
    }

    /// Writes rows that come in ascending id order, one at a time: a lazy sequence keeps nothing
    /// per exercise in memory (each record is read back from the build's spool as it is written).
    static func write<Rows: Sequence<Row>>(
        pack: String, source: SourceDescription, sortedExercises rows: Rows,
        to path: String
    ) throws -> Written {
        try write(pack: pack, source: source, sortedRows: { each in for row in rows { try each(row) } }, to: path)
    }

    /// ``write(pack:source:sortedExercises:to:)`` of rows handed out one at a time by `rows`
    /// (which calls its argument with each, and may throw: rows read back from the build's spool).
    static func write(pack: String, source: SourceDescription, sortedRows rows: Rows, to path: String) throws -> Written {
        let sink = try FileDescriptorSink(creating: path)
        let written = try encode(pack: pack, source: source, sortedRows: rows) { try sink.write($0) }
        try sink.close()
        return written
    }

    /// Rows handed out one at a time, in order, to the function given.
    typealias Rows = ((Row) throws -> Void) throws -> Void

    /// What ``write(pack:source:sortedRows:to:)`` would write, hashed and counted without
    /// writing it: how a rebuild finds a pack unchanged without writing its `catalog.json`.
    static func digest(pack: String, source: SourceDescription, sortedRows rows: Rows) throws -> Written {
        try encode(pack: pack, source: source, sortedRows: rows) { _ in }
    }

    /// ``digest(pack:source:sortedRows:)`` of rows in a sequence.
    static func digest<Rows: Sequence<Row>>(pack: String, source: SourceDescription, sortedExercises rows: Rows) throws -> Written {
        try digest(pack: pack, source: source, sortedRows: { each in for row in rows { try each(row) } })
    }

    /// Encodes the rows in 64 KiB pieces handed to `emit`, hashing them on the way.
    private static func encode(
        pack: String, source: SourceDescription, sortedRows rows: Rows,
        emit: @escaping ([UInt8]) throws -> Void
    ) throws -> Written {
        var hasher = SHA256()
        var count: Int64 = 0
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        func flush(force: Bool = false) throws {
            guard force || buffer.count >= 1 << 16 else { return }
            hasher.update(data: buffer)
            count += Int64(buffer.count)
            try emit(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        buffer += PackCatalogJSON.opening
        var previous: String?
        // Exercises share GIFs (a few thousand for 100,000 exercises): each GIF's metadata is
        // encoded once, up to a bound, then as it comes.
        var encoded: [String: (GIFMetadata, [UInt8])] = [:]
        var index = 0
        try rows { row in
            defer { index += 1 }
            if let previous, !(previous < row.exercise.id) { throw OutOfOrder(previous: previous, next: row.exercise.id) }
            previous = row.exercise.id
            var gifJSON = PackCatalogJSON.nullJSON
            if let gif = row.gif {
                if let (metadata, json) = encoded[gif.sha256], metadata == gif {
                    gifJSON = json
                } else {
                    gifJSON = PackCatalogJSON.metadataJSON(gif)
                    if encoded.count < Self.maxEncodedGIFs { encoded[gif.sha256] = (gif, gifJSON) }
                }
            }
            PackCatalogJSON.appendExercise(
                id: row.exercise.id, name: row.exercise.name, gifJSON: gifJSON,
                data: try row.exercise.record.bytes(), first: index == 0, to: &buffer)
            try flush()
        }
        PackCatalogJSON.appendClosing(formatVersion: .withoutRenditions, pack: pack, source: source, to: &buffer)
        try flush(force: true)
        return Written(sha256: Hex.lowercase(hasher.finalize()), bytes: count)
    }
}

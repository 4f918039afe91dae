/// Writes `index.json` straight into bytes, in the same form `JSONEncoder` gives with sorted keys,
/// pretty printing and unescaped slashes (two-space indentation, `"key" : value`), followed by a
/// newline.
///
/// There is no second copy of the index's shape here: the writer is ``IndentedJSONEncoder`` run
/// over the models' own `Encodable` conformances, the same `CodingKeys` the reader decodes with.
/// Each model declares its `CodingKeys` in sorted order (the order the keys are written in), which
/// `IndexShapeTests` checks for every type of the index.
///
/// `JSONEncoder` first builds a tree of the whole index, several times the size of the result (tens
/// of megabytes for a catalog of 20,000 exercises); this writer needs only the output buffer.
///
/// ```swift
/// let bytes = IndexJSONWriter.encode(index)   // what PackIndex.encoded() returns
/// ```
enum IndexJSONWriter {
    static func encode(_ index: PackIndex) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(index, chunkSize: .max) { bytes += $0 }
        return bytes
    }

    /// Writes the same bytes in pieces of about `chunkSize` bytes (one piece when `.max`), so an
    /// index of 100,000 exercises (about 14 MB) can be hashed or written without being held.
    static func encode(_ index: PackIndex, chunkSize: Int, emit: ([UInt8]) -> Void) {
        do { try IndentedJSONEncoder.encode(index, chunkSize: chunkSize, emit: emit) } catch {
            // Only a model whose CodingKeys are out of order (or that encodes a float) gets here:
            // a mistake in this module, found by IndexShapeTests, never a property of the data.
            preconditionFailure("index.json cannot be written: \(error)")
        }
    }
}

import Crypto
import Foundation

/// Writes a pack's `catalog.json` to a file one exercise at a time, so its size never sits in
/// memory, and hashes it on the way (the hash is the pack's content digest).
///
/// The output is the canonical form readers decode as ``PackCatalog``: sorted keys, no whitespace,
/// slashes unescaped, a trailing newline; each exercise's `data` is its ``RawRecord`` copied as is.
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

    struct Written: Equatable {
        var sha256: String
        var bytes: Int64
    }

    static func write(pack: String, source: SourceDescription, exercises rows: [Row], to path: String) throws -> Written {
        let sink = try FileDescriptorSink(creating: path, hashing: true)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        func flush(force: Bool = false) throws {
            guard force || buffer.count >= 1 << 16 else { return }
            try sink.write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        buffer += Array(#"{"exercises":["#.utf8)
        for (index, row) in rows.sorted(by: { $0.exercise.id < $1.exercise.id }).enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer += Array(#"{"data":"#.utf8)
            buffer += row.exercise.record.canonicalJSON
            buffer += Array(#","gif":"#.utf8)
            if let gif = row.gif { appendMetadata(gif, to: &buffer) } else { buffer += Array("null".utf8) }
            buffer += Array(#","id":"#.utf8)
            appendString(row.exercise.id, to: &buffer)
            buffer += Array(#","name":"#.utf8)
            appendString(row.exercise.name, to: &buffer)
            buffer.append(UInt8(ascii: "}"))
            try flush()
        }
        buffer += Array(#"],"formatVersion":"#.utf8)
        appendString(FormatVersion.current.description, to: &buffer)
        buffer += Array(#","pack":"#.utf8)
        appendString(pack, to: &buffer)
        buffer += Array(#","source":{"kind":"#.utf8)
        appendString(source.kind, to: &buffer)
        if let resolution = source.resolution { buffer += Array(#","resolution":\#(resolution)"#.utf8) }
        buffer += Array("}}\n".utf8)
        try flush(force: true)
        try sink.close()
        return Written(sha256: sink.sha256Hex() ?? "", bytes: sink.offset)
    }

    private static func appendMetadata(_ gif: GIFMetadata, to buffer: inout [UInt8]) {
        var text = #"{"bytes":\#(gif.bytes),"durationMilliseconds":\#(gif.durationMilliseconds),"frames":\#(gif.frames),"height":\#(gif.height)"#
        if let loop = gif.loopCount { text += #","loopCount":\#(loop)"# }
        text += #","sha256":"\#(gif.sha256)","width":\#(gif.width)}"#
        buffer += Array(text.utf8)
    }

    static func appendString(_ string: String, to buffer: inout [UInt8]) {
        JSONText.appendString(string, to: &buffer)
    }
}

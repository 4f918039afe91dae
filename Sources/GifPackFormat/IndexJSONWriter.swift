/// Writes `index.json` straight into bytes, in the same canonical form `JSONEncoder` gives with
/// sorted keys, pretty printing and unescaped slashes (two-space indentation, `"key" : value`).
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
        withoutActuallyEscaping(emit) { emit in
            var writer = Writer(chunkSize: chunkSize, emit: emit)
            write(index, &writer)
            writer.flush()
        }
    }

    private static func write(_ index: PackIndex, _ writer: inout Writer) {
        writer.object(0) { w in
            if let expires = index.expires { w.field("expires", 1) { $0.string(expires) } }
            w.field("formatVersion", 1) { $0.string(index.formatVersion.description) }
            w.field("generator", 1) { $0.string(index.generator) }
            w.field("packs", 1) { w in
                w.array(1, index.packs) { w, description in pack(description)(&w, 2) }
            }
            if let sequence = index.sequence { w.field("sequence", 1) { $0.number(Int64(sequence)) } }
            w.field("source", 1) { w in source(index.source, &w, 1) }
        }
        writer.bytes.append(0x0A)
    }

    private static func source(_ source: SourceDescription, _ w: inout Writer, _ level: Int) {
        w.object(level) { w in
            if let baseURL = source.baseURL { w.field("baseURL", level + 1) { $0.string(baseURL) } }
            w.field("kind", level + 1) { $0.string(source.kind) }
            if let resolution = source.resolution { w.field("resolution", level + 1) { $0.number(Int64(resolution)) } }
        }
    }

    private static func location(_ location: EntryLocation, _ w: inout Writer, _ level: Int) {
        w.object(level) { w in
            w.field("frameLength", level + 1) { $0.number(location.frameLength) }
            w.field("frameOffset", level + 1) { $0.number(location.frameOffset) }
            w.field("path", level + 1) { $0.string(location.path) }
            w.field("size", level + 1) { $0.number(location.size) }
        }
    }

    private static func placeholder(_ value: GIFPlaceholder, _ w: inout Writer, _ level: Int) {
        w.object(level) { w in
            w.field("averageColor", level + 1) { $0.string(value.averageColor) }
            w.field("blurHash", level + 1) { $0.string(value.blurHash) }
            w.field("durationMilliseconds", level + 1) { $0.number(Int64(value.durationMilliseconds)) }
            w.field("frames", level + 1) { $0.number(Int64(value.frames)) }
            w.field("height", level + 1) { $0.number(Int64(value.height)) }
            if let loop = value.loopCount { w.field("loopCount", level + 1) { $0.number(Int64(loop)) } }
            w.field("width", level + 1) { $0.number(Int64(value.width)) }
        }
    }

    private static func posters(_ value: PosterPackDescription, _ w: inout Writer, _ level: Int) {
        w.object(level) { w in
            let inner = level + 1
            w.field("bytes", inner) { $0.number(value.bytes) }
            w.field("catalog", inner) { w in location(value.catalog, &w, inner) }
            w.field("contentDigest", inner) { $0.string(value.contentDigest) }
            w.field("entryCount", inner) { $0.number(Int64(value.entryCount)) }
            w.field("file", inner) { $0.string(value.file) }
            w.field("name", inner) { $0.string(value.name) }
            w.field("posters", inner) { w in
                w.array(inner, value.posters) { w, entry in location(entry, &w, inner + 1) }
            }
            w.field("sha256", inner) { $0.string(value.sha256) }
            w.field("sizes", inner) { w in
                w.array(inner, value.sizes) { w, size in w.number(Int64(size)) }
            }
            w.field("uncompressedBytes", inner) { $0.number(value.uncompressedBytes) }
            w.field("version", inner) { $0.number(Int64(value.version)) }
        }
    }

    private static func pack(_ pack: PackDescription) -> (inout Writer, Int) -> Void {
        { w, level in
            w.object(level) { w in
                let inner = level + 1
                w.field("bytes", inner) { $0.number(pack.bytes) }
                w.field("catalog", inner) { w in location(pack.catalog, &w, inner) }
                w.field("contentDigest", inner) { $0.string(pack.contentDigest) }
                w.field("entryCount", inner) { $0.number(Int64(pack.entryCount)) }
                w.field("exercises", inner) { w in
                    w.array(inner, pack.exercises) { w, exercise in
                        w.object(inner + 1) { w in
                            w.field("gif", inner + 2) { w in
                                if let gif = exercise.gif { w.string(gif) } else { w.raw("null") }
                            }
                            w.field("id", inner + 2) { $0.string(exercise.id) }
                        }
                    }
                }
                w.field("file", inner) { $0.string(pack.file) }
                w.field("gifs", inner) { w in
                    w.array(inner, pack.gifs) { w, gif in
                        w.object(inner + 1) { w in
                            w.field("location", inner + 2) { w in location(gif.location, &w, inner + 2) }
                            if let placeholder = gif.placeholder {
                                w.field("placeholder", inner + 2) { w in Self.placeholder(placeholder, &w, inner + 2) }
                            }
                            w.field("sha256", inner + 2) { $0.string(gif.sha256) }
                        }
                    }
                }
                w.field("name", inner) { $0.string(pack.name) }
                if let posters = pack.posters { w.field("posters", inner) { w in Self.posters(posters, &w, inner) } }
                w.field("sha256", inner) { $0.string(pack.sha256) }
                w.field("uncompressedBytes", inner) { $0.number(pack.uncompressedBytes) }
                w.field("version", inner) { $0.number(Int64(pack.version)) }
            }
        }
    }

    /// The output buffer and the punctuation of pretty-printed JSON.
    struct Writer {
        var bytes: [UInt8] = []
        private var needsComma: [Bool] = []
        let chunkSize: Int
        let emit: ([UInt8]) -> Void

        init(chunkSize: Int, emit: @escaping ([UInt8]) -> Void) {
            self.chunkSize = chunkSize
            self.emit = emit
        }

        /// Hands what is written so far to `emit`.
        mutating func flush() {
            guard !bytes.isEmpty else { return }
            emit(bytes)
            bytes.removeAll(keepingCapacity: true)
        }

        mutating func raw(_ text: String) { bytes += Array(text.utf8) }

        mutating func indent(_ level: Int) { bytes += [UInt8](repeating: 0x20, count: level * 2) }

        mutating func number(_ value: Int64) { raw(String(value)) }

        mutating func object(_ level: Int, _ body: (inout Writer) -> Void) {
            raw("{")
            needsComma.append(false)
            body(&self)
            needsComma.removeLast()
            raw("\n")
            indent(level)
            raw("}")
        }

        mutating func array<C: Collection>(_ level: Int, _ elements: C, _ element: (inout Writer, C.Element) -> Void) {
            guard !elements.isEmpty else { return raw("[\n\n" + String(repeating: " ", count: level * 2) + "]") }
            raw("[")
            for (position, value) in elements.enumerated() {
                raw(position == 0 ? "\n" : ",\n")
                indent(level + 1)
                element(&self, value)
                if bytes.count >= chunkSize { flush() }
            }
            raw("\n")
            indent(level)
            raw("]")
        }

        mutating func field(_ key: String, _ level: Int, _ value: (inout Writer) -> Void) {
            raw(needsComma[needsComma.count - 1] ? ",\n" : "\n")
            needsComma[needsComma.count - 1] = true
            indent(level)
            string(key)
            raw(" : ")
            value(&self)
        }

        mutating func string(_ text: String) { CanonicalJSON.appendString(text, to: &bytes) }
    }
}

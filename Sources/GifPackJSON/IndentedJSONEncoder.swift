/// Writes an `Encodable` value straight into bytes, in pieces, as indented JSON: the form of
/// `index.json` (docs/FORMAT.md), which is the form `JSONEncoder` gives with `.sortedKeys`,
/// `.prettyPrinted` and `.withoutEscapingSlashes` (two-space indentation, `"key" : value`, an
/// empty array or object as `[`, a blank line, `]`), followed by a newline. Strings and integers
/// are written as ``CanonicalJSON`` writes them.
///
/// Unlike `JSONEncoder` it builds no tree: each value is written as its `encode(to:)` gives it, and
/// the bytes are handed to `emit` whenever an array element leaves at least `chunkSize` of them, so
/// memory holds one piece however long the lists are. The price: it cannot sort an object's keys,
/// so it requires them in order — by their UTF-8 bytes, as ``CanonicalJSON`` sorts them — and
/// refuses a key that comes after a greater one. A type gets that order by declaring its
/// `CodingKeys` in it: the synthesized `encode(to:)` encodes in the order of `CodingKeys`' cases,
/// the synthesized `init(from:)` reads the same keys, so one declaration is the shape for both.
///
/// ```swift
/// struct Point: Codable { enum CodingKeys: String, CodingKey { case x, y }; var x: Int; var y: Int }
/// var bytes: [UInt8] = []
/// try IndentedJSONEncoder.encode(Point(x: 1, y: 2)) { bytes += $0 }
/// // {\n  "x" : 1,\n  "y" : 2\n}\n
/// ```
///
/// Floating-point numbers, `superEncoder` and nested containers taken from a container (rather
/// than from an `Encoder`) are not written: the encode fails with a ``Failure`` naming where.
package enum IndentedJSONEncoder {
    /// Why a value could not be written; `description` names the place (`packs[0].gifs[2]`).
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Writes `value`, handing the bytes to `emit` in order, in pieces of about `chunkSize` bytes
    /// (one piece when `.max`).
    package static func encode<Value: Encodable>(
        _ value: Value, chunkSize: Int = .max,
        emit: ([UInt8]) -> Void
    ) throws(Failure) {
        try withoutActuallyEscaping(emit) { (emit) throws(Failure) in
            let sink = Sink(chunkSize: chunkSize, emit: emit)
            sink.write(value, level: 0)
            if let failure = sink.failure { throw failure }
            sink.bytes.append(0x0A)
            sink.flush()
        }
    }

    /// `value`'s bytes in one array.
    package static func encode<Value: Encodable>(_ value: Value) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(value, chunkSize: .max) { bytes += $0 }
        return bytes
    }
}

extension IndentedJSONEncoder {
    /// The output buffer and the containers open in it, innermost last.
    final class Sink {
        enum Kind { case pending, single, object(lastKey: String?), array(count: Int) }

        struct Frame {
            var kind: Kind
            /// The indentation of the frame's closing bracket, in steps of two spaces.
            let level: Int
        }

        var bytes: [UInt8] = []
        var frames: [Frame] = []
        /// The first failure; once set, nothing more is written.
        var failure: Failure?
        let chunkSize: Int
        let emit: ([UInt8]) -> Void

        init(chunkSize: Int, emit: @escaping ([UInt8]) -> Void) {
            self.chunkSize = chunkSize
            self.emit = emit
        }

        func flush() {
            guard !bytes.isEmpty else { return }
            emit(bytes)
            bytes.removeAll(keepingCapacity: true)
        }

        /// Writes one whole value at `level`, closing whatever container its `encode(to:)` opened.
        func write<Value: Encodable>(_ value: Value, level: Int) {
            guard failure == nil else { return }
            frames.append(Frame(kind: .pending, level: level))
            let depth = frames.count - 1
            do { try value.encode(to: Writer(sink: self, depth: depth)) } catch {
                fail(error as? Failure ?? Failure(description: "\(place()): \(error)"))
            }
            guard failure == nil else { return }
            switch frames[depth].kind {
            case .pending: fail("\(place()): \(Value.self) encoded nothing")
            case .single: break
            case .object(let lastKey): close("}", empty: lastKey == nil, level: level)
            case .array(let count): close("]", empty: count == 0, level: level)
            }
            frames.removeLast()
        }

        private func close(_ bracket: String, empty: Bool, level: Int) {
            raw(empty ? "\n\n" : "\n")
            indent(level)
            raw(bracket)
        }

        /// Turns the frame at `depth` (the one being written) into `kind`; false (and a failure)
        /// when it already holds a container or a value, or is not the innermost.
        func open(_ kind: Kind, depth: Int) -> Bool {
            guard failure == nil else { return false }
            guard depth >= 0, depth == frames.count - 1, case .pending = frames[depth].kind else {
                fail("\(place()): a second container or value for one value")
                return false
            }
            frames[depth].kind = kind
            return true
        }

        /// True when the frame at `depth` is the innermost one, so its container may write.
        func isCurrent(_ depth: Int) -> Bool {
            guard failure == nil else { return false }
            guard depth >= 0, depth == frames.count - 1 else {
                fail("\(place()): containers used out of order")
                return false
            }
            return true
        }

        /// Starts the member `key` of the object at `depth`: separator, indentation, key.
        func key(_ key: String, depth: Int) -> Bool {
            guard isCurrent(depth), case .object(let lastKey) = frames[depth].kind else { return false }
            if let lastKey, !lastKey.utf8.lexicographicallyPrecedes(key.utf8) {
                fail("\(place(frames: depth)): key \"\(key)\" after \"\(lastKey)\": the keys must come in sorted order (declare CodingKeys so)")
                return false
            }
            frames[depth].kind = .object(lastKey: key)
            raw(lastKey == nil ? "\n" : ",\n")
            indent(frames[depth].level + 1)
            CanonicalJSON.appendString(key, to: &bytes)
            raw(" : ")
            return true
        }

        /// Starts the next element of the array at `depth`: separator and indentation.
        func element(depth: Int) -> Bool {
            guard isCurrent(depth), case .array(let count) = frames[depth].kind else { return false }
            frames[depth].kind = .array(count: count + 1)
            raw(count == 0 ? "\n" : ",\n")
            indent(frames[depth].level + 1)
            return true
        }

        /// After an array element: hands the bytes on once there are `chunkSize` of them.
        func elementDone() {
            if bytes.count >= chunkSize { flush() }
        }

        func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

        func indent(_ level: Int) { bytes.append(contentsOf: repeatElement(0x20, count: level * 2)) }

        func integer(_ value: some BinaryInteger) { raw(String(value)) }

        func string(_ value: String) { CanonicalJSON.appendString(value, to: &bytes) }

        func fail(_ description: String) { fail(Failure(description: description)) }

        func fail(_ failure: Failure) {
            if self.failure == nil { self.failure = failure }
        }

        /// Where the value the first `count` frames (all by default) are writing is, then `child` (a
        /// key or `[n]`): `packs[0].gifs[2].sha256`, or `the top level` at the root.
        func place(frames count: Int? = nil, then child: String = "") -> String {
            var text = ""
            for frame in frames.prefix(count ?? frames.count) {
                switch frame.kind {
                case .object(let key?): text += text.isEmpty ? key : "." + key
                case .array(let count) where count > 0: text += "[\(count - 1)]"
                default: break
                }
            }
            if !child.isEmpty { text += text.isEmpty || child.hasPrefix("[") ? child : "." + child }
            return text.isEmpty ? "the top level" : text
        }
    }

    /// The `Encoder` a value writes itself to: one per value, at the sink's frame `depth`.
    struct Writer: Encoder {
        let sink: Sink
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if sink.open(.object(lastKey: nil), depth: depth) { sink.raw("{") }
            return KeyedEncodingContainer(ObjectWriter<Key>(sink: sink, depth: depth))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if sink.open(.array(count: 0), depth: depth) { sink.raw("[") }
            return ArrayWriter(sink: sink, depth: depth)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            ValueWriter(sink: sink, depth: depth)
        }
    }
}

// The three containers of IndentedJSONEncoder. Each writes into the sink at its frame `depth` and
// checks there that it is the innermost one, so a value is written where its `encode(to:)` puts
// it or the encode fails; a container asked for what the form cannot stream (a float, a nested
// container taken from a container, a super encoder) fails the encode with the place named.

extension IndentedJSONEncoder {
    struct ObjectWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let sink: Sink
        let depth: Int
        var codingPath: [any CodingKey] { [] }

        private func member(_ key: Key, _ body: () -> Void) throws(Failure) {
            if sink.key(key.stringValue, depth: depth) { body() }
            if let failure = sink.failure { throw failure }
        }

        private func refuse(_ key: Key, _ what: String) throws(Failure) {
            sink.fail("\(sink.place(then: key.stringValue)): \(what) cannot be written here")
            if let failure = sink.failure { throw failure }
        }

        mutating func encodeNil(forKey key: Key) throws { try member(key) { sink.raw("null") } }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try member(key) { sink.raw(value ? "true" : "false") } }
        mutating func encode(_ value: String, forKey key: Key) throws { try member(key) { sink.string(value) } }
        mutating func encode(_ value: Double, forKey key: Key) throws { try refuse(key, "a floating-point number") }
        mutating func encode(_ value: Float, forKey key: Key) throws { try refuse(key, "a floating-point number") }
        mutating func encode(_ value: Int, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try member(key) { sink.integer(value) } }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try member(key) { sink.integer(value) } }

        mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
            try member(key) { sink.write(value, level: sink.frames[depth].level + 1) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type,
            forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            try? refuse(key, "a nested container")
            return KeyedEncodingContainer(ObjectWriter<NestedKey>(sink: sink, depth: -1))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            try? refuse(key, "a nested container")
            return ArrayWriter(sink: sink, depth: -1)
        }

        mutating func superEncoder() -> any Encoder {
            sink.fail("\(sink.place()): a super encoder cannot be written here")
            return Writer(sink: sink, depth: -1)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            try? refuse(key, "a super encoder")
            return Writer(sink: sink, depth: -1)
        }
    }

    struct ArrayWriter: UnkeyedEncodingContainer {
        let sink: Sink
        let depth: Int
        var codingPath: [any CodingKey] { [] }

        var count: Int {
            guard sink.frames.indices.contains(depth), case .array(let count) = sink.frames[depth].kind else { return 0 }
            return count
        }

        private func next(_ body: () -> Void) throws(Failure) {
            if sink.element(depth: depth) {
                body()
                sink.elementDone()
            }
            if let failure = sink.failure { throw failure }
        }

        private func refuse(_ what: String) throws(Failure) {
            sink.fail("\(sink.place(then: "[\(count)]")): \(what) cannot be written here")
            if let failure = sink.failure { throw failure }
        }

        mutating func encodeNil() throws { try next { sink.raw("null") } }
        mutating func encode(_ value: Bool) throws { try next { sink.raw(value ? "true" : "false") } }
        mutating func encode(_ value: String) throws { try next { sink.string(value) } }
        mutating func encode(_ value: Double) throws { try refuse("a floating-point number") }
        mutating func encode(_ value: Float) throws { try refuse("a floating-point number") }
        mutating func encode(_ value: Int) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: Int8) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: Int16) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: Int32) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: Int64) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: UInt) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: UInt8) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: UInt16) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: UInt32) throws { try next { sink.integer(value) } }
        mutating func encode(_ value: UInt64) throws { try next { sink.integer(value) } }

        mutating func encode<Value: Encodable>(_ value: Value) throws {
            try next { sink.write(value, level: sink.frames[depth].level + 1) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            try? refuse("a nested container")
            return KeyedEncodingContainer(ObjectWriter<NestedKey>(sink: sink, depth: -1))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            try? refuse("a nested container")
            return ArrayWriter(sink: sink, depth: -1)
        }

        mutating func superEncoder() -> any Encoder {
            try? refuse("a super encoder")
            return Writer(sink: sink, depth: -1)
        }
    }

    struct ValueWriter: SingleValueEncodingContainer {
        let sink: Sink
        let depth: Int
        var codingPath: [any CodingKey] { [] }

        private func value(_ body: () -> Void) throws(Failure) {
            if sink.open(.single, depth: depth) { body() }
            if let failure = sink.failure { throw failure }
        }

        private func refuse(_ what: String) throws(Failure) {
            sink.fail("\(sink.place()): \(what) cannot be written here")
            if let failure = sink.failure { throw failure }
        }

        mutating func encodeNil() throws { try value { sink.raw("null") } }
        mutating func encode(_ value: Bool) throws { try self.value { sink.raw(value ? "true" : "false") } }
        mutating func encode(_ value: String) throws { try self.value { sink.string(value) } }
        mutating func encode(_ value: Double) throws { try refuse("a floating-point number") }
        mutating func encode(_ value: Float) throws { try refuse("a floating-point number") }
        mutating func encode(_ value: Int) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: Int8) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: Int16) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: Int32) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: Int64) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: UInt) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: UInt8) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: UInt16) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: UInt32) throws { try self.value { sink.integer(value) } }
        mutating func encode(_ value: UInt64) throws { try self.value { sink.integer(value) } }

        mutating func encode<Value: Encodable>(_ value: Value) throws {
            // The value takes this frame's place: a frame of its own at the same indentation.
            try self.value { sink.write(value, level: sink.frames[depth].level) }
        }
    }
}

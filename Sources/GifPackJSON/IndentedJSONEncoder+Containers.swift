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

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                            forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
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

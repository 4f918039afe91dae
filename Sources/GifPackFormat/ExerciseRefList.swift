/// A pack's exercise list, held compactly: every id's UTF-8 bytes in one buffer and each GIF hash
/// once, so an exercise costs about a dozen bytes instead of two strings (3.2 MB at 100,000
/// exercises as an array of ``ExerciseRef``). It reads like an array of ``ExerciseRef`` and is
/// encoded and decoded as one.
///
/// ```swift
/// var list: ExerciseRefList = [ExerciseRef(id: "0001", gif: hash)]
/// list.append(ExerciseRef(id: "0002", gif: nil))
/// list[1].gif   // nil: a placeholder
/// ```
package struct ExerciseRefList: RandomAccessCollection, Sendable, Equatable, Codable, ExpressibleByArrayLiteral {
    /// The ids' bytes, one after the other; `ends[i]` is where the i-th id ends.
    private var idBytes: [UInt8] = []
    private var ends: [UInt32] = []
    /// The i-th exercise's GIF as a number in `hashes`, or -1 for none.
    private var gifNumbers: [Int32] = []
    private var hashes: [String] = []
    private var hashNumbers: [String: Int32] = [:]

    package init() {}

    package init<S: Sequence<ExerciseRef>>(_ refs: S) {
        for ref in refs { append(ref) }
    }

    package init(arrayLiteral refs: ExerciseRef...) { self.init(refs) }

    package mutating func reserveCapacity(_ count: Int) {
        ends.reserveCapacity(count)
        gifNumbers.reserveCapacity(count)
    }

    package mutating func append(_ ref: ExerciseRef) {
        idBytes.append(contentsOf: ref.id.utf8)
        ends.append(UInt32(idBytes.count))
        guard let hash = ref.gif else { return gifNumbers.append(-1) }
        if let number = hashNumbers[hash] { return gifNumbers.append(number) }
        let number = Int32(hashes.count)
        hashes.append(hash)
        hashNumbers[hash] = number
        gifNumbers.append(number)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { ends.count }

    package subscript(position: Int) -> ExerciseRef {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        let id = idBytes.withUnsafeBufferPointer { String(decoding: $0[start..<Int(ends[position])], as: UTF8.self) }
        let number = gifNumbers[position]
        return ExerciseRef(id: id, gif: number < 0 ? nil : hashes[Int(number)])
    }

    /// Equal when they list the same exercises with the same GIFs, in the same order.
    package static func == (a: ExerciseRefList, b: ExerciseRefList) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }

    package init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([ExerciseRef].self))
    }

    /// One element at a time, with no array of them made first (the index writer streams the list).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for ref in self { try container.encode(ref) }
    }
}

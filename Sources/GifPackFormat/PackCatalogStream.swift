import GifPackJSON

/// Reads a pack's `catalog.json` as it comes (decompressed chunk by chunk), one exercise at a
/// time: each element of `exercises` is decoded as a ``PackExercise``, handed on and dropped, so
/// memory holds one exercise (at most ``maxExerciseBytes``), never the catalog. The other keys
/// (`formatVersion`, `pack`, `source`: at most ``maxHeadBytes`` of them) are kept and decoded by
/// ``finish()``. The scanner counts brackets and quotes without recursion; each exercise is
/// decoded by ``JSONParser`` with its depth limit.
///
/// ```swift
/// var stream = PackCatalogStream()
/// try stream.feed(chunk) { exercise in print(exercise.id, exercise.name) }
/// let head = try stream.finish()   // pack, format version, source; no exercises
/// ```
package struct PackCatalogStream: Sendable {
    /// What is wrong with the catalog, with its byte offset.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var reason: String
        package var offset: Int64
        package var description: String { "catalog.json at byte \(offset): \(reason)" }
    }

    /// The largest exercise record read (its JSON bytes).
    package let maxExerciseBytes: Int
    /// The largest catalog without its exercises.
    package static let maxHeadBytes = 1 << 20

    private var head: [UInt8] = []
    private var element: [UInt8] = []
    private var depth = 0
    private var strings = JSONStringScan()
    /// The last string met at depth 1 (a key, when a value follows it), up to 16 bytes.
    private var lastString: [UInt8] = []
    private var stringAtTop = false
    private enum Place { case head, betweenExercises, inExercise, afterExercises }
    private var place = Place.head
    private var offset: Int64 = 0
    private var decoding = false
    package private(set) var exerciseCount = 0

    package init(maxExerciseBytes: Int = 1 << 20) {
        self.maxExerciseBytes = maxExerciseBytes
    }

    /// Scans `bytes`; each exercise completed in them is decoded and given to `body`.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (PackExercise) throws -> Void) throws {
        decoding = true
        for byte in bytes {
            try scan(byte, body)
            offset += 1
        }
    }

    /// Scans `bytes` without decoding the exercises (counted and dropped): a check of the
    /// catalog's shape and of its other keys only.
    package mutating func skim(_ bytes: UnsafeRawBufferPointer) throws {
        decoding = false
        for byte in bytes {
            try scan(byte) { _ in }
            offset += 1
        }
    }

    /// The catalog's other keys, checked to decode; its `exercises` are empty (they were streamed).
    package func finish() throws(Failure) -> PackCatalog {
        guard depth == 0, !strings.inString, place == .afterExercises else { throw fail("the catalog ends early or has no exercises") }
        do { return try PackCatalog.decode(from: head) } catch {
            throw fail("the catalog does not decode: \(JSONValueDecoder.describe(error))")
        }
    }

    private func fail(_ reason: String) -> Failure { Failure(reason: reason, offset: offset) }

    private mutating func scan(_ byte: UInt8, _ body: (PackExercise) throws -> Void) throws {
        if place == .inExercise {
            if decoding {
                guard element.count < maxExerciseBytes else { throw fail("an exercise is over \(maxExerciseBytes) bytes") }
                element.append(byte)
            }
        } else if place != .betweenExercises || byte == UInt8(ascii: "]") {
            guard head.count < Self.maxHeadBytes else { throw fail("the catalog without its exercises is over \(Self.maxHeadBytes) bytes") }
            head.append(byte)
        }
        if strings.inString {
            if strings.step(byte) == .content, stringAtTop, lastString.count < 16 { lastString.append(byte) }
            return
        }
        if place == .betweenExercises, byte != UInt8(ascii: "{"), byte != UInt8(ascii: "]"), !Self.isSeparator(byte) {
            throw fail("an exercise is not an object")
        }
        switch byte {
        case UInt8(ascii: "\""):
            strings.open()
            stringAtTop = depth == 1 && (place == .head || place == .afterExercises)
            if stringAtTop { lastString.removeAll(keepingCapacity: true) }
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try open(byte)
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            try close(byte, body)
        default:
            break
        }
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: ",")
    }

    private mutating func open(_ byte: UInt8) throws {
        depth += 1
        if place == .betweenExercises {
            place = .inExercise
            if decoding { element.append(byte) }
        } else if depth == 2, byte == UInt8(ascii: "["), lastString == Array("exercises".utf8) {
            guard place == .head else { throw fail("two lists of exercises") }
            place = .betweenExercises
        }
    }

    private mutating func close(_ byte: UInt8, _ body: (PackExercise) throws -> Void) throws {
        depth -= 1
        guard depth >= 0 else { throw fail("a closing bracket without its opening one") }
        if place == .inExercise, depth == 2 {
            place = .betweenExercises
            exerciseCount += 1
            if decoding {
                let exercise: PackExercise
                do { exercise = try JSONValueDecoder.decode(PackExercise.self, from: element, limits: JSONLimits(maxBytes: maxExerciseBytes)) } catch {
                    throw fail("exercise \(exerciseCount) does not decode: \(JSONValueDecoder.describe(error))")
                }
                element.removeAll(keepingCapacity: element.capacity <= 1 << 16)
                try body(exercise)
            } else {
                element.removeAll(keepingCapacity: true)
            }
        } else if place == .betweenExercises, depth == 1 {
            place = .afterExercises
        }
    }
}

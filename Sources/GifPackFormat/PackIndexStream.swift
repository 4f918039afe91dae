import Foundation
import GifPackJSON

/// Reads an `index.json` as it comes, in chunks of any size, without its JSON tree: each element
/// of a pack's `exercises` list is parsed alone (``JSONParser``, the format's depth limit), decoded
/// as an ``ExerciseRef`` and appended to that pack's compact ``ExerciseRefList`` (about a dozen
/// bytes an exercise), then let go. The rest of the index (its "head": formatVersion, source, the
/// packs' other keys, with every exercise list left as `[]`) is kept as bytes and decoded by
/// ``finish()`` with ``PackIndex/decode(bytes:limits:omittingExercises:)``, which checks it as the
/// whole-document decoder does (a key twice, a format it does not know, trailing data…).
///
/// The result equals ``PackIndex/decode(bytes:limits:omittingExercises:)`` of the same bytes, and
/// a document that decoder refuses is refused here too, with the byte offset. The list syntax is
/// checked here (`,` between elements, none trailing, each element an object); what this scanner
/// does not recognise as an exercise list (a key written with escapes, a list that is not a
/// pack's) stays in the head and is decoded there, as the whole-document decoder would.
///
/// ```swift
/// var stream = PackIndexStream()
/// try stream.feed(chunk)                  // as often as chunks come
/// let index = try stream.finish()         // the index, exercises included
/// ```
package struct PackIndexStream: Sendable {
    /// The largest exercise element (its JSON bytes): an `{"gif":…,"id":…}` takes about 110.
    package static let maxExerciseBytes = 1 << 16

    package let limits: JSONLimits
    /// Bytes read so far.
    package private(set) var offset = 0

    private var head: [UInt8] = []
    private var depth = 0
    private var strings = JSONStringScan()
    /// The last string closed at depth 1 or 3 (a key when `:` follows it), up to 16 bytes, and its depth.
    private var string: [UInt8] = []
    private var lastKey: [UInt8] = []
    private var lastKeyDepth = -1
    /// The last byte outside strings that is not whitespace (`"` for a string).
    private var lastSignificant: UInt8 = 0
    /// Inside `packs` (0), `renditionPacks` (1) or `formatPacks` (2), and how many of its packs have opened.
    private var packList: Int?
    private var packsOpened = [0, 0, 0]
    /// The exercise lists read, by pack list and pack number.
    private var lists: [[Int: ExerciseRefList]] = [[:], [:], [:]]
    /// Inside a pack's exercise list: its syntax, and the list read so far.
    private var inExercises = false
    private var scan = ExerciseListScan(list: 0, ordinal: 0)
    private var current = ExerciseRefList()

    package init(limits: JSONLimits = .standard) {
        self.limits = limits
    }

    /// Scans `bytes`, the next part of the document.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(IndexError) {
        guard offset + bytes.count <= limits.maxBytes else {
            throw .malformed(JSONParseError(.tooLarge(bytes: offset + bytes.count, limit: limits.maxBytes), at: 0).description)
        }
        var position = 0
        while position < bytes.count {
            if inExercises {
                try scanExercise(bytes[position])
                offset += 1
                position += 1
                continue
            }
            // The head is kept as it is read: a run of head bytes is appended at once.
            let start = position
            while position < bytes.count, !inExercises {
                scanHead(bytes[position])
                offset += 1
                position += 1
            }
            head.append(contentsOf: bytes[start..<position])
        }
    }

    /// ``feed(_:)`` of bytes in an array.
    package mutating func feed(_ bytes: [UInt8]) throws(IndexError) {
        let result: Result<Void, IndexError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(IndexError) in try feed(buffer) }
        }
        try result.get()
    }

    /// The index: the head decoded and checked, each pack with the exercises read for it.
    package func finish() throws(IndexError) -> PackIndex {
        guard !inExercises else { throw fail("the document ends inside a list of exercises") }
        var index = try PackIndex.decodeKeepingUnknownFormats(bytes: head, limits: limits, omittingExercises: false)
        for (ordinal, list) in lists[0] where ordinal < index.packs.count { index.packs[ordinal].exercises = list }
        for (ordinal, list) in lists[1] where ordinal < (index.renditionPacks?.count ?? 0) { index.renditionPacks?[ordinal].exercises = list }
        for (ordinal, list) in lists[2] where ordinal < (index.formatPacks?.count ?? 0) { index.formatPacks?[ordinal].exercises = list }
        return index.leavingOutUnknownFormats()
    }

    /// Decodes a whole document in memory as a stream (no JSON tree of its exercise lists, no copy
    /// of its bytes): what the client's readers of an index use.
    package static func decode(_ bytes: Data, limits: JSONLimits = .standard) throws(IndexError) -> PackIndex {
        var stream = PackIndexStream(limits: limits)
        let fed: Result<Void, IndexError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(IndexError) in try stream.feed(buffer) }
        }
        try fed.get()
        return try stream.finish()
    }

    private func fail(_ reason: String) -> IndexError { .malformed("at byte \(offset): \(reason)") }

    /// One byte of the head (the caller keeps the bytes).
    private mutating func scanHead(_ byte: UInt8) {
        if strings.inString {
            switch strings.step(byte) {
            case .escaped: break
            case .backslash: string.append(byte)  // a key written with escapes is never one looked for
            case .closingQuote:
                lastSignificant = byte
                swap(&lastKey, &string)
                lastKeyDepth = depth
            case .content: if string.count <= 16 { string.append(byte) }
            }
            return
        }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
            return
        case UInt8(ascii: "\""):
            strings.open()
            string.removeAll(keepingCapacity: true)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            open(byte)
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth <= 1 { packList = nil }
        default:
            break
        }
        lastSignificant = byte
    }

    /// An object or array opens: a pack list, a pack, or a pack's exercise list when it is the value of their keys.
    private mutating func open(_ byte: UInt8) {
        let member = lastSignificant == UInt8(ascii: ":") && lastKeyDepth == depth
        depth += 1
        if depth == 3, byte == UInt8(ascii: "{"), let list = packList {
            packsOpened[list] += 1
        }
        guard member, byte == UInt8(ascii: "[") else { return }
        if depth == 2, packList == nil {
            packList = lastKey == Self.packsKey ? 0 : lastKey == Self.renditionPacksKey ? 1 : lastKey == Self.formatPacksKey ? 2 : nil
            if let list = packList { packsOpened[list] = 0 }
        } else if depth == 4, let list = packList, lastKey == Self.exercisesKey {
            scan = ExerciseListScan(list: list, ordinal: packsOpened[list] - 1)
            current = ExerciseRefList()
            inExercises = true
        }
    }

    private static let packsKey = Array("packs".utf8)
    private static let renditionPacksKey = Array("renditionPacks".utf8)
    private static let formatPacksKey = Array("formatPacks".utf8)
    private static let exercisesKey = Array("exercises".utf8)

    private mutating func scanExercise(_ byte: UInt8) throws(IndexError) {
        switch try scan.take(byte, at: offset) {
        case .more:
            break
        case .element(let bytes):
            let ref: ExerciseRef
            if let plain = ExerciseRef.plain(bytes) {
                ref = plain
            } else {
                do {
                    let limits = JSONLimits(maxDepth: max(1, limits.maxDepth - 4), maxBytes: Self.maxExerciseBytes)
                    ref = try JSONValueDecoder.decode(ExerciseRef.self, from: try JSONParser.parse(bytes, limits: limits))
                } catch {
                    let name = ["packs", "renditionPacks", "formatPacks"][scan.list]
                    throw fail("\(name)[\(scan.ordinal)].exercises[\(scan.count - 1)]: \(JSONValueDecoder.describe(error))")
                }
            }
            current.append(ref)
        case .end:
            lists[scan.list][scan.ordinal] = current
            current = ExerciseRefList()
            inExercises = false
            head.append(byte)
            depth -= 1
            lastSignificant = byte
        }
    }
}

/// One exercise list on its way through ``PackIndexStream``: the syntax between its elements, and
/// each element's bytes until its brackets close.
private struct ExerciseListScan: Sendable {
    enum Step { case more, element([UInt8]), end }
    private enum Expect { case firstOrEnd, commaOrEnd, element }

    let list: Int
    let ordinal: Int
    private(set) var count = 0
    private var expect = Expect.firstOrEnd
    private var element: [UInt8] = []
    private var depth = 0
    private var strings = JSONStringScan()

    init(list: Int, ordinal: Int) {
        self.list = list
        self.ordinal = ordinal
    }

    mutating func take(_ byte: UInt8, at offset: Int) throws(IndexError) -> Step {
        if depth > 0 { return try inElement(byte) }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
            return .more
        case UInt8(ascii: "{") where expect != .commaOrEnd:
            depth = 1
            count += 1
            element.removeAll(keepingCapacity: element.capacity <= 4096)
            element.append(byte)
            return .more
        case UInt8(ascii: ",") where expect == .commaOrEnd:
            expect = .element
            return .more
        case UInt8(ascii: "]") where expect != .element:
            return .end
        default:
            let wanted =
                switch expect {
                case .firstOrEnd: "an exercise object or ]"
                case .commaOrEnd: ", or ]"
                case .element: "an exercise object"
                }
            throw .malformed("at byte \(offset): expected \(wanted) in the exercises of pack \(ordinal + 1)")
        }
    }

    private mutating func inElement(_ byte: UInt8) throws(IndexError) -> Step {
        guard element.count < PackIndexStream.maxExerciseBytes else {
            throw .malformed("exercise \(count) of pack \(ordinal + 1) is over \(PackIndexStream.maxExerciseBytes) bytes")
        }
        element.append(byte)
        if strings.inString {
            _ = strings.step(byte)
            return .more
        }
        switch byte {
        case UInt8(ascii: "\""): strings.open()
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if depth == 0 {
                expect = .commaOrEnd
                return .element(element)
            }
        default: break
        }
        return .more
    }
}

extension ExerciseRef {
    /// The element as the builder writes it, read without a JSON tree: `{"gif": "…", "id": "…"}`
    /// (`"gif": null` for no GIF), those two keys in that order, whitespace anywhere between tokens,
    /// each string printable ASCII without a quote or a backslash. Anything else is nil, and the
    /// caller decodes the element in full: for what this accepts the full decoder gives the same.
    static func plain(_ element: [UInt8]) -> ExerciseRef? {
        element.withUnsafeBufferPointer { bytes -> ExerciseRef? in
            var at = 0
            func skipSpace() {
                while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
            }
            func take(_ byte: UInt8) -> Bool {
                skipSpace()
                guard at < bytes.count, bytes[at] == byte else { return false }
                at += 1
                return true
            }
            /// A string's bytes, or nil.
            func string() -> String? {
                guard take(UInt8(ascii: "\"")) else { return nil }
                let start = at
                while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
                    guard bytes[at] >= 0x20, bytes[at] < 0x7F, bytes[at] != UInt8(ascii: "\\") else { return nil }
                    at += 1
                }
                guard at < bytes.count else { return nil }
                defer { at += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
            }
            func key(_ name: StaticString) -> Bool {
                guard take(UInt8(ascii: "\"")) else { return false }
                let count = name.utf8CodeUnitCount
                guard at + count < bytes.count, bytes[at + count] == UInt8(ascii: "\"") else { return false }
                for index in 0..<count where bytes[at + index] != name.utf8Start[index] { return false }
                at += count + 1
                return take(UInt8(ascii: ":"))
            }
            guard take(UInt8(ascii: "{")), key("gif") else { return nil }
            let gif: String?
            skipSpace()
            if at + 4 <= bytes.count, bytes[at] == UInt8(ascii: "n"), bytes[at + 1] == UInt8(ascii: "u"),
                bytes[at + 2] == UInt8(ascii: "l"), bytes[at + 3] == UInt8(ascii: "l")
            {
                at += 4
                gif = nil
            } else {
                guard let text = string() else { return nil }
                gif = text
            }
            guard take(UInt8(ascii: ",")), key("id"), let id = string(), take(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            guard at == bytes.count else { return nil }
            return ExerciseRef(id: id, gif: gif)
        }
    }
}

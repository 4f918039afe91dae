import Foundation
import GifPackSystem
import Synchronization
import Crypto

/// A catalog spool that cannot be read back: the disk failed, or the file was changed under the
/// build (cut short, or bytes that are not the exercises written there). The build stops with it,
/// as with any other failed read; nothing new is written.
package struct SpoolReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The spool file (its directory, while it is unnamed).
    package var path: String
    /// Where the exercise that could not be read starts.
    package var offset: Int64
    package var problem: String

    package var description: String { "the catalog spool \(path) cannot be read back at byte \(offset): \(problem)" }
}

/// Where a build keeps the catalog's records between the list pages and the packs' `catalog.json`:
/// an unnamed temporary file in the cache's `tmp/` (`O_TMPFILE`, so a killed run leaves nothing
/// behind), appended to a page at a time as pages arrive. Once the catalog is complete, the file is
/// given a name, with a directory of its pages, and becomes the next run's ``CatalogPageCache``. A spooled ``RawRecord`` is
/// only the offset and length of its bytes there, so a catalog of 100,000 exercises does not keep
/// 100,000 records in memory; `catalog.json` reads each one back when it is written.
///
/// ```swift
/// let spool = try RecordSpool(directory: layout.temporaryDirectory)
/// let spooled = try spool.append([exercise.record])   // records now backed by the file
/// let bytes = try spooled[0].bytes()                  // read back
/// ```
final class RecordSpool: Sendable {
    private let fd: Int32
    /// The open file, for readers of its exercises.
    var descriptor: Int32 { fd }
    /// The file's length: where the next page goes.
    private let end = Mutex<Int64>(0)
    /// A description of the unnamed file (its directory), for error messages.
    let path: String
    /// The body part, equipment and target lists of spooled exercises, each kept once (a catalog
    /// has a few hundred different ones), and the image URL templates (one per catalog).
    private let tables = Mutex(Tables())

    /// The lists and templates kept so far (copies share their storage).
    var tablesNow: Tables { tables.withLock { $0 } }

    struct Tables {
        var lists: [[String]] = []
        var listNumbers: [[String]: UInt32] = [:]
        var templates: [ImageURLTemplate] = []
    }

    /// Whether the file can be given a name once the catalog is complete, to be the next run's
    /// ``CatalogPageCache`` (false where the file system has no `O_TMPFILE`).
    let linkable: Bool

    /// Where crash-safety tests stop a build (`GIFPACK_CRASH_AT`, debug builds only): the spool is
    /// linked under its temporary name in `tmp/`, not yet renamed to the page cache's.
    static let namingCrashPoint = "naming-catalog-pages"

    /// Bytes kept free at the start of the file for the page cache's header (``persist(trailer:as:)``).
    static let headerLength: Int64 = 64

    /// The directory the file is in.
    let directory: String

    init(directory: String) throws(FileSystemError) {
        self.directory = directory
        (fd, linkable) = try FileSystem.createUnnamed(in: directory)
        path = "\(directory)/(the catalog spool, unnamed)"
        end.withLock { $0 = Self.headerLength }
    }

    deinit { SystemCalls.close(fd) }

    /// Writes the records' bytes one after the other and returns them backed by the file. Records
    /// already spooled are returned as they are.
    func append(_ records: [RawRecord]) throws(FileSystemError) -> [RawRecord] {
        var page: [UInt8] = []
        page.reserveCapacity(records.reduce(0) { $0 + $1.length })
        var placed: [(Int64, RawRecord)] = []
        placed.reserveCapacity(records.count)
        for record in records {
            guard case .memory(let bytes) = record.storage else { placed.append((-1, record)); continue }
            placed.append((Int64(page.count), record))
            page += bytes
        }
        let start = try write(page)
        return placed.map { offset, record in
            offset < 0 ? record : RawRecord(spooledIn: self, offset: start + offset, length: record.length, sha256: record.sha256)
        }
    }

    /// Appends `page` to the file and returns where it starts.
    func write(_ page: [UInt8]) throws(FileSystemError) -> Int64 {
        let start = end.withLock { end in
            defer { end += Int64(page.count) }
            return end
        }
        guard start + Int64(page.count) < ExerciseSlot.maxOffset else { throw .io(operation: "write", path: path, errno: Errno.fileTooLarge.code) }
        try write(page, at: start)
        return start
    }

    /// Writes all of `bytes` at `offset` (`pwrite`, continued until done).
    private func write(_ bytes: [UInt8], at offset: Int64) throws(FileSystemError) {
        let written = bytes.withUnsafeBytes { buffer in
            Result { () throws(Errno) in
                try POSIXIO.writeAll(buffer) { pointer, count in
                    SystemCalls.write(fd, pointer, count, at: offset + Int64(buffer.count - count))
                }
            }
        }
        if case .failure(let error) = written { throw .io(operation: "write", path: path, errno: error.code) }
    }

    /// Appends `trailer` (a ``CatalogPageCache`` directory), writes the header that points at it
    /// and gives the file the name `path`, replacing the cache there. The spool stays open and
    /// usable; only a ``linkable`` spool can be named.
    func persist(trailer: [UInt8], as path: String) throws(FileSystemError) {
        guard linkable else { return }
        let at = try write(trailer)
        try write(CatalogPageCache.header(trailerAt: at, trailer: trailer), at: 0)
        // Through a name the next build's clean-up of tmp/ removes, should this one be killed here.
        try FileSystem.link(
            descriptor: fd, to: path, via: "\(directory)/\(UUID().uuidString).part",
            beforeRename: { CrashPoint.reach(named: Self.namingCrashPoint) })
    }

    /// The length of the file this spool wrote: no exercise it hands out reaches past it.
    var writtenLength: Int64 { end.withLock { $0 } }

    /// Takes `tables` as its own (a new spool receiving another's exercises as they were written).
    func adoptTables(_ tables: Tables) {
        self.tables.withLock { $0 = tables }
    }

    /// The number `list` is kept under (added when new).
    func listNumber(_ list: [String]) -> UInt32 {
        tables.withLock { tables in
            if let number = tables.listNumbers[list] { return number }
            let number = UInt32(tables.lists.count)
            tables.lists.append(list)
            tables.listNumbers[list] = number
            return number
        }
    }

    /// The number `template` is kept under (added when new).
    func templateNumber(_ template: ImageURLTemplate) -> UInt32 {
        tables.withLock { tables in
            if let number = tables.templates.firstIndex(of: template) { return UInt32(number) }
            tables.templates.append(template)
            return UInt32(tables.templates.count - 1)
        }
    }

    /// The bytes of a record written at `offset`.
    func read(offset: Int64, length: Int) throws(FileSystemError) -> [UInt8] {
        do { return try POSIXIO.read(fd, count: length, at: offset) } catch {
            throw .io(operation: "read", path: path, errno: error.code)
        }
    }
}

/// Where one exercise is in a ``RecordSpool``: its offset (40 bits) and length (24 bits; 0 when the
/// exercise takes 16 MiB or more, and its length is then read from the file) in one word.
struct ExerciseSlot: Sendable, Hashable {
    let bits: UInt64

    static let maxOffset: Int64 = 1 << 40
    static let lengthMask: UInt64 = (1 << 24) - 1

    init(offset: Int64, length: Int) {
        bits = UInt64(offset) << 24 | (length <= Int(Self.lengthMask) ? UInt64(length) : 0)
    }

    var offset: Int64 { Int64(bits >> 24) }
    /// The exercise's length, or nil when it is too long for the slot (read it from the file).
    var length: Int? {
        let length = Int(bits & Self.lengthMask)
        return length == 0 ? nil : length
    }
}

extension RecordSpool {
    /// An exercise as written to the spool, little-endian:
    ///
    ///     u32 length of all of it        u32 record length
    ///     32  fingerprint                 32  record SHA-256
    ///     u16 id length, id               u32 name length, name
    ///     u32 ×3 body part, equipment and target list numbers (lists are kept once, see `lists`)
    ///     u8  0: u32 length, image URL  |  1: u32 template number
    ///     the record's canonical bytes (what catalog.json copies)
    static let fixedHeader = 4 + 4 + 32 + 32

    /// The id's UTF-8 bytes in an exercise as written (`raw` is checked to hold them: see
    /// ``ExerciseReader/withBytes(at:_:)``, which hands out only exercises of a checked length).
    static func idBytes(_ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let count = Int(raw.loadUnaligned(fromByteOffset: fixedHeader, as: UInt16.self).littleEndian)
        return UnsafeRawBufferPointer(rebasing: raw[fixedHeader + 2..<fixedHeader + 2 + count])
    }

    /// The fingerprint in an exercise as written.
    static func fingerprint(_ raw: UnsafeRawBufferPointer) -> RecordDigest {
        RecordDigest(rawBytes: UnsafeRawBufferPointer(rebasing: raw[8..<40]))
    }

    /// Writes whole exercises (their record bytes included) one after the other with one write,
    /// and returns where each is.
    func append(exercises: [Exercise]) throws(FileSystemError) -> [ExerciseSlot] {
        try appendPage(exercises: exercises).slots
    }

    /// A page of exercises as written: where each is, where the page's bytes are and their
    /// SHA-256 (what a ``CatalogPageCache`` checks before it reuses them).
    struct SpooledPage {
        var slots: [ExerciseSlot]
        var start: Int64
        var length: Int
        var digest: RecordDigest

        /// A page with no exercises: nothing written.
        static let empty = SpooledPage(slots: [], start: 0, length: 0, digest: RecordDigest(SHA256.hash(data: [UInt8]())))
    }

    /// ``append(exercises:)``, saying where the page's bytes are.
    func appendPage(exercises: [Exercise]) throws(FileSystemError) -> SpooledPage {
        var page: [UInt8] = []
        var starts: [(Int, Int)] = []  // (start in page, length)
        starts.reserveCapacity(exercises.count)
        for exercise in exercises {
            let start = page.count
            let record = try exercise.record.bytes()
            // The record and name came from the API: every length below is written as 32 bits, so
            // an exercise of 4 GiB or more (a page that large needs max_catalog_bytes raised that
            // far) is refused here rather than trapping on the conversion.
            var size = 128 + record.count + exercise.id.utf8.count + exercise.name.utf8.count
            if case .url(let url) = exercise.image { size += url.utf8.count }
            guard size <= Int(UInt32.max) else {
                throw .io(operation: "spool an exercise of \(size) bytes (4 GiB or more) in", path: directory, errno: Errno.fileTooLarge.code)
            }
            page.append(contentsOf: [0, 0, 0, 0])  // length, filled in below
            Self.append(UInt32(record.count), to: &page)
            page.append(contentsOf: exercise.fingerprint.bytes)
            page.append(contentsOf: exercise.record.sha256.bytes)
            Self.append(UInt16(exercise.id.utf8.count), to: &page)
            page.append(contentsOf: exercise.id.utf8)
            Self.append(UInt32(exercise.name.utf8.count), to: &page)
            page.append(contentsOf: exercise.name.utf8)
            for list in [exercise.bodyParts, exercise.equipment, exercise.targets] {
                Self.append(listNumber(list), to: &page)
            }
            switch exercise.image {
            case .url(let url):
                page.append(0)
                Self.append(UInt32(url.utf8.count), to: &page)
                page.append(contentsOf: url.utf8)
            case .template(let template):
                page.append(1)
                Self.append(templateNumber(template), to: &page)
            }
            page += record
            let length = page.count - start
            withUnsafeBytes(of: UInt32(length).littleEndian) { page.replaceSubrange(start..<start + 4, with: $0) }
            starts.append((start, length))
        }
        let base = try self.write(page)
        // A slot holds offsets below 1 TiB (40 bits): past that, a place would wrap, not fail.
        guard base + Int64(page.count) <= ExerciseSlot.maxOffset else {
            throw .io(operation: "spool more than 1 TiB of exercises in", path: directory, errno: Errno.fileTooLarge.code)
        }
        return SpooledPage(
            slots: starts.map { ExerciseSlot(offset: base + Int64($0.0), length: $0.1) }, start: base,
            length: page.count, digest: RecordDigest(SHA256.hash(data: page)))
    }

    /// Writes a page of exercises as an earlier spool wrote them (`page`, whose list and template
    /// numbers are those of `tables`), renumbered for this spool, with one write. Returns where
    /// each is, their ids in order and the SHA-256 of the bytes written; nil, writing nothing,
    /// when the bytes are not a well-formed run of exercises.
    ///
    /// `digest`, the SHA-256 of `page` as given, is returned as it is when no number changed.
    func appendReused(_ page: inout [UInt8], tables old: Tables, digest: RecordDigest? = nil) throws(FileSystemError)
        -> (SpooledPage, ids: [String])?
    {
        var renumbered = false
        var starts: [(Int, Int)] = []
        var ids: [String] = []
        var listMap: [UInt32: UInt32] = [:]
        var templateMap: [UInt32: UInt32] = [:]
        let valid = page.withUnsafeMutableBytes { raw -> Bool in
            var start = 0
            while start < raw.count {
                guard raw.count - start >= Self.fixedHeader + 2 else { return false }
                let length = Int(raw.loadUnaligned(fromByteOffset: start, as: UInt32.self).littleEndian)
                let recordLength = Int(raw.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self).littleEndian)
                guard length >= Self.fixedHeader + 2, length <= raw.count - start else { return false }
                let end = start + length
                var position = start + Self.fixedHeader
                func u32(at offset: Int) -> UInt32? {
                    guard offset + 4 <= end else { return nil }
                    return raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
                }
                let idLength = Int(raw.loadUnaligned(fromByteOffset: position, as: UInt16.self).littleEndian)
                position += 2
                guard idLength > 0, position + idLength <= end else { return false }
                let id = String(decoding: UnsafeRawBufferPointer(rebasing: raw[position..<position + idLength]), as: UTF8.self)
                guard ExerciseID.isValid(id) else { return false }
                position += idLength
                guard let nameLength = u32(at: position), Int(nameLength) <= end - position - 4 else { return false }
                position += 4 + Int(nameLength)
                for _ in 0..<3 {
                    guard let number = u32(at: position), Int(number) < old.lists.count else { return false }
                    let new = listMap[number] ?? listNumber(old.lists[Int(number)])
                    listMap[number] = new
                    if new != number { renumbered = true }
                    raw.storeBytes(of: new.littleEndian, toByteOffset: position, as: UInt32.self)
                    position += 4
                }
                guard position < end else { return false }
                let kind = raw[position]
                position += 1
                guard let value = u32(at: position) else { return false }
                switch kind {
                case 0:
                    guard Int(value) <= end - position - 4 else { return false }
                    position += 4 + Int(value)
                case 1:
                    guard Int(value) < old.templates.count else { return false }
                    let new = templateMap[value] ?? templateNumber(old.templates[Int(value)])
                    templateMap[value] = new
                    if new != value { renumbered = true }
                    raw.storeBytes(of: new.littleEndian, toByteOffset: position, as: UInt32.self)
                    position += 4
                default: return false
                }
                guard end - position == recordLength else { return false }
                starts.append((start, length))
                ids.append(id)
                start = end
            }
            return true
        }
        guard valid else { return nil }
        let base = try self.write(page)
        let written = renumbered ? nil : digest
        return (
            SpooledPage(
                slots: starts.map { ExerciseSlot(offset: base + Int64($0.0), length: $0.1) }, start: base,
                length: page.count, digest: written ?? RecordDigest(SHA256.hash(data: page))), ids
        )
    }

    /// The exercise at `slot`, read with one `pread` (two for an exercise of 16 MiB or more).
    func exercise(at slot: ExerciseSlot) throws(SpoolReadError) -> Exercise {
        var reader = reader(chunk: 0)
        return try reader.exercise(at: slot)
    }

    /// The ids of the exercises at `slots`, read in the order given (the order they were written
    /// in reads the file straight through): how an unsorted catalog is sorted.
    func ids(at slots: [ExerciseSlot]) throws(SpoolReadError) -> PackedIDs {
        var reader = reader()
        var ids = PackedIDs()
        ids.ends.reserveCapacity(slots.count)
        for slot in slots {
            try reader.withBytes(at: slot) { ids.append(Self.idBytes($0)) }
        }
        return ids
    }

    /// Ids in one buffer: each one's UTF-8 bytes one after the other, and where each ends (about
    /// nine bytes an id of 100,000, where an array of strings takes sixteen and more).
    struct PackedIDs: Equatable {
        var bytes: [UInt8] = []
        var ends: [UInt32] = []

        var count: Int { ends.count }

        mutating func append(_ id: UnsafeRawBufferPointer) {
            bytes += id
            ends.append(UInt32(bytes.count))
        }

        private func range(_ index: Int) -> Range<Int> { (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index]) }

        subscript(index: Int) -> String { String(decoding: bytes[range(index)], as: UTF8.self) }

        /// -1, 0 or 1 as the id at `a` sorts before, with or after the one at `b`: byte order,
        /// which is `String`'s order for the ASCII ids a catalog keeps.
        func compare(_ a: Int, _ b: Int) -> Int {
            let (x, y) = (range(a), range(b))
            return bytes.withUnsafeBytes { raw in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : MemoryCalls.compare(raw.baseAddress! + x.lowerBound, raw.baseAddress! + y.lowerBound, count: common)
                if order != 0 { return order < 0 ? -1 : 1 }
                return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
            }
        }
    }

    /// Copies the exercises at `slots` to the end of `target` (this spool unless given), one after
    /// the other in the order given, and returns where the copies are: a catalog that came out of
    /// id order is written again in id order, so that every later pass over it reads the file
    /// straight through. A new `target` takes this spool's lists and templates (the copies'
    /// numbers refer to them).
    /// `slots` is changed in place, each slot to its copy's (no second array of them).
    func rewrite(_ slots: inout [ExerciseSlot], into target: RecordSpool? = nil) throws(CatalogError) {
        let target = target ?? self
        if target !== self { target.adoptTables(tablesNow) }
        var reader = reader(chunk: 0)  // each exercise where it is: out of order, a larger piece would be wasted
        var page: [UInt8] = []
        var starts: [(Int, Int)] = []
        var placed = 0  // slots before this have their copy's place
        func flush() throws(CatalogError) {
            guard !page.isEmpty else { return }
            let base: Int64
            do { base = try target.write(page) } catch { throw .spool(error) }
            for (start, length) in starts {
                slots[placed] = ExerciseSlot(offset: base + Int64(start), length: length)
                placed += 1
            }
            page.removeAll(keepingCapacity: true)
            starts.removeAll(keepingCapacity: true)
        }
        for index in slots.indices {
            let start = page.count
            do { try reader.withBytes(at: slots[index]) { page.append(contentsOf: $0) } } catch { throw .spoolRead(error) }
            starts.append((start, page.count - start))
            if page.count >= 1 << 20 { try flush() }
        }
        try flush()
    }

    /// Reads exercises back, keeping a large piece of the file so that exercises read in the order
    /// they were written cost one `pread` per piece.
    func reader(chunk: Int = 256 << 10) -> ExerciseReader { ExerciseReader(spool: self, chunk: chunk) }

    struct ExerciseReader {
        let spool: RecordSpool
        let chunk: Int
        /// A piece of the file, read once and reused: `count` bytes from `start`.
        private var buffer: [UInt8] = []
        private var start: Int64 = 0
        private var count = 0
        /// The spool's lists and templates as they were when the reader was made (they only grow).
        private let tables: Tables

        init(spool: RecordSpool, chunk: Int) {
            self.spool = spool
            self.chunk = chunk
            tables = spool.tablesNow
        }

        mutating func exercise(at slot: ExerciseSlot, withRecord: Bool = false) throws(SpoolReadError) -> Exercise {
            let (spool, tables) = (self.spool, self.tables)
            let decoded = try withBytes(at: slot) { raw in
                Result { () throws(Malformed) in try Self.decode(raw, at: slot.offset, withRecord: withRecord, spool: spool, tables: tables) }
            }
            switch decoded {
            case .success(let exercise): return exercise
            case .failure(let error): throw failure(at: slot.offset, error.problem)
            }
        }

        /// Calls `body` with the bytes of the exercise at `slot`, as written: at least the fixed
        /// header and the id, which ``RecordSpool/idBytes(_:)`` and ``RecordSpool/fingerprint(_:)``
        /// read. Throws when the file cannot be read, ends early, or holds something else there.
        mutating func withBytes<T>(at slot: ExerciseSlot, _ body: (UnsafeRawBufferPointer) -> T) throws(SpoolReadError) -> T {
            let (from, length) = try checked(at: slot)
            return buffer.withUnsafeBytes { raw in body(UnsafeRawBufferPointer(rebasing: raw[from..<from + length])) }
        }

        /// Reads the exercise at `slot` into the buffer when it is not there yet, and returns where
        /// it starts in the buffer and its length, checked against what it says of itself.
        private mutating func checked(at slot: ExerciseSlot) throws(SpoolReadError) -> (Int, Int) {
            let length: Int
            if let known = slot.length {
                length = known
            } else {
                if slot.offset < start || slot.offset + 4 > start + Int64(count) { try fill(at: slot.offset, length: 4) }
                let from = Int(slot.offset - start)
                length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: from, as: UInt32.self).littleEndian) }
                guard length > Int(ExerciseSlot.lengthMask), slot.offset + Int64(length) <= spool.writtenLength else {
                    throw failure(at: slot.offset, "its length, \(length) bytes, is not that of the exercise written there")
                }
            }
            if slot.offset < start || slot.offset + Int64(length) > start + Int64(count) { try fill(at: slot.offset, length: length) }
            let from = Int(slot.offset - start)
            let (written, idLength) = buffer.withUnsafeBytes { raw in
                (
                    Int(raw.loadUnaligned(fromByteOffset: from, as: UInt32.self).littleEndian),
                    length >= RecordSpool.fixedHeader + 2
                        ? Int(raw.loadUnaligned(fromByteOffset: from + RecordSpool.fixedHeader, as: UInt16.self).littleEndian) : 0
                )
            }
            guard written == length, length >= RecordSpool.fixedHeader + 2 + idLength, idLength > 0 else {
                throw failure(at: slot.offset, "the exercise written there was \(length) bytes, the file now says \(written) with an id of \(idLength)")
            }
            return (from, length)
        }

        private func failure(at offset: Int64, _ problem: String) -> SpoolReadError {
            SpoolReadError(path: spool.path, offset: offset, problem: problem)
        }

        /// Reads `max(length, chunk)` bytes from `offset` (fewer at the end of the file, never
        /// fewer than `length`) into the buffer.
        private mutating func fill(at offset: Int64, length: Int) throws(SpoolReadError) {
            let wanted = max(length, chunk)
            if buffer.count < wanted { buffer = [UInt8](repeating: 0, count: wanted) }
            let fd = spool.descriptor
            let got = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in
                    try POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<wanted]), at: offset)
                }
            }
            switch got {
            case .failure(let error):
                count = 0
                throw failure(at: offset, "read failed (\(error))")
            case .success(let read) where read < length:
                count = 0
                throw failure(at: offset, "the file ends at byte \(offset + Int64(read)), inside an exercise of \(length) bytes")
            case .success(let read):
                start = offset
                count = read
            }
        }

        /// Why an exercise's bytes do not decode.
        struct Malformed: Error {
            let problem: String
        }

        /// The exercise in `raw` (its whole length, checked by ``checked(at:)``), every length and
        /// number in it checked against `raw` and the tables.
        private static func decode(
            _ raw: UnsafeRawBufferPointer, at offset: Int64, withRecord: Bool, spool: RecordSpool,
            tables: Tables
        ) throws(Malformed) -> Exercise {
            var position = 4
            func take(_ count: Int, _ what: String) throws(Malformed) -> UnsafeRawBufferPointer {
                guard count >= 0, count <= raw.count - position else {
                    throw Malformed(problem: "\(what) (\(count) bytes) runs past the end of the exercise (\(raw.count) bytes)")
                }
                defer { position += count }
                return UnsafeRawBufferPointer(rebasing: raw[position..<position + count])
            }
            func u32(_ what: String) throws(Malformed) -> Int {
                Int(try take(4, what).loadUnaligned(as: UInt32.self).littleEndian)
            }
            func string(_ count: Int, _ what: String) throws(Malformed) -> String {
                String(decoding: try take(count, what), as: UTF8.self)
            }
            let recordLength = try u32("the record's length")
            let fingerprint = RecordDigest(rawBytes: try take(32, "the fingerprint"))
            let recordSHA = RecordDigest(rawBytes: try take(32, "the record's SHA-256"))
            let idLength = Int(try take(2, "the id's length").loadUnaligned(as: UInt16.self).littleEndian)
            let id = try string(idLength, "the id")
            let name = try string(try u32("the name's length"), "the name")
            let numbers = (try u32("a list number"), try u32("a list number"), try u32("a list number"))
            // Made before the last list was kept: read the spool's tables as they are now.
            var tables = tables
            if max(numbers.0, numbers.1, numbers.2) >= tables.lists.count { tables = spool.tablesNow }
            guard max(numbers.0, numbers.1, numbers.2) < tables.lists.count else {
                throw Malformed(problem: "list number \(max(numbers.0, numbers.1, numbers.2)) is not one of the \(tables.lists.count) kept")
            }
            let kind = try take(1, "the image's kind")[0]
            let image: ImageLocation
            switch kind {
            case 0:
                image = .url(try string(try u32("the image URL's length"), "the image URL"))
            case 1:
                let number = try u32("a template number")
                if number >= tables.templates.count { tables = spool.tablesNow }
                guard number < tables.templates.count else {
                    throw Malformed(problem: "template number \(number) is not one of the \(tables.templates.count) kept")
                }
                image = .template(tables.templates[number])
            default:
                throw Malformed(problem: "image kind \(kind) is neither a URL (0) nor a template (1)")
            }
            guard raw.count - position == recordLength else {
                throw Malformed(problem: "the record is \(raw.count - position) bytes, its length says \(recordLength)")
            }
            let record =
                withRecord
                ? RawRecord(bytes: Array(UnsafeRawBufferPointer(rebasing: raw[position...])), sha256: recordSHA)
                : RawRecord(spooledIn: spool, offset: offset + Int64(position), length: recordLength, sha256: recordSHA)
            return Exercise(
                id: id, name: name, bodyParts: tables.lists[numbers.0], equipment: tables.lists[numbers.1],
                targets: tables.lists[numbers.2], image: image, record: record, fingerprint: fingerprint)
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}

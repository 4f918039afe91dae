import Foundation
import GifPackSystem
import Synchronization

/// A catalog spool that cannot be read back: the disk failed, or the file was changed under the
/// build (cut short, or bytes that are not the exercises written there). The build stops with it,
/// as with any other failed read; nothing new is published.
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
        try FileSystem.link(descriptor: fd, to: path, via: "\(directory)/\(UUID().uuidString).part",
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

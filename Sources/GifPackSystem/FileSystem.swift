import Foundation

/// A failed file operation, with the path and the real `errno` to act on.
///
/// ```swift
/// catch let error as FileSystemError { print(error) }   // "mkdir dist/packs failed: Not a directory"
/// ```
package enum FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    case io(operation: String, path: String, errno: Int32)
    /// Something other than a regular file is at `path` (`kind`: "a FIFO", "a symbolic link", …):
    /// refused unopened, or closed before a byte was read or written (``RegularFile``).
    case notRegularFile(path: String, kind: String)

    package var description: String {
        switch self {
        case .io(let operation, let path, let code): "\(operation) \(path) failed: \(SystemCalls.errorText(code))"
        case .notRegularFile(let path, let kind):
            "\(path) is not a regular file (\(kind)): refused, gifpack opens only regular files and never through a symbolic link"
        }
    }

    /// The errno of a failed call; 0 for ``notRegularFile(path:kind:)``, where no call failed.
    package var errno: Int32 {
        switch self {
        case .io(_, _, let code): code
        case .notRegularFile: 0
        }
    }
}

/// The package's one set of file helpers, thin wrappers over POSIX calls, with crash-safe
/// replacement: write to a temporary name in the same directory, fsync, rename over the final
/// name, fsync the directory. A reader (or a crash) sees the old file or the new one, never a
/// partial one. Every failure names the operation, the path and the real `errno`.
///
/// ```swift
/// try FileSystem.writeAtomically(Array("hello".utf8), to: "dist/index.json")
/// for name in try FileSystem.list("dist/packs") { … }
/// ```
package enum FileSystem {
    /// `mkdir -p`: creates `path` and its missing parents (mode 0755 before the umask). A failure
    /// names the path that could not be made and the system's own errno (`File exists` when a
    /// file is in the way, `Permission denied`, `No space left on device`, …).
    package static func createDirectory(_ path: String) throws(FileSystemError) {
        if SystemCalls.makeDirectory(path, mode: 0o755) == 0 { return }
        let code = Errno.current.code
        switch Errno(code) {
        case .fileExists:
            if isDirectory(path) { return }
            throw .io(operation: "mkdir", path: path, errno: code)
        case .noSuchFileOrDirectory:
            let parent = PathText.parent(path)
            guard !parent.isEmpty, parent != path else { throw .io(operation: "mkdir", path: path, errno: code) }
            try createDirectory(parent)
            if SystemCalls.makeDirectory(path, mode: 0o755) == 0 { return }
            let again = Errno.current
            if again == .fileExists, isDirectory(path) { return }
            throw .io(operation: "mkdir", path: path, errno: again.code)
        default:
            throw .io(operation: "mkdir", path: path, errno: code)
        }
    }

    /// One `mkdir(2)` (mode 0755); fails if `path` exists.
    package static func makeDirectory(_ path: String) throws(FileSystemError) {
        guard SystemCalls.makeDirectory(path, mode: 0o755) == 0 else { throw .io(operation: "mkdir", path: path, errno: Errno.current.code) }
    }

    package static func exists(_ path: String) -> Bool {
        SystemCalls.status(path) != nil
    }

    package static func isDirectory(_ path: String) -> Bool {
        SystemCalls.status(path).map(SystemCalls.fileType) == .directory
    }

    package static func fileSize(_ path: String) -> Int64? {
        guard let info = SystemCalls.status(path) else { return nil }
        return Int64(info.st_size)
    }

    /// The size of a regular file (not following a final symbolic link), or nil when there is none.
    package static func regularFileSize(_ path: String) -> Int64? {
        guard let info = try? status(path), SystemCalls.fileType(info) == .regular else { return nil }
        return Int64(info.st_size)
    }

    /// `lstat`, or nil when the path does not exist.
    package static func status(_ path: String) throws(FileSystemError) -> FileStatus? {
        if let info = SystemCalls.linkStatus(path) { return info }
        let code = Errno.current
        if code == .noSuchFileOrDirectory { return nil }
        throw .io(operation: "lstat", path: path, errno: code.code)
    }

    /// Unlinks a file; a missing one is fine.
    package static func remove(_ path: String) {
        SystemCalls.unlink(path)
    }

    /// Removes a file or a whole tree; a missing path is fine.
    package static func removeTree(_ path: String) {
        guard let info = try? status(path) else { return }
        if SystemCalls.fileType(info) == .directory {
            try? FileManager.default.removeItem(atPath: path)
        } else {
            SystemCalls.unlink(path)
        }
    }

    /// Directory entries (names only); an empty list when the directory does not exist.
    package static func list(_ path: String) throws(FileSystemError) -> [String] {
        guard let names = SystemCalls.directoryEntries(path) else {
            let code = Errno.current
            if code == .noSuchFileOrDirectory { return [] }
            throw .io(operation: "opendir", path: path, errno: code.code)
        }
        return names.sorted()
    }

    /// The directory for temporary files (`TMPDIR`, else `/tmp`), without a trailing slash.
    package static var temporaryDirectory: String { FileManager.default.temporaryDirectory.path }

    /// The modification time of what is at `path` (not following a final symbolic link), or nil
    /// when nothing is there or it cannot be read.
    package static func modificationDate(_ path: String) -> Date? {
        guard let info = try? status(path) else { return nil }
        let time = SystemCalls.modificationTime(info)
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }

    /// Copies the regular file `source` to a new file `destination` (failing if it exists); a
    /// copy that fails part way is removed.
    package static func copy(_ source: String, to destination: String) throws(FileSystemError) {
        let input = try RegularFile.open(source, .readOnly)
        defer { SystemCalls.close(input) }
        let output = try NewFile(path: destination)
        do throws(FileSystemError) {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { chunk.deallocate() }
            while true {
                let got: Int
                do throws(Errno) { got = try POSIXIO.read(input, into: chunk) } catch {
                    throw .io(operation: "read", path: source, errno: error.code)
                }
                if got == 0 { break }
                try output.append(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
            }
            try output.finish(sync: false)
        } catch {
            remove(destination)
            throw error
        }
    }

    /// `rename(2)`: atomic within one file system, replacing `destination` if it is a file.
    package static func move(_ source: String, to destination: String) throws(FileSystemError) {
        guard SystemCalls.rename(source, to: destination) == 0 else {
            throw .io(operation: "rename \(source) to", path: destination, errno: Errno.current.code)
        }
    }

    /// `fsync` of a file or directory, so its data or new entries survive a crash. Opened without
    /// following a final symbolic link and without blocking (the fsync of a FIFO then fails).
    package static func fsync(path: String) throws(FileSystemError) {
        let fd = SystemCalls.open(path, [.readOnly, .closeOnExec, .noFollow, .nonBlocking, .noControllingTerminal])
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: Errno.current.code) }
        defer { SystemCalls.close(fd) }
        guard SystemCalls.fsync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: Errno.current.code) }
    }

    /// `fsync` of a directory; file systems that cannot sync directories (`EINVAL`) are accepted.
    package static func fsyncDirectory(_ path: String) throws(FileSystemError) {
        let fd = SystemCalls.open(path, [.readOnly, .directory, .closeOnExec])
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: Errno.current.code) }
        defer { SystemCalls.close(fd) }
        guard SystemCalls.fsync(fd) == 0 || Errno.current == .invalidArgument else {
            throw .io(operation: "fsync", path: path, errno: Errno.current.code)
        }
    }

    /// Renames `source` over `destination` and makes the rename durable.
    package static func moveIntoPlace(_ source: String, as destination: String) throws(FileSystemError) {
        guard SystemCalls.rename(source, to: destination) == 0 else {
            throw .io(operation: "rename", path: destination, errno: Errno.current.code)
        }
        try fsyncDirectory(PathText.parent(destination))
    }

    /// An unnamed file in `directory` (`O_TMPFILE`): nothing is left behind if the process is
    /// killed, and ``link(descriptor:to:)`` can give it a name once it is complete. Where the file
    /// system has no `O_TMPFILE`, a named file unlinked at once (`linkable` is then false).
    ///
    /// ```swift
    /// let (fd, linkable) = try FileSystem.createUnnamed(in: "cache/tmp")
    /// // … write …
    /// if linkable { try FileSystem.link(descriptor: fd, to: "cache/catalog-pages", via: "cache/tmp/\(UUID()).part") }
    /// ```
    package static func createUnnamed(in directory: String) throws(FileSystemError) -> (descriptor: Int32, linkable: Bool) {
        do throws(Errno) {
            if let unnamed = try SystemCalls.openUnnamedFile(in: directory) { return (unnamed, true) }
        } catch {
            throw .io(operation: "create an unnamed file in", path: directory, errno: error.code)
        }
        let path = "\(directory)/.unnamed-\(UUID().uuidString)"
        let fd = try RegularFile.open(path, [.readWrite, .create, .exclusive], mode: 0o600)
        SystemCalls.unlink(path)
        return (fd, false)
    }

    /// Gives a file made by ``createUnnamed(in:)`` (when `linkable`) the name `path`, atomically
    /// replacing what was there: it is linked under the name `temporary` (on the same file system,
    /// one the caller clears after a crash), then renamed.
    /// `beforeRename` runs once the temporary name exists (crash-safety tests stop the process there).
    package static func link(
        descriptor: Int32, to path: String, via temporary: String,
        beforeRename: () -> Void = {}
    ) throws(FileSystemError) {
        do throws(Errno) { try SystemCalls.linkDescriptor(descriptor, to: temporary) } catch {
            throw .io(operation: "link", path: temporary, errno: error.code)
        }
        beforeRename()
        do throws(FileSystemError) { try move(temporary, to: path) } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
    }

    /// True for a name ``temporaryPath(beside:)`` makes (`.<name>.tmp-<pid>-<8 hex>`): the only
    /// temporary files gifpack deletes as its own.
    package static func isOwnTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), let marker = name.range(of: ".tmp-", options: .backwards) else { return false }
        let parts = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(\.isNumber), parts[1].count == 8 else { return false }
        return parts[1].allSatisfy(\.isHexDigit)
    }

    /// A temporary name beside `path`, unique to this process and call.
    package static func temporaryPath(beside path: String) -> String {
        let unique = "\(SystemCalls.processID())-\(UUID().uuidString.prefix(8))"
        return "\(PathText.parent(path))/.\(PathText.lastComponent(path)).tmp-\(unique)"
    }

    /// Writes `bytes` to `path` atomically and durably; `beforeRename` runs once the temporary file
    /// is complete (crash-safety tests stop the process there).
    package static func writeAtomically(_ bytes: [UInt8], to path: String, beforeRename: () -> Void = {}) throws(FileSystemError) {
        try writeAtomically(to: path, beforeRename: beforeRename) { file throws(FileSystemError) in try file.append(bytes) }
    }

    /// ``writeAtomically(_:to:beforeRename:)`` of bytes `body` appends to the new file piece by
    /// piece, for content too large to hold.
    package static func writeAtomically(
        to path: String, beforeRename: () -> Void = {},
        _ body: (NewFile) throws(FileSystemError) -> Void
    ) throws(FileSystemError) {
        let temporary = temporaryPath(beside: path)
        do throws(FileSystemError) {
            let file = try NewFile(path: temporary, exclusive: false)
            try body(file)
            try file.finish(sync: true)
            beforeRename()
            try moveIntoPlace(temporary, as: path)
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
    }

    /// Appends `bytes` to `path`, creating it (mode 0644) if needed; only a regular file (``RegularFile``).
    package static func append(_ bytes: [UInt8], to path: String) throws(FileSystemError) {
        let fd = try RegularFile.open(path, [.writeOnly, .create, .append])
        defer { SystemCalls.close(fd) }
        do { try POSIXIO.writeAll(fd, bytes) } catch { throw .io(operation: "write", path: path, errno: error.code) }
    }

    /// The whole file, or nil when it does not exist; any other failure throws, and anything but a
    /// regular file is refused (``RegularFile``).
    package static func readAll(_ path: String) throws(FileSystemError) -> [UInt8]? {
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            if case .io(_, _, Errno.noSuchFileOrDirectory.code) = error { return nil }
            throw error
        }
        defer { SystemCalls.close(fd) }
        return try readAll(descriptor: fd, path: path)
    }

    /// What `fd` holds from its offset on, read in 64 KiB chunks until its end, or until more than
    /// `limit` bytes are in hand: a result longer than `limit` says that there was more (and is at
    /// most one chunk longer). `path` names the file in errors.
    package static func readAll(descriptor fd: Int32, path: String, limit: Int = .max) throws(FileSystemError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer) }
            }
            let got: Int
            do { got = try result.get() } catch { throw .io(operation: "read", path: path, errno: error.code) }
            if got == 0 { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }
}

/// A new file (mode 0644; with `exclusive`, `O_EXCL`: failing if it exists; without, only a regular
/// file is truncated, never one through a symbolic link: ``RegularFile``), written sequentially
/// and closed by ``finish(sync:)`` (fsynced first when asked). Dropped without `finish` it is
/// closed, leaving the partial file for the caller to remove.
///
/// ```swift
/// let file = try NewFile(path: "/cache.d/.staging/0001.gif")
/// try file.append(chunk)
/// try file.finish(sync: false)
/// ```
package final class NewFile {
    package let path: String
    private var fd: Int32
    package private(set) var bytesWritten: Int64 = 0

    package init(path: String, exclusive: Bool = true) throws(FileSystemError) {
        let fd: Int32
        do { fd = try RegularFile.open(path, [.writeOnly, .create, exclusive ? .exclusive : .truncate]) } catch {
            if case .io(_, _, let code) = error { throw .io(operation: "create", path: path, errno: code) }
            throw error
        }
        self.path = path
        self.fd = fd
    }

    deinit { if fd >= 0 { SystemCalls.close(fd) } }

    package func append(_ bytes: UnsafeRawBufferPointer) throws(FileSystemError) {
        do { try POSIXIO.writeAll(fd, bytes) } catch { throw .io(operation: "write", path: path, errno: error.code) }
        bytesWritten += Int64(bytes.count)
    }

    package func append(_ bytes: [UInt8]) throws(FileSystemError) {
        let result: Result<Void, FileSystemError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(FileSystemError) in try append(buffer) }
        }
        try result.get()
    }

    /// Closes the file, fsyncing it first when `sync` is true; with `writeBack` (and no `sync`) its
    /// pages are handed to the disk now (``SystemCalls/startWriteback(_:)``), for a later sync.
    package func finish(sync: Bool, writeBack: Bool = false) throws(FileSystemError) {
        if sync, SystemCalls.fsync(fd) != 0 { throw .io(operation: "fsync", path: path, errno: Errno.current.code) }
        if writeBack, !sync { SystemCalls.startWriteback(fd) }
        let result = SystemCalls.close(fd)
        fd = -1
        guard result == 0 else { throw .io(operation: "close", path: path, errno: Errno.current.code) }
    }
}

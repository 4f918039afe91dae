import Foundation
import GifPackFormat

/// The disk side of ``LazyGIFCache``: a directory several processes share. Every call blocks
/// (run it on a dedicated thread).
///
/// ```
/// <dir>/.gifpack-lazy-cache  the marker: this directory is gifpack's GIF cache
/// <dir>/indexes/<slot>       one per index source: "gifpack-lazy-index 4\n<URL>\n<ETag>\n<sequence>\n<signature>\n
///                            <Last-Modified>\n<validated URL>\n" then the plain index JSON; mtime = last validated.
///                            <ETag> and <Last-Modified> are those of <validated URL>, the file the index came in
///                            (index.json.zst or index.json), and are sent to it only. Version 3 slots (no last two lines) are read. <slot> is the SHA-256 (hex) of the
///                            normalised index URL and the trusted keys (``slotName(url:keys:)``), so each
///                            source and key set keeps its own index and rollback floor. <sequence> and
///                            <signature> (base64 of index.json.minisig) are set when the index was verified
///                            with trusted keys, empty otherwise.
/// <dir>/gifs/<sha256>.gif    verified GIFs, shared by every source; mtime = last used (the LRU clock)
/// <dir>/tmp/<UUID>.<kind>    downloads in progress (removed when older than an hour)
/// <dir>/lock                 flock: held exclusively while a file is renamed in or the cache is trimmed
/// <dir>/index                an earlier version's single index slot: read only as a trusted source's floor
/// ```
///
/// The directory is claimed before anything is written (``prepare()``): a missing or empty one
/// gets the marker, one with the marker is used, and one an earlier version made (nothing but
/// `index`, `gifs`, `tmp`, `lock`) is marked; anything else is refused
/// (``PackClientError/cacheNotManaged(path:detail:)``) with nothing created or deleted. Trimming
/// deletes only names the cache makes: `gifs/<64 hex>.gif` and `tmp/<UUID>.frame|gif|index`.
///
/// Files only ever appear by `rename(2)` of a complete, verified temporary file, so a reader sees
/// a whole file or none; a reader still holding an evicted file keeps reading it (unlinked, not
/// overwritten). Reads check the size and SHA-256 and drop a damaged file. Use order survives
/// processes because it lives in the files' mtimes, touched on every hit.
///
/// ```swift
/// let store = LazyGIFStore(directory: dir)
/// try store.prepare()
/// if let bytes = store.readGIF(sha256: hash, size: size) { … }
/// ```
struct LazyGIFStore: Sendable {
    static let indexMagic = "gifpack-lazy-index 4"
    /// The previous version's slots: read (without Last-Modified and validated URL), never written.
    static let previousIndexMagic = "gifpack-lazy-index 3"
    /// Temporary files older than this are leftovers of a killed process.
    static let staleTemporarySeconds = 3600
    /// The file that marks a directory as gifpack's GIF cache.
    static let marker = ".gifpack-lazy-cache"
    /// The kinds of temporary file (`tmp/<UUID>.<kind>`) the cache makes.
    static let temporaryKinds: Set<String> = ["frame", "gif", "index"]
    /// What an earlier version left at the top level (it made no marker).
    static let earlierNames: Set<String> = ["index", "gifs", "tmp", "lock"]

    let directory: String

    var gifsPath: String { "\(directory)/gifs" }
    var temporaryPath: String { "\(directory)/tmp" }
    var indexesPath: String { "\(directory)/indexes" }
    /// An earlier version's one index slot.
    var legacyIndexPath: String { "\(directory)/index" }
    var lockPath: String { "\(directory)/lock" }
    var markerPath: String { "\(directory)/\(Self.marker)" }
    func gifPath(_ sha256: String) -> String { "\(gifsPath)/\(sha256).gif" }
    func indexPath(slot: String) -> String { "\(indexesPath)/\(slot)" }

    /// Claims the directory (see above), then makes its folders.
    func prepare() throws(PackClientError) {
        if !isMarked() { try claim() }
        try FileOps.makeDirectories(gifsPath)
        try FileOps.makeDirectories(temporaryPath)
        try FileOps.makeDirectories(indexesPath)
    }

    /// True when the marker is there (a regular file).
    private func isMarked() -> Bool {
        SystemCalls.linkStatus(markerPath).map(SystemCalls.fileType) == .regular
    }

    /// Marks a missing or empty directory, or one an earlier version made; refuses anything else
    /// before creating or deleting a thing in it.
    private func claim() throws(PackClientError) {
        if let info = SystemCalls.status(directory) {
            guard SystemCalls.fileType(info) == .directory else {
                throw .cacheNotManaged(path: directory, detail: "it is not a directory (\(FileKind.name(info.st_mode)))")
            }
            let names: [String]
            do { names = try FileSystem.list(directory) } catch { throw PackClientError(error) }
            let foreign = names.filter { !Self.isOwnTopLevelName($0) }.sorted()
            guard foreign.isEmpty, !names.contains("index") || hasEarlierIndexMagic() else {
                let examples = (foreign.isEmpty ? ["index"] : foreign).prefix(3).map { SafePath.printable($0) }.joined(separator: ", ")
                throw .cacheNotManaged(path: directory, detail: "it is not empty (\(examples)\(foreign.count > 3 ? ", …" : "")) and has no "
                    + "\(Self.marker) marker; gifpack keeps its GIF cache only in a new or empty directory, or one it made")
            }
        } else if Errno.current == .noSuchFileOrDirectory {
            try FileOps.makeDirectories(directory)
        } else {
            throw .posix(directory, "stat")
        }
        // Written aside and renamed in: processes claiming at once all succeed.
        let temporary = "\(markerPath).\(UUID().uuidString)"
        let text = "This directory is gifpack's GIF cache. gifpack refuses to use a non-empty directory without this file.\n"
        do {
            try FileOps.writeNew(temporary, Array(text.utf8))
            try FileOps.move(temporary, to: markerPath)
        } catch {
            FileOps.remove(temporary)
            throw error
        }
    }

    /// The top-level names the cache makes (an earlier version's included), and marker files being renamed in.
    static func isOwnTopLevelName(_ name: String) -> Bool {
        if earlierNames.contains(name) || name == "indexes" || name == marker { return true }
        return name.hasPrefix(marker + ".") && UUID(uuidString: String(name.dropFirst(marker.count + 1))) != nil
    }

    /// True when `<dir>/index` starts like an index an earlier version stored.
    private func hasEarlierIndexMagic() -> Bool {
        guard let fd = try? RegularFile.open(legacyIndexPath, .readOnly) else { return false }
        defer { SystemCalls.close(fd) }
        let prefix = Array("gifpack-lazy-index ".utf8)
        var head = [UInt8](repeating: 0, count: prefix.count)
        let got = head.withUnsafeMutableBytes { buffer in (try? POSIXIO.read(fd, into: buffer, at: 0)) ?? 0 }
        return got == prefix.count && head == prefix
    }

    /// `<sha256>.gif` with 64 lowercase hex digits: a name the cache stores GIFs under.
    static func isGIFName(_ name: String) -> Bool {
        name.hasSuffix(".gif") && SafePath.isSHA256(String(name.dropLast(4)))
    }

    /// `<UUID>.<kind>`: a name ``temporaryFile(_:)`` makes.
    static func isTemporaryName(_ name: String) -> Bool {
        guard let dot = name.firstIndex(of: ".") else { return false }
        return UUID(uuidString: String(name[..<dot])) != nil && temporaryKinds.contains(String(name[name.index(after: dot)...]))
    }

    /// A fresh name in `tmp/`.
    func temporaryFile(_ kind: String) -> String {
        precondition(Self.temporaryKinds.contains(kind), "an unknown kind of temporary file")
        return "\(temporaryPath)/\(UUID().uuidString).\(kind)"
    }

    // MARK: GIFs

    /// The GIF when a regular file with exactly this size and hash is stored (its use time
    /// touched); a damaged file is removed and nil returned, and so is anything but a regular file
    /// at the GIF's name (a FIFO, a symbolic link: never opened through, ``RegularFile``).
    func readGIF(sha256: String, size: Int64) -> [UInt8]? {
        guard SafePath.isSHA256(sha256) else { return nil }
        let path = gifPath(sha256)
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            if case .notRegularFile = error { SystemCalls.unlink(path) }
            return nil
        }
        defer { SystemCalls.close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(max(0, size)) + 1)
        // One byte more than the size: a longer file reads past it and is refused below.
        let read: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer, at: 0) }
        }
        guard case .success(let got) = read else { return nil }
        guard got == Int(size) else {
            SystemCalls.unlink(path)
            return nil
        }
        bytes.removeLast()
        guard StreamingSHA256.of(bytes) == sha256 else {
            SystemCalls.unlink(path)
            return nil
        }
        touch(path)
        return bytes
    }

    /// Sets a file's mtime to now: it was just used.
    func touch(_ path: String) {
        _ = SystemCalls.touch(path)
    }

    /// Renames the verified file `temporary` in as the GIF `sha256`, then trims the cache to
    /// `byteLimit` bytes, oldest use first, sparing the new file. Under the lock.
    func storeGIF(_ temporary: String, sha256: String, byteLimit: Int64) throws(PackClientError) {
        try withLock { () throws(PackClientError) in
            try FileOps.move(temporary, to: gifPath(sha256))
            try trim(to: byteLimit, sparing: "\(sha256).gif")
        }
    }

    /// Bytes of GIFs stored; a `gifs/` that cannot be listed throws.
    func storedBytes() throws(PackClientError) -> Int64 {
        try listGIFs().reduce(0) { $0 + $1.size }
    }

    /// A file's modification time in seconds, clamped to ±2^40 (35,000 years) so that the ages
    /// computed from it never overflow, whatever time the file system holds.
    private static func seconds(_ info: FileStatus) -> Int {
        min(max(SystemCalls.modificationTime(info).tv_sec, -(1 << 40)), 1 << 40)
    }

    /// A use time in nanoseconds, for ordering; saturating: a file's time is not the cache's to
    /// trust (one set centuries ahead sorts last instead of overflowing).
    private static func nanoseconds(_ time: timespec) -> Int {
        let (scaled, overflow) = time.tv_sec.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return time.tv_sec < 0 ? .min : .max }
        let (sum, carried) = scaled.addingReportingOverflow(time.tv_nsec)
        return carried ? (time.tv_nsec < 0 ? .min : .max) : sum
    }

    private struct StoredFile {
        var name: String
        var size: Int64
        var used: Int
    }

    private func listGIFs() throws(PackClientError) -> [StoredFile] {
        try FileOps.list(gifsPath).compactMap { name in
            guard Self.isGIFName(name) else { return nil }
            guard let info = SystemCalls.linkStatus("\(gifsPath)/\(name)"), SystemCalls.fileType(info) == .regular else { return nil }
            return StoredFile(name: name, size: Int64(info.st_size), used: Self.nanoseconds(SystemCalls.modificationTime(info)))
        }
    }

    /// Removes least recently used GIFs until at most `limit` bytes remain, and stale temporaries:
    /// only files named as the cache names them. A directory that cannot be listed throws.
    private func trim(to limit: Int64, sparing kept: String) throws(PackClientError) {
        let files = try listGIFs()
        var total = files.reduce(0) { $0 + $1.size }
        for file in files.sorted(by: { ($0.used, $0.name) < ($1.used, $1.name) }) where total > limit && file.name != kept {
            if SystemCalls.unlink("\(gifsPath)/\(file.name)") == 0 || Errno.current == .noSuchFileOrDirectory { total -= file.size }
        }
        let now = SystemCalls.currentTime()
        for name in try FileOps.list(temporaryPath) where Self.isTemporaryName(name) {
            let path = "\(temporaryPath)/\(name)"
            if let info = SystemCalls.linkStatus(path), SystemCalls.fileType(info) == .regular,
               now - Self.seconds(info) > Self.staleTemporarySeconds {
                SystemCalls.unlink(path)
            }
        }
    }

    // MARK: Index

    /// The stored index bytes, where they came from, their ETag and when they were last validated
    /// (seconds since 1970); with the signature and sequence when they were verified with trusted keys.
    struct StoredIndex: Sendable {
        var json: Data
        /// The URL (as ``LazyGIFStore/normalisedURL(_:)`` keeps it; an earlier version's slot: ``LazyGIFStore/oneLine(_:)``).
        var url: String
        var etag: String?
        var validatedAt: Int
        /// `index.json.minisig` as it verified these bytes.
        var signature: Data?
        /// The index's `sequence`, recorded only when it verified.
        var verifiedSequence: Int?
        var lastModified: String? = nil
        /// The file ``etag`` and ``lastModified`` belong to (`index.json.zst` or `index.json`); nil in
        /// an earlier version's slot, whose ETag was the plain index's.
        var validatedURL: String? = nil

        /// What a conditional request for this index carries.
        var validators: IndexValidators? {
            guard etag != nil || lastModified != nil else { return nil }
            return IndexValidators(url: validatedURL ?? url, etag: etag, lastModified: lastModified)
        }

        /// True when stored from `url` (any spelling ``LazyGIFStore/normalisedURL(_:)`` makes the same).
        func isFrom(_ url: String) -> Bool {
            self.url == LazyGIFStore.normalisedURL(url) || self.url == LazyGIFStore.oneLine(url)
        }
    }

    /// The slot of an index source: the SHA-256 (hex) of the normalised URL and the trusted keys
    /// (sorted, without repeats; none for an index read without trusted keys). Two sources, or
    /// one URL read with and without trusted keys, never share an index or a rollback floor.
    static func slotName(url: String, keys: [String]) -> String {
        let text = (["gifpack-lazy-slot 1", normalisedURL(url)] + Set(keys.map(oneLine)).sorted()).joined(separator: "\n")
        return StreamingSHA256.of(Array(text.utf8))
    }

    /// `url` with its scheme and host in lower case, without a default port, user name, password
    /// or fragment, and `/` for an empty path: the spellings of one index URL give one slot.
    static func normalisedURL(_ url: String) -> String {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else { return oneLine(url) }
        parts.scheme = scheme
        if let host = parts.percentEncodedHost { parts.percentEncodedHost = host.lowercased() }
        if (scheme == "http" && parts.port == 80) || (scheme == "https" && parts.port == 443) { parts.port = nil }
        parts.user = nil
        parts.password = nil
        parts.fragment = nil
        if parts.percentEncodedPath.isEmpty { parts.percentEncodedPath = "/" }
        return oneLine(parts.string ?? url)
    }

    /// The index stored in `slot` (nil when there is none or it is unreadable).
    func readIndex(slot: String, maxBytes: Int64) -> StoredIndex? {
        readIndex(at: indexPath(slot: slot), maxBytes: maxBytes)
    }

    /// The index an earlier version stored in its one slot, whatever URL it came from.
    func readLegacyIndex(maxBytes: Int64) -> StoredIndex? {
        readIndex(at: legacyIndexPath, maxBytes: maxBytes)
    }

    private func readIndex(at path: String, maxBytes: Int64) -> StoredIndex? {
        guard let info = SystemCalls.status(path),
              let data = try? PackIndexSource.readFile(path, maxBytes: maxBytes + 16384) else { return nil }
        let bytes = [UInt8](data)
        var lines: [String] = []
        var start = bytes.startIndex
        var wanted = 5
        while lines.count < wanted, let end = bytes[start...].firstIndex(of: 0x0A) {
            lines.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end + 1
            if lines.count == 1 {
                guard lines[0] == Self.indexMagic || lines[0] == Self.previousIndexMagic else { return nil }
                wanted = lines[0] == Self.indexMagic ? 7 : 5
            }
        }
        guard lines.count == wanted else { return nil }
        return StoredIndex(json: Data(bytes[start...]), url: lines[1], etag: lines[2].isEmpty ? nil : lines[2],
                           validatedAt: Self.seconds(info), signature: Data(base64Encoded: lines[4]).flatMap { $0.isEmpty ? nil : $0 },
                           verifiedSequence: Int(lines[3]),
                           lastModified: wanted == 7 && !lines[5].isEmpty ? lines[5] : nil,
                           validatedURL: wanted == 7 && !lines[6].isEmpty ? lines[6] : nil)
    }

    /// Replaces the index stored in `slot` (temporary file and rename, under the lock), with `url`
    /// as given (``normalisedURL(_:)`` keeps it). `signature` and `verifiedSequence` only for an
    /// index verified with trusted keys. `admit` sees the verified sequence the slot holds, under
    /// the lock, just before the rename, and may refuse: another process may have stored a newer
    /// index since this one was accepted.
    func writeIndex(_ json: Data, slot: String, url: String, validators: IndexValidators?, signature: Data? = nil, verifiedSequence: Int? = nil,
                    maxBytes: Int64, admit: (Int?) throws(PackClientError) -> Void = { _ in }) throws(PackClientError) {
        let temporary = temporaryFile("index")
        let path = indexPath(slot: slot)
        do {
            let head = "\(Self.indexMagic)\n\(Self.normalisedURL(url))\n\(Self.oneLine(validators?.etag ?? ""))\n"
                + "\(verifiedSequence.map(String.init) ?? "")\n\(signature?.base64EncodedString() ?? "")\n"
                + "\(Self.oneLine(validators?.lastModified ?? ""))\n\(Self.oneLine(validators?.url ?? ""))\n"
            try FileOps.writeNew(temporary, Array(head.utf8) + [UInt8](json))
            try withLock { () throws(PackClientError) in
                try admit(readIndex(at: path, maxBytes: maxBytes)?.verifiedSequence)
                try FileOps.move(temporary, to: path)
            }
        } catch {
            FileOps.remove(temporary)
            throw error
        }
    }

    /// `text` without control characters, so it fits on one line.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
    }

    /// Marks the index in `slot` as validated now (a 304).
    func touchIndex(slot: String) { touch(indexPath(slot: slot)) }

    // MARK: Lock

    func withLock<T>(_ body: () throws(PackClientError) -> T) throws(PackClientError) -> T {
        let fd = try FileOps.openRegular(lockPath, [.readWrite, .create])
        defer { SystemCalls.close(fd) }
        while SystemCalls.lockExclusive(fd, wait: true) != 0 {
            guard Errno.current == .interrupted else { throw .posix(lockPath, "flock") }
        }
        defer { SystemCalls.unlock(fd) }
        return try body()
    }
}

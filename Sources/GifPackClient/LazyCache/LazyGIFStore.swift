import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport
import GifPackIndexReader

/// The disk side of ``LazyGIFCache``: a directory several processes share. Every call blocks
/// (run it on a dedicated thread).
///
/// ```
/// <dir>/.gifpack-lazy-cache  the marker: this directory is gifpack's GIF cache
/// <dir>/indexes/<slot>       one per index source: "gifpack-lazy-index 4\n<URL>\n<ETag>\n<sequence>\n<signature>\n
///                            <Last-Modified>\n<validated URL>\n" then the plain index JSON; mtime = last validated.
///                            <ETag> and <Last-Modified> are those of <validated URL>, the file the index came in
///                            (index.json.zst or index.json), and are sent to it only. <slot> is the SHA-256 (hex) of the
///                            normalised index URL and the trusted keys (``slotName(url:keys:)``), so each
///                            source and key set keeps its own index. <sequence> and <signature> (base64 of
///                            index.json.minisig) are set when the index was verified with trusted keys, empty
///                            otherwise. The rollback floor belongs to the URL: the highest <sequence> of any
///                            slot stored from it, whatever keys verified it (``floor(url:)``).
/// <dir>/gifs/<sha256>.gif    verified GIFs, shared by every source; mtime = last used (the LRU clock)
/// <dir>/tmp/<UUID>.<kind>    downloads in progress (removed when older than an hour)
/// <dir>/lock                 flock: held exclusively while a file is renamed in or the cache is trimmed
/// ```
///
/// The directory is claimed before anything is written (``prepare()``): a missing or empty one
/// gets the marker, one with the marker is used; anything else is refused
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
    /// Temporary files older than this are leftovers of a killed process.
    static let staleTemporarySeconds = 3600
    /// The file that marks a directory as gifpack's GIF cache.
    static let marker = ".gifpack-lazy-cache"
    /// The kinds of temporary file (`tmp/<UUID>.<kind>`) the cache makes.
    enum TemporaryKind: String, CaseIterable {
        case frame, gif, index
    }

    let directory: String

    var gifsPath: String { "\(directory)/gifs" }
    var temporaryPath: String { "\(directory)/tmp" }
    var indexesPath: String { "\(directory)/indexes" }
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

    /// Marks a missing or empty directory; refuses anything else before creating or deleting a
    /// thing in it. A directory another process claimed since ``prepare()`` looked (its marker,
    /// then its folders, there by the time this lists it) is the cache, not a foreign directory.
    func claim() throws(PackClientError) {
        if let info = SystemCalls.status(directory) {
            guard SystemCalls.fileType(info) == .directory else {
                throw .cacheNotManaged(path: directory, detail: "it is not a directory (\(FileKind.name(info.st_mode)))")
            }
            let names: [String]
            do { names = try FileSystem.list(directory) } catch { throw PackClientError(error) }
            if names.contains(Self.marker), isMarked() { return }
            let foreign = names.filter { !Self.isMarkerName($0) }.sorted()
            guard foreign.isEmpty else {
                let examples = foreign.prefix(3).map { SafePath.printable($0) }.joined(separator: ", ")
                throw .cacheNotManaged(
                    path: directory,
                    detail: "it is not empty (\(examples)\(foreign.count > 3 ? ", …" : "")) and has no "
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

    /// The marker, or a marker file another process is renaming in (claims at once all succeed).
    static func isMarkerName(_ name: String) -> Bool {
        name == marker || (name.hasPrefix(marker + ".") && UUID(uuidString: String(name.dropFirst(marker.count + 1))) != nil)
    }

    /// At most the first `maxBytes` bytes of the regular file at `path` (not followed when a link, a
    /// FIFO never waited for); nil when it is not one or cannot be read.
    private static func readPrefix(_ path: String, maxBytes: Int) -> [UInt8]? {
        guard let fd = try? RegularFile.open(path, .readOnly) else { return nil }
        defer { SystemCalls.close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxBytes)
        guard let got = bytes.withUnsafeMutableBytes({ buffer in try? POSIXIO.read(fd, into: buffer, at: 0) }) else { return nil }
        return Array(bytes[0..<got])
    }

    /// `<sha256>.gif` with 64 lowercase hex digits: a name the cache stores GIFs under.
    static func isGIFName(_ name: String) -> Bool {
        name.hasSuffix(".gif") && SafePath.isSHA256(String(name.dropLast(4)))
    }

    /// `<UUID>.<kind>`: a name ``temporaryFile(_:)`` makes.
    static func isTemporaryName(_ name: String) -> Bool {
        guard let dot = name.firstIndex(of: ".") else { return false }
        return UUID(uuidString: String(name[..<dot])) != nil && TemporaryKind(rawValue: String(name[name.index(after: dot)...])) != nil
    }

    /// A fresh name in `tmp/`.
    func temporaryFile(_ kind: TemporaryKind) -> String {
        "\(temporaryPath)/\(UUID().uuidString).\(kind.rawValue)"
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

    /// Writes the verified GIF `bytes` to a temporary file and renames it in as `sha256`
    /// (``storeGIF(_:sha256:byteLimit:)``). On a full disk (ENOSPC, EDQUOT) the least recently
    /// used GIFs are evicted until the new one's size is freed, and the write is tried once more;
    /// nothing is evicted when the GIFs stored could not make that room together. False when the
    /// GIF is not stored: the bytes are verified, and the caller serves them anyway.
    @discardableResult
    func keepGIF(_ bytes: [UInt8], sha256: String, byteLimit: Int64) -> Bool {
        for attempt in 0..<2 {
            let temporary = temporaryFile(.gif)
            do {
                try FileOps.writeNew(temporary, bytes)
                try storeGIF(temporary, sha256: sha256, byteLimit: byteLimit)
                return true
            } catch {
                FileOps.remove(temporary)
                guard attempt == 0, case .fileSystem(_, _, let code) = error, Errno(code).meansDiskFull else { return false }
                let needed = Int64(bytes.count)
                let freed = try? withLock { () throws(PackClientError) -> Int64 in
                    try evictOldest(sparing: "\(sha256).gif") { freed, stored in freed < needed && freed + stored >= needed }
                }
                guard let freed, freed > 0 else { return false }
            }
        }
        return false
    }

    /// Bytes of GIFs stored; a `gifs/` that cannot be listed throws.
    func storedBytes() throws(PackClientError) -> Int64 {
        try listGIFs().reduce(0) { $0 + $1.size }
    }

    /// A file's modification time in seconds, clamped to ±2^40 (35,000 years) so that the ages
    /// computed from it never overflow, whatever time the file system holds.
    static func seconds(_ info: FileStatus) -> Int {
        FileStamp.clamped(SystemCalls.modificationTime(info).tv_sec)
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
        try evictOldest(sparing: kept) { _, stored in stored > limit }
        let now = SystemCalls.currentTime()
        for name in try FileOps.list(temporaryPath) where Self.isTemporaryName(name) {
            let path = "\(temporaryPath)/\(name)"
            if let info = SystemCalls.linkStatus(path), SystemCalls.fileType(info) == .regular,
                now - Self.seconds(info) > Self.staleTemporarySeconds
            {
                SystemCalls.unlink(path)
            }
        }
    }

    /// Removes GIFs, least recently used first and never `kept`, while `more(freed, stored)` holds
    /// for the bytes freed so far and those still stored; returns the bytes freed.
    @discardableResult
    private func evictOldest(sparing kept: String, while more: (_ freed: Int64, _ stored: Int64) -> Bool) throws(PackClientError) -> Int64 {
        let files = try listGIFs()
        var total = files.reduce(0) { $0 + $1.size }
        var freed: Int64 = 0
        for file in files.sorted(by: { ($0.used, $0.name) < ($1.used, $1.name) }) where file.name != kept {
            guard more(freed, total) else { break }
            if SystemCalls.unlink("\(gifsPath)/\(file.name)") == 0 || Errno.current == .noSuchFileOrDirectory {
                total -= file.size
                freed += file.size
            }
        }
        return freed
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
        func isFrom(_ url: String) -> Bool { LazyGIFStore.isStored(self.url, from: url) }
    }

    /// True when a slot's URL line, `stored`, names `url` (any spelling ``normalisedURL(_:)`` makes the same).
    static func isStored(_ stored: String, from url: String) -> Bool {
        stored == normalisedURL(url) || stored == oneLine(url)
    }

    /// The slot of an index source: the SHA-256 (hex) of the normalised URL and the trusted keys
    /// (sorted, without repeats; none for an index read without trusted keys). Two sources, or
    /// one URL read with and without trusted keys, never share an index or a rollback floor.
    static func slotName(url: String, keys: [String]) -> String {
        let text = (["gifpack-lazy-slot 1", normalisedURL(url)] + Set(keys.map(oneLine)).sorted()).joined(separator: "\n")
        return StreamingSHA256.of(Array(text.utf8))
    }

    /// `url` with its scheme and host in lower case, without a default port, user name, password
    /// (``URLCredentials``) or fragment, and `/` for an empty path: the spellings of one index URL
    /// give one slot.
    static func normalisedURL(_ url: String) -> String {
        let url = URLCredentials.redacted(url)
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else { return oneLine(url) }
        parts.scheme = scheme
        if let host = parts.percentEncodedHost { parts.percentEncodedHost = host.lowercased() }
        if (scheme == "http" && parts.port == 80) || (scheme == "https" && parts.port == 443) { parts.port = nil }
        parts.fragment = nil
        if parts.percentEncodedPath.isEmpty { parts.percentEncodedPath = "/" }
        return oneLine(parts.string ?? url)
    }

    /// The index stored in `slot` (nil when there is none or it is unreadable).
    func readIndex(slot: String, maxBytes: Int64) -> StoredIndex? {
        readIndex(at: indexPath(slot: slot), maxBytes: maxBytes)
    }

    private func readIndex(at path: String, maxBytes: Int64) -> StoredIndex? {
        guard let info = SystemCalls.status(path),
            let data = try? PackIndexSource.readFile(path, maxBytes: maxBytes + Self.maxHeadBytes)
        else { return nil }
        let bytes = [UInt8](data)
        guard let (lines, start) = Self.head(of: bytes) else { return nil }
        return StoredIndex(
            json: Data(bytes[start...]), url: lines[1], etag: lines[2].isEmpty ? nil : lines[2],
            validatedAt: Self.seconds(info), signature: Data(base64Encoded: lines[4]).flatMap { $0.isEmpty ? nil : $0 },
            verifiedSequence: Int(lines[3]), lastModified: lines[5].isEmpty ? nil : lines[5],
            validatedURL: lines[6].isEmpty ? nil : lines[6])
    }

    /// The most bytes a slot's head (the lines before the index JSON) may take.
    static let maxHeadBytes: Int64 = 16384

    /// A slot's 7 head lines and where the JSON after them starts; nil when `bytes` do not start
    /// with a whole head.
    private static func head(of bytes: [UInt8]) -> (lines: [String], body: Int)? {
        var lines: [String] = []
        var start = bytes.startIndex
        while lines.count < 7, let end = bytes[start...].firstIndex(of: 0x0A) {
            lines.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end + 1
            if lines.count == 1, lines[0] != indexMagic { return nil }
        }
        return lines.count == 7 ? (lines, start) : nil
    }

    /// The rollback floor of `url`: the highest verified sequence recorded by any slot stored from
    /// it, whatever trusted keys verified it, so a change of the key set (a rotation) keeps it. Only
    /// the slots' heads are read; a slot that cannot be read counts for nothing, a folder that cannot
    /// be listed throws.
    func floor(url: String) throws(PackClientError) -> Int? {
        let names: [String]
        do { names = try FileSystem.list(indexesPath) } catch { throw PackClientError(error) }
        return names.compactMap { name -> Int? in
            guard SafePath.isSHA256(name), let bytes = Self.readPrefix(indexPath(slot: name), maxBytes: Int(Self.maxHeadBytes)),
                let (lines, _) = Self.head(of: bytes), Self.isStored(lines[1], from: url)
            else { return nil }
            return Int(lines[3])
        }.max()
    }

    /// Replaces the index stored in `slot` (temporary file and rename, under the lock), with `url`
    /// as given (``normalisedURL(_:)`` keeps it). `signature` and `verifiedSequence` only for an
    /// index verified with trusted keys. `admit` sees the URL's floor (``floor(url:)``), under the
    /// lock, just before the rename of a verified index, and may refuse: another process may have
    /// stored a newer index since this one was accepted.
    func writeIndex(
        _ json: Data, slot: String, url: String, validators: IndexValidators?, signature: Data?, verifiedSequence: Int?,
        admit: (Int?) throws(PackClientError) -> Void
    ) throws(PackClientError) {
        let temporary = temporaryFile(.index)
        let path = indexPath(slot: slot)
        do {
            let head =
                "\(Self.indexMagic)\n\(Self.normalisedURL(url))\n\(Self.oneLine(validators?.etag ?? ""))\n"
                + "\(verifiedSequence.map(String.init) ?? "")\n\(signature?.base64EncodedString() ?? "")\n"
                + "\(Self.oneLine(validators?.lastModified ?? ""))\n\(Self.oneLine(validators?.url ?? ""))\n"
            try FileOps.writeNew(temporary, Array(head.utf8) + [UInt8](json))
            try withLock { () throws(PackClientError) in
                if verifiedSequence != nil { try admit(try floor(url: url)) }
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

/// What ``LazyGIFCache`` asks of the store per lookup (one `stat` of its slot) and what a
/// ``GIFLoader``'s installer reads of it (the URL's floor, before the cache has its folders).
///
/// ```swift
/// if store.indexIdentity(slot: slot) == remembered.identity { /* no read */ }
/// ```
extension LazyGIFStore {
    /// What tells one stored index file from another without reading it (a rename in, or a touch
    /// after a `304`, changes it).
    typealias FileIdentity = FileStamp

    /// The identity of the index file in `slot` (one `stat`), nil when there is none.
    func indexIdentity(slot: String) -> FileIdentity? {
        guard let info = SystemCalls.status(indexPath(slot: slot)), SystemCalls.fileType(info) == .regular else { return nil }
        return FileStamp(info)
    }

    /// ``floor(url:)`` of a cache that may not be there yet: nil when it has no `indexes/` folder.
    func floorIfPresent(url: String) throws(PackClientError) -> Int? {
        guard SystemCalls.status(indexesPath) != nil else { return nil }
        return try floor(url: url)
    }
}

import Foundation
import GifPackFormat
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk side of ``LazyGIFCache``: a directory several processes share. Every call blocks
/// (run it on a dedicated thread).
///
/// ```
/// <dir>/index        "gifpack-lazy-index 3\n<URL>\n<ETag>\n<sequence>\n<signature>\n" then the index JSON;
///                    mtime = last validated. <sequence> and <signature> (base64 of index.json.minisig) are
///                    set when the index was verified with trusted keys, empty otherwise.
/// <dir>/gifs/<sha256>.gif   verified GIFs; mtime = last used (the LRU clock)
/// <dir>/tmp/         downloads in progress (removed when older than an hour)
/// <dir>/lock         flock: held exclusively while a file is renamed in or the cache is trimmed
/// ```
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
    static let indexMagic = "gifpack-lazy-index 3"
    /// Temporary files older than this are leftovers of a killed process.
    static let staleTemporarySeconds = 3600

    let directory: String

    var gifsPath: String { "\(directory)/gifs" }
    var temporaryPath: String { "\(directory)/tmp" }
    var indexPath: String { "\(directory)/index" }
    var lockPath: String { "\(directory)/lock" }
    func gifPath(_ sha256: String) -> String { "\(gifsPath)/\(sha256).gif" }

    func prepare() throws(PackClientError) {
        try FileOps.makeDirectories(gifsPath)
        try FileOps.makeDirectories(temporaryPath)
    }

    /// A fresh name in `tmp/`.
    func temporaryFile(_ suffix: String) -> String { "\(temporaryPath)/\(UUID().uuidString).\(suffix)" }

    // MARK: GIFs

    /// The GIF when a file with exactly this size and hash is stored (its use time touched); a
    /// damaged file is removed and nil returned.
    func readGIF(sha256: String, size: Int64) -> [UInt8]? {
        let path = gifPath(sha256)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(max(0, size)) + 1)
        // One byte more than the size: a longer file reads past it and is refused below.
        let read: Result<Int, Errno> = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try POSIXIO.read(fd, into: buffer, at: 0) }
        }
        guard case .success(let got) = read else { return nil }
        guard got == Int(size) else {
            unlink(path)
            return nil
        }
        bytes.removeLast()
        guard StreamingSHA256.of(bytes) == sha256 else {
            unlink(path)
            return nil
        }
        touch(path)
        return bytes
    }

    /// Sets a file's mtime to now: it was just used.
    func touch(_ path: String) {
        let now = (1 << 30) - 1  // UTIME_NOW, a macro Swift does not import
        var times = [timespec(tv_sec: 0, tv_nsec: now), timespec(tv_sec: 0, tv_nsec: now)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Renames the verified file `temporary` in as the GIF `sha256`, then trims the cache to
    /// `byteLimit` bytes, oldest use first, sparing the new file. Under the lock.
    func storeGIF(_ temporary: String, sha256: String, byteLimit: Int64) throws(PackClientError) {
        try withLock { () throws(PackClientError) in
            try FileOps.move(temporary, to: gifPath(sha256))
            trim(to: byteLimit, sparing: "\(sha256).gif")
        }
    }

    /// Bytes of GIFs stored.
    func storedBytes() -> Int64 {
        listGIFs().reduce(0) { $0 + $1.size }
    }

    private struct StoredFile {
        var name: String
        var size: Int64
        var used: Int
    }

    private func listGIFs() -> [StoredFile] {
        FileOps.list(gifsPath).compactMap { name in
            guard name.hasSuffix(".gif") else { return nil }
            var info = stat()
            guard lstat("\(gifsPath)/\(name)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return StoredFile(name: name, size: Int64(info.st_size), used: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec)
        }
    }

    /// Removes least recently used GIFs until at most `limit` bytes remain, and stale temporaries.
    private func trim(to limit: Int64, sparing kept: String) {
        let files = listGIFs()
        var total = files.reduce(0) { $0 + $1.size }
        for file in files.sorted(by: { ($0.used, $0.name) < ($1.used, $1.name) }) where total > limit && file.name != kept {
            if unlink("\(gifsPath)/\(file.name)") == 0 || errno == ENOENT { total -= file.size }
        }
        let now = time(nil)
        for name in FileOps.list(temporaryPath) {
            var info = stat()
            let path = "\(temporaryPath)/\(name)"
            if lstat(path, &info) == 0, now - info.st_mtim.tv_sec > Self.staleTemporarySeconds { unlink(path) }
        }
    }

    // MARK: Index

    /// The stored index bytes, where they came from, their ETag and when they were last validated
    /// (seconds since 1970); with the signature and sequence when they were verified with trusted keys.
    struct StoredIndex: Sendable {
        var json: Data
        /// The URL (as ``LazyGIFStore/oneLine(_:)`` keeps it).
        var url: String
        var etag: String?
        var validatedAt: Int
        /// `index.json.minisig` as it verified these bytes.
        var signature: Data?
        /// The index's `sequence`, recorded only when it verified.
        var verifiedSequence: Int?

        func isFrom(_ url: String) -> Bool { self.url == LazyGIFStore.oneLine(url) }
    }

    /// The stored index, whatever URL it came from (nil when there is none or it is unreadable).
    func readIndex(maxBytes: Int64) -> StoredIndex? {
        var info = stat()
        guard stat(indexPath, &info) == 0,
              let data = try? PackIndexSource.readFile(indexPath, maxBytes: maxBytes + 16384) else { return nil }
        let bytes = [UInt8](data)
        var lines: [String] = []
        var start = bytes.startIndex
        while lines.count < 5, let end = bytes[start...].firstIndex(of: 0x0A) {
            lines.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end + 1
        }
        guard lines.count == 5, lines[0] == Self.indexMagic else { return nil }
        return StoredIndex(json: Data(bytes[start...]), url: lines[1], etag: lines[2].isEmpty ? nil : lines[2],
                           validatedAt: info.st_mtim.tv_sec, signature: Data(base64Encoded: lines[4]).flatMap { $0.isEmpty ? nil : $0 },
                           verifiedSequence: Int(lines[3]))
    }

    /// Replaces the stored index (temporary file and rename, under the lock). `signature` and
    /// `verifiedSequence` only for an index verified with trusted keys.
    func writeIndex(_ json: Data, url: String, etag: String?, signature: Data? = nil, verifiedSequence: Int? = nil) throws(PackClientError) {
        let temporary = temporaryFile("index")
        do {
            let head = "\(Self.indexMagic)\n\(Self.oneLine(url))\n\(Self.oneLine(etag ?? ""))\n"
                + "\(verifiedSequence.map(String.init) ?? "")\n\(signature?.base64EncodedString() ?? "")\n"
            try FileOps.writeNew(temporary, Array(head.utf8) + [UInt8](json))
            try withLock { () throws(PackClientError) in try FileOps.move(temporary, to: indexPath) }
        } catch {
            FileOps.remove(temporary)
            throw error
        }
    }

    /// `text` without control characters, so it fits on one line.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
    }

    /// Marks the stored index as validated now (a 304).
    func touchIndex() { touch(indexPath) }

    // MARK: Lock

    func withLock<T>(_ body: () throws(PackClientError) -> T) throws(PackClientError) -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .posix(lockPath, "open") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .posix(lockPath, "flock") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

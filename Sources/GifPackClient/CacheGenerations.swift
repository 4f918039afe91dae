import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The on-disk scheme that makes an install switch atomically.
///
/// ```
/// <cache>            symbolic link → <name>.d/g000007   (relative, so the pair can move)
/// <cache>.d/g000007/ the installed generation: GIFs and gifpack-manifest.json
/// <cache>.d/g000006/ the previous generation, kept until the next install
/// <cache>.d/.staging-000008-<uuid>/  an install in progress
/// <cache>.d/downloads/               pack downloads and resumable .part files
/// <cache>.d/install.lock             held (flock) by the running install
/// ```
///
/// A new generation is staged in full (files fsynced), renamed to `g<N>`, and then switched in by
/// making a new symbolic link and `rename(2)`-ing it over `<cache>`, which replaces the link in one
/// step: a path lookup through `<cache>` resolves either the old directory or the new one. A
/// reader that needs several files from one generation resolves the link once (`realpath`, or
/// ``InstalledCache``) and reads from that directory; the previous generation stays on disk until
/// the next install so such a reader can finish.
///
/// ```swift
/// let generations = CacheGenerations(cachePath: "/var/cache/app/gifs")
/// let current = try generations.current()   // 7, or nil before the first install
/// ```
struct CacheGenerations {
    /// The cache path apps read, without a trailing slash.
    let cachePath: String

    init(cachePath: String) {
        self.cachePath = PathText.trimmingTrailingSlashes(cachePath)
    }

    var storePath: String { cachePath + ".d" }
    var lockPath: String { storePath + "/install.lock" }
    var downloadsPath: String { storePath + "/downloads" }
    private var cacheName: String { PathText.lastComponent(cachePath) }

    static func directoryName(_ generation: Int) -> String {
        let digits = String(generation)
        return "g" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    func generationPath(_ generation: Int) -> String { "\(storePath)/\(Self.directoryName(generation))" }

    /// The link target stored in `<cache>` for a generation.
    func linkTarget(_ generation: Int) -> String { "\(cacheName).d/\(Self.directoryName(generation))" }

    /// The installed generation; nil when `<cache>` does not exist or is an empty directory.
    /// Throws ``PackClientError/cacheNotManaged(path:detail:)`` for anything else not made here.
    func current() throws(PackClientError) -> Int? {
        guard let info = try FileOps.status(cachePath) else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            guard FileOps.list(cachePath).isEmpty else {
                throw .cacheNotManaged(path: cachePath, detail: "it is a directory with files in it; install into a new path or empty it")
            }
            return nil
        case S_IFLNK:
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: cachePath),
                  let generation = parse(target), target == linkTarget(generation) else {
                throw .cacheNotManaged(path: cachePath, detail: "it is a symbolic link that does not point into \(cacheName).d/")
            }
            return generation
        default:
            throw .cacheNotManaged(path: cachePath, detail: "it is not a directory")
        }
    }

    /// Generation numbers present in the store.
    func existing() -> [Int] {
        FileOps.list(storePath).compactMap(Self.parseDirectoryName).sorted()
    }

    /// Makes `generation` the installed one: a new link renamed over `<cache>`, then both parent
    /// directories fsynced (best effort: once the rename is done the switch has happened, and after
    /// a crash the link holds either generation). An empty real directory at `<cache>` is removed first.
    func switchTo(_ generation: Int) throws(PackClientError) {
        let link = "\(storePath)/.link-\(UUID().uuidString)"
        guard symlink(linkTarget(generation), link) == 0 else { throw .posix(link, "symlink") }
        if let info = try FileOps.status(cachePath), info.st_mode & S_IFMT == S_IFDIR {
            guard rmdir(cachePath) == 0 else {
                FileOps.remove(link)
                throw .posix(cachePath, "rmdir (empty directory replaced by the cache link)")
            }
        }
        do { try FileOps.move(link, to: cachePath) } catch {
            FileOps.remove(link)
            throw error
        }
        try? FileOps.sync(PathText.parent(cachePath))
        try? FileOps.sync(storePath)
    }

    /// Removes every generation not in `keep`, and staging directories and links left by
    /// interrupted installs.
    func removeStale(keeping keep: Set<Int>) {
        for name in FileOps.list(storePath) {
            if let generation = Self.parseDirectoryName(name) {
                if !keep.contains(generation) { FileOps.remove("\(storePath)/\(name)") }
            } else if name.hasPrefix(".staging-") || name.hasPrefix(".link-") {
                FileOps.remove("\(storePath)/\(name)")
            }
        }
    }

    private func parse(_ target: String) -> Int? {
        Self.parseDirectoryName(PathText.lastComponent(target))
    }

    static func parseDirectoryName(_ name: String) -> Int? {
        guard name.count == 7, name.hasPrefix("g"), let number = Int(name.dropFirst()), number > 0 else { return nil }
        return number
    }
}

/// An exclusive `flock` on `<cache>.d/install.lock`, released when the value is dropped.
///
/// ```swift
/// let lock = try InstallLock(path: generations.lockPath)
/// defer { withExtendedLifetime(lock) {} }
/// ```
final class InstallLock: Sendable {
    private let fd: Int32

    init(path: String, cachePath: String) throws(PackClientError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .posix(path, "open") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .cacheLocked(path: cachePath) }
            throw .posix(path, "flock", code)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

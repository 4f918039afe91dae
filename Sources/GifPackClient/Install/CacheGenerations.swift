import Foundation
import GifPackSystem
import GifPackIndexReader

/// The on-disk scheme that makes an install switch atomically.
///
/// ```
/// <cache>            symbolic link → <name>.d/g000007   (relative, so the pair can move)
/// <cache>.d/g000007/ the installed generation: GIFs and gifpack-manifest.json
/// <cache>.d/g000006/ the previous generation, kept until the next install
/// <cache>.d/.staging-g000008-<uuid>/ an install in progress
/// <cache>.d/downloads/               pack downloads and resumable .part files (of the last index accepted only)
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

    /// `g` and the number, zero-padded to six digits: `g000007`, …, `g999999`, then `g1000000`
    /// and on (any positive `Int`).
    static func directoryName(_ generation: Int) -> String {
        let digits = String(generation)
        return "g" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The number of the next generation: one above the highest in the store, or, should that
    /// overflow `Int`, the lowest number not in use (the counter starts again from 1).
    static func next(after existing: [Int]) -> Int {
        guard let highest = existing.max() else { return 1 }
        let (next, overflow) = highest.addingReportingOverflow(1)
        if !overflow { return next }
        let used = Set(existing)
        return (1...).first { !used.contains($0) }!
    }

    func generationPath(_ generation: Int) -> String { "\(storePath)/\(Self.directoryName(generation))" }

    /// The link target stored in `<cache>` for a generation.
    func linkTarget(_ generation: Int) -> String { "\(cacheName).d/\(Self.directoryName(generation))" }

    /// The installed generation; nil when `<cache>` does not exist or is an empty directory.
    /// Throws ``PackClientError/cacheNotManaged(path:detail:)`` for anything else not made here.
    func current() throws(PackClientError) -> Int? {
        guard let info = try FileOps.status(cachePath) else { return nil }
        switch SystemCalls.fileType(info) {
        case .directory:
            guard try FileOps.list(cachePath).isEmpty else {
                throw .cacheNotManaged(path: cachePath, detail: "it is a directory with files in it; install into a new path or empty it")
            }
            return nil
        case .symbolicLink:
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: cachePath),
                let generation = parse(target), target == linkTarget(generation)
            else {
                throw .cacheNotManaged(path: cachePath, detail: "it is a symbolic link that does not point into \(cacheName).d/")
            }
            return generation
        default:
            throw .cacheNotManaged(path: cachePath, detail: "it is not a directory")
        }
    }

    /// Every generation number a store entry is named with, whoever made it: a new generation
    /// takes none of them. An unreadable store throws.
    func numbersInUse() throws(PackClientError) -> [Int] {
        try FileOps.list(storePath).compactMap(Self.parseDirectoryName)
    }

    /// A real directory (not a symbolic link) with `gifpack-manifest.json` in it.
    private func isOwnDirectory(_ path: String) -> Bool {
        guard let info = try? FileOps.status(path), SystemCalls.fileType(info) == .directory else { return false }
        return FileOps.regularFileSize("\(path)/\(InstallManifest.fileName)") != nil
    }

    /// Refuses a `<cache>.d` that is not a real directory (a symbolic link would make every write
    /// and every clean-up land in its target), or a directory with other files but no
    /// `install.lock` (not made by an install). Creates it when missing; returns true then.
    @discardableResult
    func prepareStore() throws(PackClientError) -> Bool {
        if let info = try FileOps.status(storePath) {
            switch SystemCalls.fileType(info) {
            case .symbolicLink:
                throw .cacheNotManaged(path: cachePath, detail: "\(storePath) is a symbolic link; gifpack only uses a real directory there")
            case .directory:
                let names = try FileOps.list(storePath)
                guard names.isEmpty || names.contains(PathText.lastComponent(lockPath)) else {
                    throw .cacheNotManaged(path: cachePath, detail: "\(storePath) holds files gifpack did not make (no install.lock)")
                }
            default:
                throw .cacheNotManaged(path: cachePath, detail: "\(storePath) is not a directory")
            }
            return false
        } else {
            try FileOps.makeDirectories(storePath)
            return true
        }
    }

    /// Removes `<cache>.d` when it holds nothing an install made but the lock (and an empty
    /// `downloads/`): what a refused or failed first install leaves. Only by the install that holds
    /// the lock and made the store. A partial download that can resume stays, and the store with it.
    /// The lock file is unlinked before the directory is removed and while the lock is still held:
    /// an install that opened it meanwhile sees, once it has the lock, that it is no longer the file
    /// at the path and starts again (see ``InstallLock``).
    func removeUnusedStore() {
        SystemCalls.removeDirectory(downloadsPath)
        // A store that cannot be listed is not known to be unused: it stays.
        guard (try? FileOps.list(storePath)) == [PathText.lastComponent(lockPath)] else { return }
        SystemCalls.unlink(lockPath)
        SystemCalls.removeDirectory(storePath)
    }

    /// Makes `generation` the installed one: a new link renamed over `<cache>`, then both parent
    /// directories fsynced (best effort: once the rename is done the switch has happened, and after
    /// a crash the link holds either generation). An empty real directory at `<cache>` is removed first.
    func switchTo(_ generation: Int) throws(PackClientError) {
        let link = "\(storePath)/.link-\(UUID().uuidString)"
        guard SystemCalls.symbolicLink(linkTarget(generation), at: link) == 0 else { throw .posix(link, "symlink") }
        if let info = try FileOps.status(cachePath), SystemCalls.fileType(info) == .directory {
            guard SystemCalls.removeDirectory(cachePath) == 0 else {
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
    /// interrupted installs — only entries an install makes: generation directories holding a
    /// manifest, `.staging-g<N>-<UUID>` directories and `.link-<UUID>` symbolic links. Anything
    /// else in the store is left alone, and so is everything when the store cannot be listed (the
    /// new generation is in place by then; the leftovers go at the next install that can list it).
    func removeStale(keeping keep: Set<Int>) {
        guard let names = try? FileOps.list(storePath) else { return }
        for name in names {
            let path = "\(storePath)/\(name)"
            if let generation = Self.parseDirectoryName(name) {
                if !keep.contains(generation), isOwnDirectory(path) { FileOps.remove(path) }
            } else if Self.isStagingName(name) {
                if let info = try? FileOps.status(path), SystemCalls.fileType(info) == .directory { FileOps.remove(path) }
            } else if name.hasPrefix(".link-"), UUID(uuidString: String(name.dropFirst(".link-".count))) != nil {
                if let info = try? FileOps.status(path), SystemCalls.fileType(info) == .symbolicLink { FileOps.remove(path) }
            }
        }
    }

    /// The name of a staging directory: `.staging-` + a generation directory name + `-` + a UUID.
    static func stagingName(_ generation: Int) -> String {
        ".staging-\(directoryName(generation))-\(UUID().uuidString)"
    }

    static func isStagingName(_ name: String) -> Bool {
        let parts = name.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == ".staging", parseDirectoryName(String(parts[1])) != nil else { return false }
        return UUID(uuidString: String(parts[2])) != nil
    }

    private func parse(_ target: String) -> Int? {
        Self.parseDirectoryName(PathText.lastComponent(target))
    }

    /// The generation a directory name stands for, for names ``directoryName(_:)`` makes only
    /// (`g000001`, `g1000000`; not `g1`, `g0000001` or `g+00001`).
    static func parseDirectoryName(_ name: String) -> Int? {
        guard name.utf8.count >= 7, name.hasPrefix("g"),
            name.utf8.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let number = Int(name.dropFirst()), number > 0, directoryName(number) == name
        else { return nil }
        return number
    }
}

/// An exclusive `flock` on `<cache>.d/install.lock`, released when the value is dropped.
///
/// Taking it creates `<cache>.d` when missing (``createdStore``: then a failed install removes it
/// again, ``CacheGenerations/removeUnusedStore()``). Because that clean-up unlinks the lock file,
/// a lock is only taken on the file that is at the path once it is held (same device and inode);
/// otherwise, or when the store vanished between creating it and opening the file, it starts
/// again. Another install holding the lock: ``PackClientError/cacheLocked(path:)``.
///
/// ```swift
/// let lock = try InstallLock(generations)
/// defer { withExtendedLifetime(lock) {} }
/// ```
final class InstallLock: Sendable {
    private let descriptor: Int32
    /// True when taking the lock created `<cache>.d`.
    let createdStore: Bool

    init(_ generations: CacheGenerations) throws(PackClientError) {
        let path = generations.lockPath
        for _ in 0..<8 {
            let created = try generations.prepareStore()
            let fd: Int32
            do { fd = try RegularFile.open(path, [.readWrite, .create]) } catch {
                // The store was removed by a failed first install in between: make it again.
                if error.errno == Errno.noSuchFileOrDirectory.code { continue }
                throw PackClientError(error)
            }
            while SystemCalls.lockExclusive(fd, wait: false) != 0 {
                let code = Errno.current
                if code == .interrupted { continue }
                SystemCalls.close(fd)
                if code == .wouldBlock { throw .cacheLocked(path: generations.cachePath) }
                throw .posix(path, "flock", code.code)
            }
            guard let held = SystemCalls.status(descriptor: fd), let linked = SystemCalls.status(path),
                held.st_dev == linked.st_dev, held.st_ino == linked.st_ino
            else {
                // The file was unlinked (a failed first install cleaning up) before this lock was taken.
                SystemCalls.close(fd)
                continue
            }
            descriptor = fd
            createdStore = created
            return
        }
        throw .cacheLocked(path: generations.cachePath)
    }

    deinit {
        // Unlocked explicitly: a child process forked meanwhile may share the descriptor until it execs.
        SystemCalls.unlock(descriptor)
        SystemCalls.close(descriptor)
    }
}

import GifPackSystem

/// What tells one file (or symbolic link) from another without reading it: device, inode, size and
/// modification time, from one `stat` or `lstat`. A rename over the path, a rewrite or a touch
/// changes it. ``GIFLoader`` stamps the `installed` link (another process's install renames a new
/// one over it); ``LazyGIFCache`` stamps its stored index (read again only when the stamp changed).
///
/// ```swift
/// if SystemCalls.linkStatus(path).map(FileStamp.init) != remembered { /* read it again */ }
/// ```
struct FileStamp: Sendable, Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    /// The modification time in seconds, clamped like every time the caches read (a file's time is
    /// not theirs to trust).
    var seconds: Int
    var nanoseconds: Int

    init(_ info: FileStatus) {
        let time = SystemCalls.modificationTime(info)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = Self.clamped(time.tv_sec)
        nanoseconds = Int(time.tv_nsec)
    }

    /// A file time in seconds within ±2⁴⁰ (about 35,000 years): arithmetic on it cannot overflow.
    static func clamped(_ seconds: Int) -> Int { min(max(seconds, -(1 << 40)), 1 << 40) }
}

import GifPackSystem

/// What ``LazyGIFCache`` asks of the store per lookup (one `stat` of its slot) and what a
/// ``GIFLoader``'s installer reads of it (the URL's floor, before the cache has its folders).
///
/// ```swift
/// if store.indexIdentity(slot: slot) == remembered.identity { /* no read */ }
/// ```
extension LazyGIFStore {
    /// What tells one stored index file from another without reading it: device, inode, size and
    /// modification time (a rename in, or a touch after a `304`, changes it).
    struct FileIdentity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
        /// The modification time in seconds (clamped like every time the cache reads).
        var seconds: Int { modified }
    }

    /// The identity of the index file in `slot` (one `stat`), nil when there is none.
    func indexIdentity(slot: String) -> FileIdentity? {
        guard let info = SystemCalls.status(indexPath(slot: slot)), SystemCalls.fileType(info) == .regular else { return nil }
        let time = SystemCalls.modificationTime(info)
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                            modified: Self.seconds(info), modifiedNanoseconds: Int(time.tv_nsec))
    }

    /// ``floor(url:)`` of a cache that may not be there yet: nil when it has no `indexes/` folder.
    func floorIfPresent(url: String) throws(PackClientError) -> Int? {
        guard SystemCalls.status(indexesPath) != nil else { return nil }
        return try floor(url: url)
    }
}

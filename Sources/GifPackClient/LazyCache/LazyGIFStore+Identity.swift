import GifPackSystem
import GifPackIndexReader

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

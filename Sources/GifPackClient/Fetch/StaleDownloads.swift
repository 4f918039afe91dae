import GifPackFormat
import GifPackSystem
import GifPackIndexReader

/// Keeps `<cache>.d/downloads/` bounded: once an install has accepted an index (before it fetches
/// anything), every file a download or a sparse upgrade made there that is not for a pack (or
/// posters pack) of that index goes — a verified download or `.part` of an earlier version, a
/// `.sparse` file a killed upgrade left. A download or `.part` of a pack the index still lists stays, for a later install of that
/// pack to reuse or resume. Names a download does not make are left alone, and a directory that
/// cannot be listed is reported, never taken for empty.
///
/// ```swift
/// try StaleDownloads.remove(in: generations.downloadsPath, keepingPacksOf: index)
/// ```
enum StaleDownloads {
    /// Removes the files described above; the names removed, sorted.
    @discardableResult
    static func remove(in directory: String, keepingPacksOf index: PackIndex) throws(PackClientError) -> [String] {
        let downloader = PackDownloader(directory: directory)
        var keep: Set<String> = []
        let described: [any PackFileDescription] = index.allPacks + index.packs.compactMap(\.posters)
        for pack in described {
            let name = PathText.lastComponent(downloader.downloadPath(of: pack))
            keep.formUnion([name, name + ".part"])
        }
        let names = try FileOps.list(directory)
        let stale = names.filter { isDownloadName($0) && !keep.contains($0) }
        for name in stale { FileOps.remove("\(directory)/\(name)") }
        return stale
    }

    /// True for a name a download or a sparse upgrade makes: `<name>-v<N>-<16 hex>` followed by
    /// `.tar.zst`, `.tar.zst.part` or `.sparse`.
    static func isDownloadName(_ name: String) -> Bool {
        guard
            let stem = [".tar.zst", ".tar.zst.part", ".sparse"].lazy.compactMap({ suffix -> Substring? in
                name.hasSuffix(suffix) ? name.dropLast(suffix.count) : nil
            }).first
        else { return false }
        let parts = stem.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, let hash = parts.last, let version = parts.dropLast().last else { return false }
        let packName = parts.dropLast(2).joined(separator: "-")
        return !packName.isEmpty && hash.utf8.count == 16 && hash.allSatisfy { $0.isHexDigit && !$0.isUppercase }
            && version.hasPrefix("v") && version.utf8.count > 1 && version.dropFirst().allSatisfy { ("0"..."9").contains($0) }
    }
}

import Foundation
import GifPackGIF
import Synchronization

/// Each stored GIF's placeholders (BlurHash, average colour) and posters, derived once from the
/// blob and kept in the cache under the settings that made them:
///
/// ```
/// <cache>/derived/<settings key>/ab/<sha256>.txt         blurHash, averageColor, still frame, poster sizes
/// <cache>/derived/<settings key>/ab/<sha256>-<size>.gif  one poster per size
/// ```
///
/// The settings key (``PlaceholderSettings/cacheKey``) names the BlurHash components and poster
/// sizes, so changing them derives again from the blobs already stored (no request), and a rebuild
/// with unchanged settings derives nothing. The record is written after its posters, and lists each
/// poster's length: a record whose posters are missing or of another length (cut short by a crash:
/// cache files are not fsynced) is derived again.
///
/// ```swift
/// let placeholders = PlaceholderCache(layout: layout, settings: PlaceholderSettings(posterSizes: [80, 200]))
/// let record = try placeholders.ensure(sha256: hash, blobPath: layout.blobPath(sha256: hash))
/// ```
struct PlaceholderCache: Sendable {
    /// What the cache keeps of one GIF.
    struct Record: Sendable, Equatable {
        var blurHash: String
        var averageColor: String
        var stillFrameIndex: Int
        /// Poster length in bytes by size.
        var posterBytes: [Int: Int64]
    }

    let layout: CacheLayout
    let settings: PlaceholderSettings
    /// Where the posters this cache derives are also compressed as posters pack entries (nil: not).
    let posterFrames: PosterFrameCache?
    private let counter = CacheWorkCounter()

    init(layout: CacheLayout, settings: PlaceholderSettings, posterFrames: PosterFrameCache? = nil) {
        self.layout = layout
        self.settings = settings
        self.posterFrames = posterFrames
    }

    /// How many GIFs this cache value derived (rather than found) so far.
    var derivedCount: Int { counter.value }

    var directory: String { "\(layout.root)/derived/\(settings.cacheKey)" }

    func recordPath(sha256: String) -> String { "\(directory)/\(sha256.prefix(2))/\(sha256).txt" }

    func posterPath(sha256: String, size: Int) -> String { "\(directory)/\(sha256.prefix(2))/\(sha256)-\(size).gif" }

    /// The cached record, or nil when it is missing or incomplete.
    func cached(sha256: String) -> Record? {
        guard let bytes = try? FileSystem.readAll(recordPath(sha256: sha256)),
            let record = Self.parse(String(decoding: bytes, as: UTF8.self)),
            Set(record.posterBytes.keys) == Set(settings.posterSizes)
        else { return nil }
        for (size, length) in record.posterBytes where FileSystem.fileSize(posterPath(sha256: sha256, size: size)) != length {
            return nil
        }
        return record
    }

    /// Removes the cached record (its posters are written again by the next ``ensure(sha256:blobPath:)``).
    func forget(sha256: String) {
        posterFrames?.forget(gifSHA256: sha256)
        FileSystem.remove(recordPath(sha256: sha256))
    }

    /// Returns the cached record, deriving and storing it first when needed. Blocking: call it on
    /// a worker thread.
    func ensure(sha256: String, blobPath: String) throws -> Record {
        if let record = cached(sha256: sha256) { return record }
        // Two workers holding the same GIF (a duplicate) derive it once.
        return try counter.stripe(for: sha256).lock.withLock { _ in
            if let record = cached(sha256: sha256) { return record }
            return try derive(sha256: sha256, blobPath: blobPath)
        }
    }

    /// Derives and stores the record of `sha256`, under its stripe's lock.
    private func derive(sha256: String, blobPath: String) throws -> Record {
        let derived = try GIFPlaceholderDeriver.derive(path: blobPath, settings: settings)
        try FileSystem.createDirectory(PathText.parent(recordPath(sha256: sha256)))
        var lengths: [Int: Int64] = [:]
        for (size, poster) in derived.posters {
            let path = posterPath(sha256: sha256, size: size)
            try CacheFile.write(poster, to: path)
            try posterFrames?.store(poster, size: size, gifSHA256: sha256, posterPath: path)
            lengths[size] = Int64(poster.count)
        }
        let record = Record(
            blurHash: derived.blurHash, averageColor: derived.averageColor,
            stillFrameIndex: derived.stillFrameIndex, posterBytes: lengths)
        try CacheFile.write(Array(Self.text(record).utf8), to: recordPath(sha256: sha256))
        counter.increment()
        return record
    }

    static func text(_ record: Record) -> String {
        let posters = record.posterBytes.keys.sorted().map { "\($0):\(record.posterBytes[$0]!)" }.joined(separator: ",")
        return "\(record.blurHash)\n\(record.averageColor)\n\(record.stillFrameIndex)\n\(posters)\n"
    }

    static func parse(_ text: String) -> Record? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[4].isEmpty, let still = Int(lines[2]) else { return nil }
        var posters: [Int: Int64] = [:]
        for item in lines[3].split(separator: ",") {
            let parts = item.split(separator: ":")
            guard parts.count == 2, let size = Int(parts[0]), let length = Int64(parts[1]) else { return nil }
            posters[size] = length
        }
        return Record(blurHash: String(lines[0]), averageColor: String(lines[1]), stillFrameIndex: still, posterBytes: posters)
    }
}

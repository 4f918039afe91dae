import Crypto
import Foundation
import GifPackGIF
import GifPackSystem
import GifPackWebP
import Synchronization

/// Each stored GIF's WebP rendition, encoded once and kept in the cache under the GIF's
/// SHA-256 and the encoding policy:
///
/// ```
/// <cache>/webp/<policy key>/ab/<sha256>.txt    the outcome (q75, q80, q90, lossless or gif), the WebP's hash and
///                                              length, frames, mean and worst SSIM
/// <cache>/webp/<policy key>/ab/<sha256>.webp   the WebP, when the outcome is not gif
/// ```
///
/// The policy key is 16 hex digits of the SHA-256 of ``WebPEncodingPolicy/cacheKey`` (its rungs,
/// the SSIM bar, the codec's rules and libwebp's version; the full key is in `key.txt` beside the
/// shards): a rebuild with the same GIFs encodes nothing, a redrawn GIF (a new hash) is encoded
/// once, another policy or libwebp encodes again from the blobs already stored. The record is
/// written after the WebP and names its length and hash: a record whose WebP is missing or of
/// another length (cache files are not fsynced) is encoded again.
struct WebPCache: Sendable {
    /// What the cache keeps of one GIF's rendition.
    struct Record: Sendable, Equatable {
        /// `q75`, `q80`, `q90`, `lossless` or `gif` (no WebP: the rendition lists the GIF).
        var outcome: String
        var webpSHA256: String?
        var webpBytes: Int64?
        var frames: Int
        /// SSIM of the chosen WebP (nil for `gif`).
        var meanSSIM: Double?
        var worstSSIM: Double?

        var usesGIF: Bool { webpSHA256 == nil }
    }

    let layout: CacheLayout
    let policy: WebPEncodingPolicy
    private let counter = CacheWorkCounter()

    init(layout: CacheLayout, policy: WebPEncodingPolicy = .standard) {
        self.layout = layout
        self.policy = policy
    }

    /// How many GIFs this cache value encoded (rather than found) so far.
    var encodedCount: Int { counter.value }

    static func policyKey(_ policy: WebPEncodingPolicy) -> String {
        Hex.lowercase(SHA256.hash(data: Array(policy.cacheKey.utf8)).prefix(8))
    }

    var directory: String { "\(layout.root)/webp/\(Self.policyKey(policy))" }

    func recordPath(sha256: String) -> String { "\(directory)/\(sha256.prefix(2))/\(sha256).txt" }

    func webpPath(sha256: String) -> String { "\(directory)/\(sha256.prefix(2))/\(sha256).webp" }

    /// The cached record, or nil when it is missing or its WebP is.
    func cached(sha256: String) -> Record? {
        guard let bytes = try? FileSystem.readAll(recordPath(sha256: sha256)),
            let record = Self.parse(String(decoding: bytes, as: UTF8.self))
        else { return nil }
        if let length = record.webpBytes, FileSystem.fileSize(webpPath(sha256: sha256)) != length { return nil }
        return record
    }

    /// Returns the cached record, encoding the GIF at `blobPath` first when needed. Blocking and
    /// CPU-heavy: the fetch's processing workers call it beside the transfers.
    func ensure(sha256: String, blobPath: String) throws -> Record {
        if let record = cached(sha256: sha256) { return record }
        return try counter.stripe(for: sha256).lock.withLock { _ in
            if let record = cached(sha256: sha256) { return record }
            return try encode(sha256: sha256, blobPath: blobPath)
        }
    }

    private func encode(sha256: String, blobPath: String) throws -> Record {
        guard let gif = try FileSystem.readAll(blobPath) else {
            throw FileSystemError.io(operation: "open", path: blobPath, errno: Errno.noSuchFileOrDirectory.code)
        }
        let info = try GIFInspector.inspect(bytes: gif)
        let rendition = try WebPRenditionEncoder.encode(gif: gif, gifLoopCount: info.loopCount, policy: policy)
        try FileSystem.createDirectory(PathText.parent(recordPath(sha256: sha256)))
        if !FileSystem.exists("\(directory)/key.txt") {
            try CacheFile.write(Array("\(policy.cacheKey)\n".utf8), to: "\(directory)/key.txt")
        }
        let record: Record
        switch rendition.choice {
        case .webp(let webp, let settings, let comparison):
            try CacheFile.write(webp, to: webpPath(sha256: sha256))
            record = Record(
                outcome: settings.label, webpSHA256: Hex.lowercase(SHA256.hash(data: webp)),
                webpBytes: Int64(webp.count), frames: comparison.frames,
                meanSSIM: comparison.meanSSIM, worstSSIM: comparison.worstSSIM)
        case .useGIF:
            FileSystem.remove(webpPath(sha256: sha256))
            record = Record(outcome: "gif", webpSHA256: nil, webpBytes: nil, frames: info.frameCount, meanSSIM: nil, worstSSIM: nil)
        }
        try CacheFile.write(Array(Self.text(record).utf8), to: recordPath(sha256: sha256))
        counter.increment()
        return record
    }

    static func text(_ record: Record) -> String {
        func value(_ double: Double?) -> String { double.map { "\($0)" } ?? "-" }
        return [
            record.outcome, record.webpSHA256 ?? "-", record.webpBytes.map(String.init) ?? "-", "\(record.frames)",
            value(record.meanSSIM), value(record.worstSSIM)
        ].joined(separator: "\n") + "\n"
    }

    static func parse(_ text: String) -> Record? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 7, lines[6].isEmpty, let frames = Int(lines[3]) else { return nil }
        let outcome = lines[0]
        if outcome == "gif" {
            guard lines[1] == "-", lines[2] == "-" else { return nil }
            return Record(outcome: outcome, webpSHA256: nil, webpBytes: nil, frames: frames, meanSSIM: nil, worstSSIM: nil)
        }
        guard lines[1].count == 64, let bytes = Int64(lines[2]), let mean = Double(lines[4]), let worst = Double(lines[5]) else {
            return nil
        }
        return Record(outcome: outcome, webpSHA256: lines[1], webpBytes: bytes, frames: frames, meanSSIM: mean, worstSSIM: worst)
    }
}

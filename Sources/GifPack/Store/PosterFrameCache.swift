import Foundation
import GifPackFormat
import Synchronization

/// The posters pack's entries of the posters this process derives, compressed as they are derived.
///
/// A poster's entry `posters/<size>/<gif sha256>.gif` depends only on its bytes, the pinned zstd
/// level and the tar mtime, like a GIF's (``FrameCache``). Compressing it while the downloads are
/// in flight, on the worker that derived it, leaves the posters pack a copy of frames: before, the
/// posters pack read every poster back, decoded it to check it, hashed it and compressed it after
/// the last download, on the second core while the pack was assembled on the first. Only posters
/// derived by this process are listed (their bytes, digest and frame are known first-hand); any
/// other poster is read, checked and compressed when the posters pack is made, as before. Frame
/// files sit beside their posters (`<sha256>-<size>.l<level>m<mtime>.zst`) and are not fsynced:
/// one left by a killed run is never trusted, only written over.
///
/// ```swift
/// let posterFrames = PosterFrameCache(level: 9, mtime: 1_700_000_000)
/// try posterFrames.store(poster, size: 80, gifSHA256: hash, at: placeholders.posterPath(sha256: hash, size: 80))
/// posterFrames.fresh(gifSHA256: hash, size: 80)   // its digest, length and frame
/// ```
final class PosterFrameCache: Sendable {
    /// A poster this process derived, and its entry's frame.
    struct Fresh: Sendable, Equatable {
        /// SHA-256 of the poster's bytes, as the posters pack's catalog lists it.
        var sha256: String
        var bytes: Int
        var framePath: String
        /// The tar entry's length (header, data, padding): the frame's content size.
        var entryLength: Int64
    }

    let level: Int32
    let mtime: Int64
    private let made = Mutex<[String: Fresh]>([:])

    init(level: Int32, mtime: Int64) {
        self.level = level
        self.mtime = mtime
    }

    /// Where the frame of the poster at `posterPath` goes.
    func framePath(posterPath: String) -> String {
        let stem = posterPath.hasSuffix(".gif") ? String(posterPath.dropLast(4)) : posterPath
        return "\(stem).l\(level)m\(mtime)p\(ZstdFrameCompressor.parametersVersion).zst"
    }

    /// Compresses the entry of a poster just derived (`bytes`, written at `posterPath`) and
    /// remembers it. Blocking: call it on a worker thread.
    func store(_ bytes: [UInt8], size: Int, gifSHA256 hash: String, posterPath: String) throws {
        let destination = framePath(posterPath: posterPath)
        let encoder = TarEntryFrameEncoder(level: level, mtime: mtime)
        let extent = try FrameCache.writeFrameFile(at: destination) { sink in
            try encoder.encodeBytes(name: PosterPackDescription.path(size: size, sha256: hash), bytes: bytes, to: sink)
        }
        let fresh = Fresh(
            sha256: StreamingSHA256.of(bytes), bytes: bytes.count, framePath: destination,
            entryLength: extent.uncompressedLength)
        made.withLock { $0[Self.key(hash, size)] = fresh }
    }

    /// The poster of `size` for the GIF `hash`, if this process derived it.
    func fresh(gifSHA256 hash: String, size: Int) -> Fresh? { made.withLock { $0[Self.key(hash, size)] } }

    /// Forgets the GIF's posters (they are about to be derived again).
    func forget(gifSHA256 hash: String) {
        made.withLock { made in made = made.filter { !$0.key.hasPrefix(hash + "-") } }
    }

    private static func key(_ hash: String, _ size: Int) -> String { "\(hash)-\(size)" }
}

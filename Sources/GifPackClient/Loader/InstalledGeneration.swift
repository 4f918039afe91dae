import Foundation
import GifPackSystem

/// Which installed generation a ``GIFLoader`` reads: the identity of the `installed` symbolic link
/// (device, inode and modification time of the link itself, one `lstat`). Every install switches
/// generations by renaming a new link over it (``CacheGenerations/switchTo(_:)``), so another
/// process's install — an app extension's, a second loader's on the same folder — changes it even
/// when the new generation's name is one used before.
///
/// The loader compares it with the one its view of the installed files was read at on every
/// lookup (memory hits included) and reads the new generation when it changed, so it never serves
/// a replaced release or hands out a file URL into a deleted generation.
///
/// ```swift
/// if GenerationMark.of(installedPath) != snapshot.mark { /* read the current generation */ }
/// ```
struct GenerationMark: Sendable, Equatable {
    /// The link's stamp; nil: nothing installed (no link there).
    var link: FileStamp?

    /// The mark of the cache link at `cachePath` now. One `lstat` of a path the loader owns: cheap
    /// enough for every lookup.
    static func of(_ cachePath: String) -> GenerationMark {
        GenerationMark(link: SystemCalls.linkStatus(cachePath).map(FileStamp.init))
    }
}

extension GIFLoader {
    /// Compares the installed link with the mark the loader's view was read at; on a switch (by any
    /// process) forgets that view, so the next lookup reads the current generation. True when it switched.
    @discardableResult
    func noticeGenerationSwitch() -> Bool {
        state.observeGeneration(GenerationMark.of(installer.cacheDirectory))
    }

    /// `url` (a memory entry's file) may be handed out now: it is not a file of the installed store,
    /// or it is one of the generation the loader reads (the previous one is deleted by the next install).
    func isCurrentFile(_ url: URL?) -> Bool {
        guard let path = url?.path, path.hasPrefix(installer.cacheDirectory + ".d/") else { return true }
        guard let generation = state.snapshot?.cache.generationDirectory else { return false }
        return path.hasPrefix(generation + "/")
    }
}

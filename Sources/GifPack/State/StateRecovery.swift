import Foundation
import GifPackGIF
import GRDB

/// What a build did about a damaged `state.sqlite`, reported in `report.json` (`stateRecovery`).
///
/// A state database that SQLite finds corrupt (or that is not a database at all) would fail every
/// later run. Instead it is moved aside to `state.sqlite.corrupt-<UTC time>` (kept for inspection),
/// a new one is created, and what can be known again is rebuilt: the published pack versions from
/// `index.json`, and for each exercise of the catalog whose GIF the index names and the cache still
/// holds (checked against its hash and decoded again) its GIF, as confirmed when the index was last
/// written. The build then goes on as usual.
///
/// ```swift
/// if let recovery = report.stateRecovery { print("state rebuilt, damaged copy at \(recovery.movedTo)") }
/// ```
public struct StateRecovery: Sendable, Codable, Equatable {
    /// What SQLite said.
    public var reason: String
    /// Where the damaged database was moved.
    public var movedTo: String
    /// Pack versions recorded again from the index.
    public var rebuiltPacks = 0
    /// Exercises whose stored GIF was recorded again.
    public var rebuiltGIFs = 0

    /// One sentence for the build's message.
    public var sentence: String {
        "the state database was damaged (\(reason)): moved aside to \(movedTo) and rebuilt from the index and the blobs "
            + "(\(rebuiltPacks) pack(s), \(rebuiltGIFs) GIF(s))"
    }
}

/// Opens the build state, moving a damaged one aside (see ``StateRecovery``).
enum StateOpener {
    /// The state, and the recovery when the database had to be replaced.
    static func open(layout: CacheLayout, source: String, now: Date = Date()) throws -> (BuildState, StateRecovery?) {
        let reason: String
        do {
            let state = try BuildState(path: layout.statePath, source: source)
            try state.checkIntegrity()
            return (state, nil)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            reason = error.message ?? "\(error.resultCode)"
        } catch let error as BuildState.IntegrityError {
            reason = error.description
        }
        let stamp = now.formatted(Date.ISO8601FormatStyle(timeZone: .gmt)).replacingOccurrences(of: ":", with: "")
        let movedTo = "\(layout.statePath).corrupt-\(stamp)"
        for suffix in ["", "-wal", "-shm"] where FileSystem.exists(layout.statePath + suffix) {
            guard rename(layout.statePath + suffix, movedTo + suffix) == 0 else {
                throw FileSystemError.io(operation: "rename", path: layout.statePath + suffix, errno: errno)
            }
        }
        return (try BuildState(path: layout.statePath, source: source), StateRecovery(reason: reason, movedTo: movedTo))
    }

    /// Records again what the index and the blobs tell: each pack's published version, and each
    /// catalog exercise's GIF the index names and the store holds intact.
    static func rebuild(_ recovery: inout StateRecovery, state: BuildState, index: PackIndex?, indexDate: Date?,
                        catalog: [Exercise], store: BlobStore, resolution: Int, limits: GIFLimits) throws {
        guard let index else { return }
        var gifs: [String: String] = [:]
        for pack in index.packs {
            try state.recordPublished(pack: pack.name, version: pack.version, file: pack.file, sha256: pack.sha256,
                                      contentDigest: pack.contentDigest, at: indexDate ?? Date())
            recovery.rebuiltPacks += 1
            if let posters = pack.posters {
                try state.recordPublished(pack: posters.name, version: posters.version, file: posters.file,
                                          sha256: posters.sha256, contentDigest: posters.contentDigest, at: indexDate ?? Date())
            }
            for exercise in pack.exercises { if let gif = exercise.gif { gifs[exercise.id] = gif } }
        }
        for exercise in catalog {
            guard let hash = gifs[exercise.id] else { continue }
            let path = store.path(sha256: hash)
            guard BlobStore.hashes(path, to: hash), let size = FileSystem.fileSize(path),
                  let info = try? GIFInspector.inspect(path: path, limits: limits) else { continue }
            let metadata = GIFMetadata(sha256: hash, bytes: size, width: info.width, height: info.height,
                                       frames: info.frameCount, durationMilliseconds: info.durationMilliseconds,
                                       loopCount: info.loopCount)
            // Confirmed current when the index was last written, no later.
            try state.recordSuccess(GIFState(exerciseID: exercise.id, resolution: resolution, url: exercise.imageURL,
                                             etag: nil, lastModified: nil, metadata: metadata,
                                             fetchedAt: indexDate ?? Date(timeIntervalSince1970: 0)))
            recovery.rebuiltGIFs += 1
        }
    }
}

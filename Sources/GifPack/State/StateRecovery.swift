import Foundation
import GifPackGIF
import GRDB

/// What a build did about a damaged `state.sqlite`, reported in `report.json` (`stateRecovery`).
///
/// A state database that SQLite finds corrupt (or that is not a database at all) would fail every
/// later run. Instead it is moved aside to `state.sqlite.corrupt-<UTC time>` (kept for inspection),
/// a new one is created, and what can be known again is rebuilt: the pack versions written, from
/// `index.json`, and for each exercise of the catalog whose GIF the index names and the cache still
/// holds (checked against its hash and decoded again) its GIF, as confirmed when the index was last
/// written. The build then goes on as usual.
///
/// ```swift
/// if let recovery = report.stateRecovery { print("state rebuilt, damaged copy at \(recovery.movedTo)") }
/// ```
package struct StateRecovery: Sendable, Codable, Equatable {
    /// What SQLite said.
    package var reason: String
    /// Where the damaged database was moved.
    package var movedTo: String
    /// Pack versions recorded again from the index.
    package var rebuiltPacks = 0
    /// Exercises whose stored GIF was recorded again.
    package var rebuiltGIFs = 0

    /// One sentence for the build's message.
    package var sentence: String {
        "the state database was damaged (\(reason)): moved aside to \(movedTo) and rebuilt from the index and the blobs "
            + "(\(rebuiltPacks) pack(s), \(rebuiltGIFs) GIF(s))"
    }
}

/// Opens the build state, moving a damaged one aside (see ``StateRecovery``), or, for a dry run,
/// tells what opening it would do without changing anything.
enum StateOpener {
    /// The state, and the recovery when the database had to be replaced.
    static func open(layout: CacheLayout, source: String, now: Date = Date()) throws -> (BuildState, StateRecovery?) {
        let reason: String
        switch try check({ try BuildState(path: layout.statePath, source: source) }) {
        case .success(let state): return (state, nil)
        case .failure(let damage): reason = damage.reason
        }
        let movedTo = corruptPath(layout: layout, now: now)
        for suffix in ["", "-wal", "-shm"] where FileSystem.exists(layout.statePath + suffix) {
            guard SystemCalls.rename(layout.statePath + suffix, to: movedTo + suffix) == 0 else {
                throw FileSystemError.io(operation: "rename", path: layout.statePath + suffix, errno: Errno.current.code)
            }
        }
        return (try BuildState(path: layout.statePath, source: source), StateRecovery(reason: reason, movedTo: movedTo))
    }

    /// What ``open(layout:source:now:)`` would find, by the same checks, changing nothing: the
    /// checks run on a private copy of the database (and its `-wal`) in the temporary directory,
    /// because even a read-only SQLite connection leaves `-wal` and `-shm` files beside a WAL
    /// database. No state yet; a sound one, which `reading` reads; or the recovery a build would make
    /// (`movedTo` is where it would move the damaged file; nothing is rebuilt yet).
    static func inspect<T>(
        layout: CacheLayout, source: String, now: Date = Date(),
        reading: (BuildState) throws -> T
    ) throws -> Inspection<T> {
        guard FileSystem.exists(layout.statePath) else { return .absent }
        let directory = FileSystem.temporaryDirectory + "/gifpack-state-\(UUID().uuidString)"
        try FileSystem.makeDirectory(directory)
        defer { FileSystem.removeTree(directory) }
        let copy = "\(directory)/state.sqlite"
        for suffix in ["", "-wal"] where FileSystem.exists(layout.statePath + suffix) {
            try FileSystem.copy(layout.statePath + suffix, to: copy + suffix)
        }
        switch try check({ try BuildState(path: copy, source: source) }) {
        case .success(let state): return .sound(try reading(state))
        case .failure(let damage): return .damaged(StateRecovery(reason: damage.reason, movedTo: corruptPath(layout: layout, now: now)))
        }
    }

    /// What ``inspect(layout:source:now:reading:)`` found.
    enum Inspection<T> {
        case absent
        case sound(T)
        case damaged(StateRecovery)
    }

    /// Why SQLite cannot use the state.
    struct Damage: Error {
        var reason: String
    }

    /// The `index.json` a damaged state would be rebuilt from is there but cannot be read or
    /// decoded: the build stops rather than forget the pack versions written.
    struct UnreadableIndex: Error, CustomStringConvertible {
        var path: String
        var detail: String
        var description: String {
            "could not read \(path) to rebuild the damaged state from (\(detail)): restore it, or move it away to start over"
        }
    }

    /// Opens the state with `make` and checks its integrity: the state, or the damage SQLite found
    /// (a corrupt file, or not a database at all). Any other failure is thrown.
    private static func check(_ make: () throws -> BuildState) throws -> Result<BuildState, Damage> {
        do {
            let state = try make()
            try state.checkIntegrity()
            return .success(state)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return .failure(Damage(reason: error.message ?? "\(error.resultCode)"))
        } catch let error as BuildState.IntegrityError {
            return .failure(Damage(reason: error.description))
        }
    }

    /// Where a damaged state is moved: `state.sqlite.corrupt-<UTC time>`.
    static func corruptPath(layout: CacheLayout, now: Date) -> String {
        let stamp = now.formatted(Date.ISO8601FormatStyle(timeZone: .gmt)).replacingOccurrences(of: ":", with: "")
        return "\(layout.statePath).corrupt-\(stamp)"
    }

    /// Records again what the output directory's `index.json` (its mtime is when it was last
    /// confirmed) and the cache's blobs tell: each pack's version written, and each catalog
    /// exercise's GIF the index names and the store holds intact. No `index.json`: no pack written
    /// to rebuild. One that cannot be read or decoded throws (``UnreadableIndex``): the pack
    /// versions written are never silently forgotten.
    static func rebuild(
        _ recovery: inout StateRecovery, state: BuildState, indexPath: String, catalog: ExerciseList,
        layout: CacheLayout, resolution: Resolution, fetch: FetchSettings
    ) throws {
        let index: PackIndex?
        do { index = try BuilderIndexReader.read(indexPath) } catch {
            throw UnreadableIndex(path: indexPath, detail: "\(error)")
        }
        guard let index else { return }
        let indexDate = FileSystem.modificationDate(indexPath)
        let store = BlobStore(layout: layout)
        let limits = GIFLimits(
            maxWidth: fetch.maxWidth, maxHeight: fetch.maxHeight, maxFrames: fetch.maxFrames, maxTotalPixels: fetch.maxTotalPixels)
        var gifs: [String: String] = [:]
        for pack in index.allPacks {
            try state.recordWritten(
                pack: pack.name, version: pack.version, file: pack.file, sha256: pack.sha256,
                contentDigest: pack.contentDigest, at: indexDate ?? Date())
            recovery.rebuiltPacks += 1
            if let posters = pack.posters {
                try state.recordWritten(
                    pack: posters.name, version: posters.version, file: posters.file,
                    sha256: posters.sha256, contentDigest: posters.contentDigest, at: indexDate ?? Date())
            }
            // The GIFs of the first resolution (`packs[]`): those the catalog's image URLs name (not
            // a WebP rendition's entries, format 1.4: they are WebPs, or GIFs `packs[]` names too).
            guard pack.format == nil, pack.resolution == nil || pack.resolution == index.source.resolution else { continue }
            for exercise in pack.exercises { if let gif = exercise.gif { gifs[exercise.id] = gif } }
        }
        var exercises = catalog.makeIterator()
        while let exercise = try exercises.next() {
            guard let hash = gifs[exercise.id] else { continue }
            let path = store.path(sha256: hash)
            guard BlobStore.hashes(path, to: hash), let size = FileSystem.fileSize(path),
                let info = try? GIFInspector.inspect(path: path, limits: limits)
            else { continue }
            let metadata = GIFMetadata(
                sha256: hash, bytes: size, width: info.width, height: info.height,
                frames: info.frameCount, durationMilliseconds: info.durationMilliseconds,
                loopCount: info.loopCount)
            // Confirmed current when the index was last written, no later.
            try state.recordSuccess(
                GIFState(
                    exerciseID: exercise.id, resolution: resolution.stateKey, url: exercise.imageURL,
                    etag: nil, lastModified: nil, metadata: metadata,
                    fetchedAt: indexDate ?? Date(timeIntervalSince1970: 0)))
            recovery.rebuiltGIFs += 1
        }
    }
}

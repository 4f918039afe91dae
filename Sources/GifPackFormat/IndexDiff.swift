/// What changes for a client between two indexes: exercises added, removed and changed, and the
/// bytes it would download.
///
/// Exercises are compared by id across all packs (an exercise "changes" when its GIF hash does,
/// including gaining or losing a GIF, in `packs[]` or in any rendition both indexes have: a
/// release that changes only the 360 px GIFs changes those exercises). Packs are downloaded whole,
/// so ``downloadBytes`` is the size of every pack that is new or whose file changed.
/// ``newGIFFrameBytes`` is what a client reading single GIFs by frame offset (``PackEntryReader``)
/// would fetch instead: the compressed frames of GIFs no pack of the old index had, in every pack
/// of the new one (rendition packs included).
///
/// ```swift
/// let diff = IndexDiff(old: try await PackIndexSource("v1/index.json").load(),
///                      new: try await PackIndexSource("v2/index.json").load())
/// print(diff.changed, diff.downloadBytes)
/// ```
package struct IndexDiff: Sendable, Equatable {
    /// A pack a client has to download (new, or with a new file).
    package struct PackDownload: Sendable, Equatable {
        package var name: String
        package var oldVersion: Int?
        package var newVersion: Int
        package var bytes: Int64
        /// A pack of format 1.3: the resolution of its GIFs (a rendition pack's, or `packs[]`'s).
        package var resolution: Int? = nil
    }

    package var added: [String]
    package var removed: [String]
    package var changed: [String]
    /// Packs to download, sorted by name: rendition packs (format 1.3) among them.
    package var downloads: [PackDownload]
    /// Packs (rendition packs included) the new index no longer has.
    package var removedPacks: [String]
    /// Exercises (distinct ids) in the old and the new index.
    package var exercisesBefore: Int
    package var exercisesAfter: Int

    package var downloadBytes: Int64 { downloads.reduce(0) { $0 + $1.bytes } }
    package var newGIFFrameBytes: Int64

    package init(old: PackIndex, new: PackIndex) {
        // A merge of the two indexes' sorted lists: no map of every id (100,000 exercises took
        // two dictionaries of tens of megabytes).
        (added, removed, changed) = ([], [], [])
        (exercisesBefore, exercisesAfter) = (0, 0)
        for (before, after) in IndexExercisePairs(old: old, new: new) {
            if before != nil { exercisesBefore += 1 }
            if after != nil { exercisesAfter += 1 }
            switch (before, after) {
            case (nil, let after?): added.append(after.id)
            case (let before?, nil): removed.append(before.id)
            case (let before?, let after?) where before.gifsDiffer(from: after): changed.append(after.id)
            default: break
            }
        }
        downloads = new.allPacks.compactMap { pack in
            let previous = old.pack(named: pack.name)
            guard previous?.sha256 != pack.sha256 else { return nil }
            return PackDownload(
                name: pack.name, oldVersion: previous?.version, newVersion: pack.version, bytes: pack.bytes,
                resolution: pack.resolution)
        }.sorted { $0.name < $1.name }
        removedPacks = old.allPacks.map(\.name).filter { new.pack(named: $0) == nil }.sorted()
        let oldHashes = Set(old.allPacks.flatMap { $0.gifs.map(\.sha256) })
        var counted = Set<String>()
        var frameBytes: Int64 = 0
        for pack in new.allPacks {
            for gif in pack.gifs where !oldHashes.contains(gif.sha256) && counted.insert(gif.sha256).inserted {
                frameBytes += gif.location.frameLength
            }
        }
        newGIFFrameBytes = frameBytes
    }

    /// The exercises added, removed and changed (GIF hash differs, a GIF gained or lost included)
    /// from one exercise id → GIF hash map to another, each sorted: an index diff's, an install report's.
    package static func exerciseChanges(from before: [String: String?], to after: [String: String?])
        -> (added: [String], removed: [String], changed: [String])
    {
        (
            after.keys.filter { before[$0] == nil }.sorted(),
            before.keys.filter { after[$0] == nil }.sorted(),
            after.keys.filter { id in before[id].map { $0 != after[id]! } ?? false }.sorted()
        )
    }
}

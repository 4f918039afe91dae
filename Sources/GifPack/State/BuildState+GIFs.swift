import Foundation
import GRDB

/// What the state records of each exercise's GIF: fetches, failures, 304s, forgotten blobs.
extension BuildState {
    package func gif(exerciseID: String, resolution: Int) throws -> GIFState? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT \(GIFState.columns) FROM gif WHERE source = ? AND exercise_id = ? AND resolution = ?",
                             arguments: [source, exerciseID, resolution]).map(GIFState.init(row:))
        }
    }

    /// Every known GIF of this source at a resolution, by exercise id.
    package func gifs(resolution: Int) throws -> [String: GIFState] {
        try database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT \(GIFState.columns) FROM gif WHERE source = ? AND resolution = ?",
                                        arguments: [source, resolution])
            return Dictionary(rows.map { GIFState(row: $0) }.map { ($0.exerciseID, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The known GIFs of this source at a resolution whose exercise ids lie between `low` and
    /// `high` (inclusive, byte order), by exercise id: what a batch of the fetch plan needs.
    package func gifs(resolution: Int, from low: String, through high: String) throws -> [String: GIFState] {
        try database.read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT \(GIFState.columns) FROM gif WHERE source = ? AND exercise_id BETWEEN ? AND ? AND resolution = ?
                """, arguments: [source, low, high, resolution])
            var result: [String: GIFState] = [:]
            while let row = try rows.next() {
                let gif = GIFState(row: row)
                if result[gif.exerciseID] == nil { result[gif.exerciseID] = gif }
            }
            return result
        }
    }

    /// Records a fetch that produced (or confirmed, with a 304) a valid stored GIF.
    package func recordSuccess(_ gif: GIFState) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO gif (source, exercise_id, resolution, url, etag, last_modified, sha256, bytes, width, height,
                                 frames, duration_ms, loop_count, status, fetched_at, attempted_at, consecutive_failures, last_error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', ?, ?, 0, NULL)
                ON CONFLICT (source, exercise_id, resolution) DO UPDATE SET
                    url = excluded.url, etag = excluded.etag, last_modified = excluded.last_modified,
                    sha256 = excluded.sha256, bytes = excluded.bytes, width = excluded.width, height = excluded.height,
                    frames = excluded.frames, duration_ms = excluded.duration_ms, loop_count = excluded.loop_count,
                    status = 'ok', fetched_at = excluded.fetched_at, attempted_at = excluded.attempted_at,
                    consecutive_failures = 0, last_error = NULL
                """, arguments: [source, gif.exerciseID, gif.resolution, gif.url, gif.etag, gif.lastModified,
                                 gif.sha256, gif.bytes, gif.width, gif.height, gif.frames, gif.durationMilliseconds,
                                 gif.loopCount, gif.fetchedAt?.timeIntervalSince1970, gif.attemptedAt.timeIntervalSince1970])
        }
    }

    /// Records a failed fetch. The stored blob and metadata of an earlier success are kept (they are
    /// the last known good GIF); `missing` marks a 404, remembered so it is not asked for again
    /// until its TTL expires.
    package func recordFailure(exerciseID: String, resolution: Int, url: String, reason: String, missing: Bool,
                              at date: Date) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO gif (source, exercise_id, resolution, url, status, attempted_at, consecutive_failures, last_error)
                VALUES (?, ?, ?, ?, ?, ?, 1, ?)
                ON CONFLICT (source, exercise_id, resolution) DO UPDATE SET
                    url = excluded.url, status = excluded.status, attempted_at = excluded.attempted_at,
                    consecutive_failures = gif.consecutive_failures + 1, last_error = excluded.last_error
                """, arguments: [source, exerciseID, resolution, url, missing ? "missing" : "failed",
                                 date.timeIntervalSince1970, reason])
        }
    }

    /// Marks a GIF as just confirmed unchanged (a 304): its fetch time moves on.
    package func recordNotModified(exerciseID: String, resolution: Int, at date: Date) throws {
        try database.write { db in
            try db.execute(sql: """
                UPDATE gif SET status = 'ok', fetched_at = ?, attempted_at = ?, consecutive_failures = 0, last_error = NULL
                WHERE source = ? AND exercise_id = ? AND resolution = ?
                """, arguments: [date.timeIntervalSince1970, date.timeIntervalSince1970, source, exerciseID, resolution])
        }
    }

    /// Forgets that a blob was fetched: its GIFs are neither fresh nor conditionally requested
    /// again, so the next fetch downloads them whole (the blob was found damaged and removed).
    package func forgetBlob(sha256: String) throws {
        try database.write { db in
            try db.execute(sql: """
                UPDATE gif SET etag = NULL, last_modified = NULL, fetched_at = NULL WHERE source = ? AND sha256 = ?
                """, arguments: [source, sha256])
        }
    }

    /// Every blob hash the state still refers to.
    package func referencedBlobs() throws -> Set<String> {
        try database.read { db in
            Set(try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM gif WHERE sha256 IS NOT NULL"))
        }
    }
}

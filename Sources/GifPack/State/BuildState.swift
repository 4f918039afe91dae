import Foundation
import GRDB

/// The builder's memory between runs: an SQLite database (WAL mode) in the cache directory.
///
/// For each (source, exercise id, resolution) it keeps what the last fetch learnt — URL, ETag,
/// Last-Modified, the blob's hash and GIF metadata, status, when it was fetched, consecutive
/// failures and the last error — plus the last catalog (to report what changed) and the history of
/// the pack versions its builds wrote (tables `published_pack` and `published_index`: historical
/// names, kept as they are on disk). Every finished download is recorded in its own transaction, so a killed
/// run loses at most the requests that were in flight. The schema is created and upgraded by
/// migrations.
///
/// ```swift
/// let state = try BuildState(path: "\(cache)/state.sqlite", source: "exercisedb-rapidapi https://…")
/// if let known = try state.gif(exerciseID: "0001", resolution: 180), known.status == .ok { … }
/// ```
package final class BuildState: Sendable {
    let database: any DatabaseWriter
    /// Identifies the API (kind and base URL): state of one source never answers for another.
    package let source: String
    /// The database file.
    package let path: String

    package init(path: String, source: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // Each connection keeps at most 512 KiB of pages (SQLite's default is 2 MB, for the file
        // and again for temporary tables): the state is read in id-ordered ranges and written a
        // batch at a time, and at 100,000 exercises full caches were a third of the heap. Pages
        // not kept are read again from the operating system's cache.
        configuration.prepareDatabase { db in
            // (The temporary schema's cache is bounded where its one table is made: `replaceCatalog`.)
            try db.execute(sql: "PRAGMA main.cache_size = -\(Self.cacheKiB)")
        }
        database = try DatabasePool(path: path, configuration: configuration)
        self.source = source
        try Self.migrator.migrate(database)
    }

    /// Closes the database now (SQLite checkpoints the write-ahead log into the file as the last
    /// connection closes) rather than whenever the last reference to the state goes, which a worker
    /// thread releasing its job late could put after the build returned and its locks were freed.
    /// Later reads and writes fail. Blocking.
    func close() {
        do { try database.close() } catch {
            // A connection still in use: it closes when released, as before.
        }
    }

    /// The page cache of each connection, in KiB.
    static let cacheKiB = 512

    /// A state in memory, for working out what a recovery would record without touching the disk.
    init(inMemorySource source: String) throws {
        path = ":memory:"
        database = try DatabaseQueue()
        self.source = source
        try Self.migrator.migrate(database)
    }

    /// `PRAGMA quick_check` found damage.
    struct IntegrityError: Error, CustomStringConvertible {
        var findings: [String]
        var description: String { "integrity check: " + findings.prefix(3).joined(separator: "; ") }
    }

    /// Throws ``IntegrityError`` unless SQLite's quick check finds the database sound.
    func checkIntegrity() throws {
        let findings = try database.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        guard findings == ["ok"] else { throw IntegrityError(findings: findings) }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE gif (
                        source TEXT NOT NULL,
                        exercise_id TEXT NOT NULL,
                        resolution INTEGER NOT NULL,
                        url TEXT NOT NULL,
                        etag TEXT,
                        last_modified TEXT,
                        sha256 TEXT,
                        bytes INTEGER,
                        width INTEGER,
                        height INTEGER,
                        frames INTEGER,
                        duration_ms INTEGER,
                        loop_count INTEGER,
                        status TEXT NOT NULL,
                        fetched_at REAL,
                        attempted_at REAL NOT NULL,
                        consecutive_failures INTEGER NOT NULL DEFAULT 0,
                        last_error TEXT,
                        PRIMARY KEY (source, exercise_id, resolution)
                    );
                    CREATE TABLE catalog_entry (
                        source TEXT NOT NULL,
                        exercise_id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        PRIMARY KEY (source, exercise_id)
                    );
                    CREATE TABLE published_pack (
                        pack TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        file TEXT NOT NULL,
                        sha256 TEXT NOT NULL,
                        content_digest TEXT NOT NULL,
                        published_at REAL NOT NULL,
                        PRIMARY KEY (pack, version)
                    );
                    """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE published_index (
                        sequence INTEGER PRIMARY KEY,
                        sha256 TEXT NOT NULL,
                        expires TEXT NOT NULL,
                        published_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v3") { db in
            // The digest of the catalog catalog_entry holds (see replaceCatalog(_:digest:)).
            try db.execute(
                sql: """
                    CREATE TABLE catalog_digest (
                        source TEXT PRIMARY KEY,
                        digest TEXT NOT NULL
                    );
                    """)
        }
        return migrator
    }
}

/// The last catalog the state remembers, and how a new one changed it.
extension BuildState {
    /// How many exercises the last catalog had (nil before the first run).
    package func lastCatalogCount() throws -> Int? {
        try database.read { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM catalog_entry WHERE source = ?", arguments: [source]) ?? 0
            return count > 0 ? count : nil
        }
    }

    /// Replaces the remembered catalog with `fingerprints` and returns how it changed.
    package func replaceCatalog(_ fingerprints: [String: String]) throws -> CatalogChanges {
        try replaceCatalog(fingerprints.lazy.map { (id: $0.key, fingerprint: $0.value) })
    }

    /// Replaces the remembered catalog with `fingerprints` (each id once), consumed one at a time,
    /// and returns how it changed. The comparison runs in SQLite (a temporary table of the new
    /// catalog joined with the remembered one), and only the rows that differ are written, so
    /// neither catalog is held in memory and an unchanged catalog costs no writes to the file.
    ///
    /// With a `digest` of the new catalog (``CatalogFingerprint/digest(of:)``) equal to the one
    /// stored with the remembered catalog, nothing is compared or written and `fingerprints` is
    /// not read: an unchanged catalog of 100,000 exercises costs one lookup.
    ///
    /// Each list of ids returned holds at most `listLimit` (the first in id order; the counts are
    /// whole): a first build adds every exercise, and 100,000 ids are megabytes held all build long.
    ///
    /// `checkRemoved` hears how many remembered exercises the new catalog lacks before anything
    /// is written; when it throws, the remembered catalog stays as it was and the error goes on.
    package func replaceCatalog<S: Sequence>(
        _ fingerprints: S, digest: String? = nil,
        listLimit: Int = BuildReport.listLimit,
        checkRemoved: ((_ removed: Int) throws -> Void)? = nil
    ) throws -> CatalogChanges
    where S.Element == (id: String, fingerprint: String) {
        try replaceCatalog(
            each: { each in for pair in fingerprints { try each(pair) } }, digest: digest, listLimit: listLimit,
            checkRemoved: checkRemoved)
    }

    /// Ids and fingerprints handed out one at a time to the function given (which may throw:
    /// a catalog read back from the build's spool).
    package typealias Fingerprints = ((_ each: (id: String, fingerprint: String)) throws -> Void) throws -> Void

    /// ``replaceCatalog(_:digest:listLimit:checkRemoved:)`` of fingerprints handed out by `fingerprints`.
    package func replaceCatalog(
        each fingerprints: Fingerprints, digest: String? = nil, listLimit: Int = BuildReport.listLimit,
        checkRemoved: ((_ removed: Int) throws -> Void)? = nil
    ) throws -> CatalogChanges {
        try database.write { db in
            if let digest,
                try String.fetchOne(db, sql: "SELECT digest FROM catalog_digest WHERE source = ?", arguments: [source]) == digest
            {
                let hadPrevious =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_entry WHERE source = ?)",
                        arguments: [source]) ?? false
                return CatalogChanges(hadPrevious: hadPrevious, added: [], removed: [], changed: [])
            }
            try db.execute(
                sql: """
                    CREATE TEMP TABLE IF NOT EXISTS catalog_now (exercise_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
                    DELETE FROM temp.catalog_now;
                    PRAGMA temp.cache_size = -\(Self.cacheKiB);
                    """)
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO temp.catalog_now (exercise_id, fingerprint) VALUES (?, ?)")
            try fingerprints { pair in try insert.execute(arguments: [pair.id, pair.fingerprint]) }
            let hadPrevious =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_entry WHERE source = ?)",
                    arguments: [source]) ?? false
            /// The first `listLimit` ids a query gives, in id order, and how many it gives in all
            /// (counted by the same pass, as a window over every row).
            func ids(_ query: String) throws -> (ids: [String], count: Int) {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT exercise_id, COUNT(*) OVER () FROM (\(query)) ORDER BY 1 LIMIT ?",
                    arguments: [source, listLimit])
                return (rows.map { $0[0] }, rows.first.map { $0[1] } ?? 0)
            }
            let added = try ids(
                """
                SELECT n.exercise_id FROM temp.catalog_now n
                WHERE NOT EXISTS (SELECT 1 FROM catalog_entry c WHERE c.source = ? AND c.exercise_id = n.exercise_id)
                """)
            let removed = try ids(
                """
                SELECT c.exercise_id FROM catalog_entry c
                WHERE c.source = ? AND NOT EXISTS (SELECT 1 FROM temp.catalog_now n WHERE n.exercise_id = c.exercise_id)
                """)
            try checkRemoved?(removed.count)
            let changed = try ids(
                """
                SELECT n.exercise_id FROM temp.catalog_now n JOIN catalog_entry c ON c.source = ? AND c.exercise_id = n.exercise_id
                WHERE c.fingerprint != n.fingerprint
                """)
            try db.execute(
                sql: """
                    DELETE FROM catalog_entry
                    WHERE source = ? AND NOT EXISTS (SELECT 1 FROM temp.catalog_now n WHERE n.exercise_id = catalog_entry.exercise_id);
                    INSERT INTO catalog_entry (source, exercise_id, fingerprint)
                    SELECT ?, n.exercise_id, n.fingerprint FROM temp.catalog_now n
                    WHERE NOT EXISTS (SELECT 1 FROM catalog_entry c WHERE c.source = ? AND c.exercise_id = n.exercise_id
                                      AND c.fingerprint = n.fingerprint)
                    ON CONFLICT (source, exercise_id) DO UPDATE SET fingerprint = excluded.fingerprint;
                    DELETE FROM temp.catalog_now;
                    """, arguments: [source, source, source])
            if let digest {
                try db.execute(sql: "INSERT OR REPLACE INTO catalog_digest (source, digest) VALUES (?, ?)", arguments: [source, digest])
            } else {
                try db.execute(sql: "DELETE FROM catalog_digest WHERE source = ?", arguments: [source])
            }
            return CatalogChanges(
                hadPrevious: hadPrevious, added: added.ids, removed: removed.ids, changed: changed.ids,
                addedCount: added.count, removedCount: removed.count, changedCount: changed.count)
        }
    }
}

/// What the state records of each exercise's GIF: fetches, failures, 304s, forgotten blobs.
extension BuildState {
    package func gif(exerciseID: String, resolution: Int) throws -> GIFState? {
        try database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(GIFState.columns) FROM gif WHERE source = ? AND exercise_id = ? AND resolution = ?",
                arguments: [source, exerciseID, resolution]
            ).map(GIFState.init(row:))
        }
    }

    /// Every known GIF of this source at a resolution, by exercise id.
    package func gifs(resolution: Int) throws -> [String: GIFState] {
        try database.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(GIFState.columns) FROM gif WHERE source = ? AND resolution = ?",
                arguments: [source, resolution])
            return Dictionary(rows.map { GIFState(row: $0) }.map { ($0.exerciseID, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The known GIFs of this source at a resolution whose exercise ids lie between `low` and
    /// `high` (inclusive, byte order), by exercise id: what a batch of the fetch plan needs.
    package func gifs(resolution: Int, from low: String, through high: String) throws -> [String: GIFState] {
        try database.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
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
            try db.execute(
                sql: """
                    INSERT INTO gif (source, exercise_id, resolution, url, etag, last_modified, sha256, bytes, width, height,
                                     frames, duration_ms, loop_count, status, fetched_at, attempted_at, consecutive_failures, last_error)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', ?, ?, 0, NULL)
                    ON CONFLICT (source, exercise_id, resolution) DO UPDATE SET
                        url = excluded.url, etag = excluded.etag, last_modified = excluded.last_modified,
                        sha256 = excluded.sha256, bytes = excluded.bytes, width = excluded.width, height = excluded.height,
                        frames = excluded.frames, duration_ms = excluded.duration_ms, loop_count = excluded.loop_count,
                        status = 'ok', fetched_at = excluded.fetched_at, attempted_at = excluded.attempted_at,
                        consecutive_failures = 0, last_error = NULL
                    """,
                arguments: [
                    source, gif.exerciseID, gif.resolution, gif.url, gif.etag, gif.lastModified,
                    gif.sha256, gif.bytes, gif.width, gif.height, gif.frames, gif.durationMilliseconds,
                    gif.loopCount, gif.fetchedAt?.timeIntervalSince1970, gif.attemptedAt.timeIntervalSince1970
                ])
        }
    }

    /// Records a failed fetch. The stored blob and metadata of an earlier success are kept (they are
    /// the last known good GIF); `missing` marks a 404, remembered so it is not asked for again
    /// until its TTL expires.
    package func recordFailure(
        exerciseID: String, resolution: Int, url: String, reason: String, missing: Bool,
        at date: Date
    ) throws {
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO gif (source, exercise_id, resolution, url, status, attempted_at, consecutive_failures, last_error)
                    VALUES (?, ?, ?, ?, ?, ?, 1, ?)
                    ON CONFLICT (source, exercise_id, resolution) DO UPDATE SET
                        url = excluded.url, status = excluded.status, attempted_at = excluded.attempted_at,
                        consecutive_failures = gif.consecutive_failures + 1, last_error = excluded.last_error
                    """,
                arguments: [
                    source, exerciseID, resolution, url, missing ? "missing" : "failed",
                    date.timeIntervalSince1970, reason
                ])
        }
    }

    /// Marks a GIF as just confirmed unchanged (a 304): its fetch time moves on.
    package func recordNotModified(exerciseID: String, resolution: Int, at date: Date) throws {
        try database.write { db in
            try db.execute(
                sql: """
                    UPDATE gif SET status = 'ok', fetched_at = ?, attempted_at = ?, consecutive_failures = 0, last_error = NULL
                    WHERE source = ? AND exercise_id = ? AND resolution = ?
                    """, arguments: [date.timeIntervalSince1970, date.timeIntervalSince1970, source, exerciseID, resolution])
        }
    }

    /// Forgets that a blob was fetched: its GIFs are neither fresh nor conditionally requested
    /// again, so the next fetch downloads them whole (the blob was found damaged and removed).
    package func forgetBlob(sha256: String) throws {
        try database.write { db in
            try db.execute(
                sql: """
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

/// The pack versions and signed indexes this cache's builds wrote (in the tables `published_pack`
/// and `published_index`: historical names).
extension BuildState {
    package func recordWritten(
        pack: String, version: Int, file: String, sha256: String, contentDigest: String,
        at date: Date
    ) throws {
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO published_pack (pack, version, file, sha256, content_digest, published_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [pack, version, file, sha256, contentDigest, date.timeIntervalSince1970])
        }
    }

    /// Records a signed index this cache's builds wrote.
    package func recordSignedIndex(sequence: Int, sha256: String, expires: String, at date: Date) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO published_index (sequence, sha256, expires, published_at) VALUES (?, ?, ?, ?)",
                arguments: [sequence, sha256, expires, date.timeIntervalSince1970])
        }
    }

    /// The highest sequence of a signed index recorded here, nil before the first.
    package func highestIndexSequence() throws -> Int? {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT MAX(sequence) FROM published_index") }
    }

    /// Every version of `pack` recorded as written, oldest first.
    package func writtenPacks(pack: String) throws -> [WrittenPack] {
        try database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT version, file, sha256 FROM published_pack WHERE pack = ? ORDER BY version",
                arguments: [pack]
            ).map { WrittenPack(version: $0["version"], file: $0["file"], sha256: $0["sha256"]) }
        }
    }

    package func writtenVersions(pack: String) throws -> [Int] {
        try database.read { db in
            try Int.fetchAll(db, sql: "SELECT version FROM published_pack WHERE pack = ? ORDER BY version", arguments: [pack])
        }
    }
}

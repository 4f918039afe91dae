import Foundation
import GRDB

/// The builder's memory between runs: an SQLite database (WAL mode) in the cache directory.
///
/// For each (source, exercise id, resolution) it keeps what the last fetch learnt — URL, ETag,
/// Last-Modified, the blob's hash and GIF metadata, status, when it was fetched, consecutive
/// failures and the last error — plus the last catalog (to report what changed) and the history of
/// published pack versions. Every finished download is recorded in its own transaction, so a killed
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
            try db.execute(sql: """
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
            try db.execute(sql: """
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
            try db.execute(sql: """
                CREATE TABLE catalog_digest (
                    source TEXT PRIMARY KEY,
                    digest TEXT NOT NULL
                );
                """)
        }
        return migrator
    }
}

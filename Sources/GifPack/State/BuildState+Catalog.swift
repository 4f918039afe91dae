import Foundation
import GRDB

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
    package func replaceCatalog<S: Sequence>(_ fingerprints: S, digest: String? = nil,
                                            listLimit: Int = BuildReport.listLimit,
                                            checkRemoved: ((_ removed: Int) throws -> Void)? = nil) throws -> CatalogChanges
        where S.Element == (id: String, fingerprint: String) {
        try replaceCatalog(each: { each in for pair in fingerprints { try each(pair) } }, digest: digest, listLimit: listLimit,
                           checkRemoved: checkRemoved)
    }

    /// Ids and fingerprints handed out one at a time to the function given (which may throw:
    /// a catalog read back from the build's spool).
    package typealias Fingerprints = ((_ each: (id: String, fingerprint: String)) throws -> Void) throws -> Void

    /// ``replaceCatalog(_:digest:listLimit:checkRemoved:)`` of fingerprints handed out by `fingerprints`.
    package func replaceCatalog(each fingerprints: Fingerprints, digest: String? = nil, listLimit: Int = BuildReport.listLimit,
                               checkRemoved: ((_ removed: Int) throws -> Void)? = nil) throws -> CatalogChanges {
        try database.write { db in
            if let digest,
               try String.fetchOne(db, sql: "SELECT digest FROM catalog_digest WHERE source = ?", arguments: [source]) == digest {
                let hadPrevious = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_entry WHERE source = ?)",
                                                    arguments: [source]) ?? false
                return CatalogChanges(hadPrevious: hadPrevious, added: [], removed: [], changed: [])
            }
            try db.execute(sql: """
                CREATE TEMP TABLE IF NOT EXISTS catalog_now (exercise_id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL);
                DELETE FROM temp.catalog_now;
                PRAGMA temp.cache_size = -\(Self.cacheKiB);
                """)
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO temp.catalog_now (exercise_id, fingerprint) VALUES (?, ?)")
            try fingerprints { pair in try insert.execute(arguments: [pair.id, pair.fingerprint]) }
            let hadPrevious = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM catalog_entry WHERE source = ?)",
                                                arguments: [source]) ?? false
            /// The first `listLimit` ids a query gives, in id order, and how many it gives in all
            /// (counted by the same pass, as a window over every row).
            func ids(_ query: String) throws -> (ids: [String], count: Int) {
                let rows = try Row.fetchAll(db, sql: "SELECT exercise_id, COUNT(*) OVER () FROM (\(query)) ORDER BY 1 LIMIT ?",
                                            arguments: [source, listLimit])
                return (rows.map { $0[0] }, rows.first.map { $0[1] } ?? 0)
            }
            let added = try ids("""
                SELECT n.exercise_id FROM temp.catalog_now n
                WHERE NOT EXISTS (SELECT 1 FROM catalog_entry c WHERE c.source = ? AND c.exercise_id = n.exercise_id)
                """)
            let removed = try ids("""
                SELECT c.exercise_id FROM catalog_entry c
                WHERE c.source = ? AND NOT EXISTS (SELECT 1 FROM temp.catalog_now n WHERE n.exercise_id = c.exercise_id)
                """)
            try checkRemoved?(removed.count)
            let changed = try ids("""
                SELECT n.exercise_id FROM temp.catalog_now n JOIN catalog_entry c ON c.source = ? AND c.exercise_id = n.exercise_id
                WHERE c.fingerprint != n.fingerprint
                """)
            try db.execute(sql: """
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
            return CatalogChanges(hadPrevious: hadPrevious, added: added.ids, removed: removed.ids, changed: changed.ids,
                                  addedCount: added.count, removedCount: removed.count, changedCount: changed.count)
        }
    }
}

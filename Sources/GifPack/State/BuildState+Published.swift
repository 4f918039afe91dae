import Foundation
import GRDB

/// The pack versions and signed indexes this cache's builds published.
extension BuildState {
    package func recordPublished(pack: String, version: Int, file: String, sha256: String, contentDigest: String,
                                at date: Date) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO published_pack (pack, version, file, sha256, content_digest, published_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [pack, version, file, sha256, contentDigest, date.timeIntervalSince1970])
        }
    }

    /// Records a signed index this cache's builds published.
    package func recordSignedIndex(sequence: Int, sha256: String, expires: String, at date: Date) throws {
        try database.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO published_index (sequence, sha256, expires, published_at) VALUES (?, ?, ?, ?)",
                           arguments: [sequence, sha256, expires, date.timeIntervalSince1970])
        }
    }

    /// The highest sequence of a signed index recorded here, nil before the first.
    package func highestIndexSequence() throws -> Int? {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT MAX(sequence) FROM published_index") }
    }

    /// Every version of `pack` recorded as published, oldest first.
    package func publishedPacks(pack: String) throws -> [PublishedPack] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT version, file, sha256 FROM published_pack WHERE pack = ? ORDER BY version",
                             arguments: [pack]).map { PublishedPack(version: $0["version"], file: $0["file"], sha256: $0["sha256"]) }
        }
    }

    package func publishedVersions(pack: String) throws -> [Int] {
        try database.read { db in
            try Int.fetchAll(db, sql: "SELECT version FROM published_pack WHERE pack = ? ORDER BY version", arguments: [pack])
        }
    }
}

import Foundation
import GRDB

/// What the state knows of one exercise's GIF.
package struct GIFState: Sendable, Equatable {
    /// `ok`: a valid GIF is stored; `missing`: the last answer was a 404; `failed`: the last fetch failed otherwise.
    package enum Status: String, Sendable { case ok, missing, failed }

    package var exerciseID: String
    package var resolution: Int
    package var url: String
    package var etag: String?
    package var lastModified: String?
    package var sha256: String?
    package var bytes: Int64?
    package var width: Int?
    package var height: Int?
    package var frames: Int?
    package var durationMilliseconds: Int?
    package var loopCount: Int?
    package var status: Status
    /// When a valid body was last downloaded or confirmed (304).
    package var fetchedAt: Date?
    package var attemptedAt: Date
    package var consecutiveFailures: Int
    package var lastError: String?

    package init(
        exerciseID: String, resolution: Int, url: String, etag: String?, lastModified: String?,
        metadata: GIFMetadata, fetchedAt: Date
    ) {
        self.exerciseID = exerciseID
        self.resolution = resolution
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.sha256 = metadata.sha256
        self.bytes = metadata.bytes
        self.width = metadata.width
        self.height = metadata.height
        self.frames = metadata.frames
        self.durationMilliseconds = metadata.durationMilliseconds
        self.loopCount = metadata.loopCount
        self.status = .ok
        self.fetchedAt = fetchedAt
        self.attemptedAt = fetchedAt
        self.consecutiveFailures = 0
        self.lastError = nil
    }

    /// The columns ``init(row:)`` reads, in its order (by position: a lookup by name for each of
    /// 17 columns of 100,000 rows was a measurable part of planning a rebuild).
    static let columns = """
        exercise_id, resolution, url, etag, last_modified, sha256, bytes, width, height, frames, duration_ms, loop_count, \
        status, fetched_at, attempted_at, consecutive_failures, last_error
        """

    /// A row selected with ``columns``.
    init(row: Row) {
        exerciseID = row[0]
        resolution = row[1]
        url = row[2]
        etag = row[3]
        lastModified = row[4]
        sha256 = row[5]
        bytes = row[6]
        width = row[7]
        height = row[8]
        frames = row[9]
        durationMilliseconds = row[10]
        loopCount = row[11]
        status = Status(rawValue: row[12]) ?? .failed
        fetchedAt = (row[13] as Double?).map { Date(timeIntervalSince1970: $0) }
        attemptedAt = Date(timeIntervalSince1970: row[14])
        consecutiveFailures = row[15]
        lastError = row[16]
    }

    /// The stored GIF's metadata, if a valid GIF was ever stored.
    package var metadata: GIFMetadata? {
        guard let sha256, let bytes, let width, let height, let frames, let durationMilliseconds else { return nil }
        return GIFMetadata(
            sha256: sha256, bytes: bytes, width: width, height: height, frames: frames,
            durationMilliseconds: durationMilliseconds, loopCount: loopCount)
    }
}

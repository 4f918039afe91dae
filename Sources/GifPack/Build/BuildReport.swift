import Foundation

/// What a build did, written as `report.json` beside the index (atomically) and summarised on the
/// terminal. Unlike the index it holds timings, so it differs from run to run.
///
/// ```swift
/// let report = try await BuildPipeline(manifest: manifest, options: options).run()
/// print(report.exitStatus, report.gifs.downloaded)
/// ```
public struct BuildReport: Sendable, Codable, Equatable {
    public static let schemaVersion = 1
    public var schemaVersion = BuildReport.schemaVersion
    public var generator: String
    public var exitStatus: ExitStatus
    public var message: String
    public var catalog = CatalogSummary()
    public var gifs = GIFSummary()
    public var rejections: [FetchRejection] = []
    /// Exercises whose GIF size differs from the requested resolution (served downgraded).
    public var resolutionMismatches: [ResolutionMismatch] = []
    public var packs: [PackResult] = []
    /// Why the build stopped scheduling requests early, if it did.
    public var stopReason: StopReason?
    /// Exercises whose fetch failed this run but whose earlier GIF was kept.
    public var reusedLastGood: [FetchRejection] = []
    public var catalogChanges: CatalogChanges?
    /// What the end-of-build retention pass deleted.
    public var pruned: Pruner.Result?
    /// State database writes that failed (the build went on).
    public var stateErrors: [String] = []
    public var stageSeconds: [String: Double] = [:]
    public var http = HTTPSummary()

    public struct CatalogSummary: Sendable, Codable, Equatable {
        public var exercises = 0
        public var pages = 0
        public var rejectedRecords: [CatalogRejection] = []
        public var duplicateIDs: [String] = []
    }

    public struct GIFSummary: Sendable, Codable, Equatable {
        /// Exercises selected by at least one pack.
        public var wanted = 0
        /// Valid GIFs this build has, however obtained.
        public var valid = 0
        /// Bodies downloaded and validated.
        public var downloaded = 0
        /// Conditional requests answered 304.
        public var notModified = 0
        /// Not requested: fetched more recently than refresh_after.
        public var skippedFresh = 0
        /// This run's fetch failed; an earlier build's GIF was kept.
        public var reusedLastGood = 0
        public var newlyStored = 0
        /// Valid GIFs whose bytes were already stored (another exercise's GIF or an earlier build's).
        public var deduplicated = 0
        public var rejected = 0
        public var rejectedByReason: [String: Int] = [:]
        public var missing = 0
        public var bytesDownloaded: Int64 = 0
    }

    public struct ResolutionMismatch: Sendable, Codable, Equatable {
        public var exerciseID: String
        public var requested: Int
        public var width: Int
        public var height: Int
    }

    public struct PackResult: Sendable, Codable, Equatable {
        public var name: String
        public var version: Int
        public var file: String
        /// `published` (a new version) or `unchanged`.
        public var outcome: String
        public var exercises: Int
        public var missing: Int
        public var distinctGIFs: Int
        public var bytes: Int64
        public var uncompressedBytes: Int64
    }

    public struct HTTPSummary: Sendable, Codable, Equatable {
        public var requests = 0
        public var retries = 0
        public var rateLimited = 0
        public var quotaRemaining: Int?
        public var maxInFlight = 0
        public var connectionsOpened = 0
    }
}

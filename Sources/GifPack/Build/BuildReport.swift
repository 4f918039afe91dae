import Foundation

/// What a build did, written as `report.json` beside the index (atomically) and summarised on the
/// terminal. Unlike the index it holds timings, so it differs from run to run.
///
/// The pipeline fills the counters as it goes and calls ``complete(startedAt:finishedAt:)`` once at
/// the end, which derives the totals (bytes packed, compression ratios, the exit status's meaning)
/// from them. Schema 2 added `startedAt`, `finishedAt`, `exitMeaning`, `bytes` and each pack's
/// `compressionRatio`.
///
/// ```swift
/// let report = await BuildPipeline(manifest: manifest, options: options).run()
/// print(report.exitStatus, report.gifs.downloaded, report.bytes.compressionRatio ?? 0)
/// ```
package struct BuildReport: Sendable, Codable, Equatable {
    package static let schemaVersion = 2
    package var schemaVersion = BuildReport.schemaVersion
    package var generator: String
    package var exitStatus: ExitStatus
    /// ``ExitStatus/summary`` of `exitStatus`, for readers without the table.
    package var exitMeaning = ""
    package var message: String
    /// When the run started and finished, ISO 8601 in UTC (`2026-05-01T04:00:00.123Z`).
    package var startedAt: String?
    package var finishedAt: String?
    package var bytes = ByteSummary()
    package var catalog = CatalogSummary()
    package var gifs = GIFSummary()
    /// The refused exercises in id order, at most ``listLimit`` of them (`gifs.rejected` counts them
    /// all; the log names every one as it happens).
    package var rejections: [FetchRejection] = []
    /// Exercises whose GIF size differs from the requested resolution (served downgraded), in id
    /// order, at most ``listLimit`` of them (`gifs.resolutionMismatches` counts them all).
    package var resolutionMismatches: [ResolutionMismatch] = []
    /// With several resolutions: each one's GIF counts, in the manifest's order (``gifs`` holds the
    /// first's); nil with one resolution.
    package var renditions: [RenditionSummary]?
    package var packs: [PackResult] = []
    /// The WebP renditions (`output.formats` with `webp`); nil when the build makes GIF only.
    package var webp: WebPSummary?
    /// What happened to `index.json` (absent when the build wrote no index).
    package var index: IndexSummary?
    /// Posters pack files (`packs/<pack>-posters-v<N>-<sha8>.tar.zst`) this run wrote
    /// (`posterPacksPublished`: the historical key in `report.json`).
    package var posterPacksPublished: [String] = []
    /// Why the build stopped scheduling requests early, if it did.
    package var stopReason: StopReason?
    /// The exercises a stopped build never sent a request for, counted (they are not listed one
    /// by one in `rejections`: a budget stop can leave 100,000 of them).
    package var notAttempted: NotAttemptedSummary?
    /// Exercises whose fetch failed this run but whose earlier GIF was kept, at most ``listLimit``
    /// of them (`gifs.reusedLastGood` counts them all).
    package var reusedLastGood: [FetchRejection] = []
    package var catalogChanges: CatalogChanges?
    /// What the end-of-build retention pass deleted.
    package var pruned: Pruner.Result?
    /// Hashes of cached GIFs found damaged while packing (bytes no longer matching their hash):
    /// each was removed and its exercises downloaded again in the same run.
    package var damagedBlobs: [String] = []
    /// Present when `state.sqlite` was found damaged, moved aside and rebuilt (see ``StateRecovery``).
    package var stateRecovery: StateRecovery?
    /// State database writes that failed (the build went on).
    package var stateErrors: [String] = []
    /// Seconds spent in each stage that ran (`catalog`, `plan`, `fetch`, `pack`, `index`, `prune`)
    /// and in the whole run (`total`).
    package var stageSeconds: [String: Double] = [:]
    /// The key of the whole run's seconds in ``stageSeconds``, beside each ``BuildStage``'s raw value.
    package static let totalSecondsKey = "total"
    /// The seconds `stage` took, when it ran.
    package func seconds(of stage: BuildStage) -> Double? { stageSeconds[stage.rawValue] }
    /// The whole run's seconds.
    package var totalSeconds: Double? { stageSeconds[Self.totalSecondsKey] }
    package var http = HTTPSummary()

    /// The most entries a per-exercise list of the report holds, so that the report of a catalog of
    /// 100,000 exercises served at another resolution stays a few kilobytes; counts are always whole.
    package static let listLimit = 1_000

    package init(generator: String, exitStatus: ExitStatus, message: String) {
        self.generator = generator
        self.exitStatus = exitStatus
        self.exitMeaning = exitStatus.summary
        self.message = message
    }

    /// Derives the totals from the counters and stamps the run's times; call once, at the end.
    package mutating func complete(startedAt: Date, finishedAt: Date) {
        self.startedAt = BuildReport.timestamp(startedAt)
        self.finishedAt = BuildReport.timestamp(finishedAt)
        exitMeaning = exitStatus.summary
        for index in packs.indices {
            packs[index].compressionRatio = BuildReport.ratio(packs[index].uncompressedBytes, packs[index].bytes)
        }
        bytes.downloaded = gifs.bytesDownloaded
        bytes.packed = packs.reduce(0) { $0 + $1.bytes }
        bytes.packedUncompressed = packs.reduce(0) { $0 + $1.uncompressedBytes }
        bytes.written = packs.filter(\.isNewVersion).reduce(0) { $0 + $1.bytes }
        bytes.compressionRatio = BuildReport.ratio(bytes.packedUncompressed, bytes.packed)
    }

    /// Writes the report as `<directory>/report.json`, atomically (sorted keys, pretty-printed,
    /// ending in a newline).
    package func write(toDirectory directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        try FileSystem.writeAtomically([UInt8](data), to: "\(directory)/report.json")
    }

    /// ISO 8601 in UTC with milliseconds, the form of `startedAt` and `finishedAt`.
    package static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    private static func ratio(_ uncompressed: Int64, _ compressed: Int64) -> Double? {
        guard compressed > 0 else { return nil }
        return (Double(uncompressed) / Double(compressed) * 1000).rounded() / 1000
    }

    /// How many exercises a stopped build never attempted, with a few of their ids.
    package struct NotAttemptedSummary: Sendable, Codable, Equatable {
        /// How many ids ``examples`` holds at most.
        package static let exampleCount = 5
        package var count: Int
        /// The first ids (in id order), at most ``exampleCount``.
        package var examples: [String]

        package init(ids: [String]) {
            count = ids.count
            examples = Array(ids.prefix(Self.exampleCount))
        }

        /// `1234 exercise(s) not attempted (e.g. 0001, 0002, 0003, 0004, 0005)`.
        package var sentence: String {
            "\(count) exercise(s) not attempted" + (examples.isEmpty ? "" : " (e.g. \(examples.joined(separator: ", ")))")
        }
    }

    /// Byte totals of the run.
    package struct ByteSummary: Sendable, Codable, Equatable {
        /// GIF bodies downloaded and validated (the same as `gifs.bytesDownloaded`).
        package var downloaded: Int64 = 0
        /// Size of every pack file the index now lists, compressed.
        package var packed: Int64 = 0
        /// The same packs' tar streams before compression.
        package var packedUncompressed: Int64 = 0
        /// Size of the pack files this run wrote (new versions only).
        package var written: Int64 = 0
        /// `packedUncompressed / packed`, rounded to 3 decimals; nil without packs.
        package var compressionRatio: Double?
    }

    /// The catalog as fetched: exercises, pages, refused records, duplicate ids.
    package struct CatalogSummary: Sendable, Codable, Equatable {
        package var exercises = 0
        package var pages = 0
        /// Pages whose body had not changed since the last run: their exercises were reused, not parsed again.
        package var pagesReused = 0
        package var rejectedRecords: [CatalogRejection] = []
        package var duplicateIDs: [String] = []
    }

    /// Counts of the wanted GIFs by outcome.
    package struct GIFSummary: Sendable, Codable, Equatable {
        /// Exercises selected by at least one pack.
        package var wanted = 0
        /// Valid GIFs this build has, however obtained.
        package var valid = 0
        /// Bodies downloaded and validated.
        package var downloaded = 0
        /// Conditional requests answered 304.
        package var notModified = 0
        /// Not requested: fetched more recently than refresh_after.
        package var skippedFresh = 0
        /// When the first of the `skippedFresh` GIFs is asked for again (its fetch time plus
        /// refresh_after; ISO 8601, UTC), and when the last is: a build before then finds no upstream
        /// change to them. Absent when no GIF was skipped as fresh.
        package var freshRecheckFrom: String?
        package var freshRecheckBy: String?
        /// This run's fetch failed; an earlier build's GIF was kept.
        package var reusedLastGood = 0
        package var newlyStored = 0
        /// Valid GIFs whose bytes were already stored (another exercise's GIF or an earlier build's).
        package var deduplicated = 0
        package var rejected = 0
        package var rejectedByReason: [String: Int] = [:]
        package var missing = 0
        package var bytesDownloaded: Int64 = 0
        /// GIFs whose BlurHash, average colour and posters this run derived (0 when the cache had them all).
        package var placeholdersDerived = 0
        /// Valid GIFs whose size differs from the requested resolution (the first ``BuildReport/listLimit``
        /// are listed in `resolutionMismatches`).
        package var resolutionMismatches = 0
        /// At a resolution other than the first: the larger sides (pixels, ascending) of the GIFs
        /// the API served at another size than asked (`plan-ceiling`); nil when there were none.
        package var otherSizesServed: [Int]?
    }

    /// What the WebP renditions came to, over the distinct GIFs of every pack and resolution.
    package struct WebPSummary: Sendable, Codable, Equatable {
        /// Distinct GIFs with a WebP rendition decided (a WebP or the GIF itself).
        package var gifs = 0
        /// GIFs this run encoded (the others' renditions were in the cache: 0 on a no-change rebuild).
        package var encoded = 0
        /// Renditions by outcome: `q75`, `q80`, `q90`, `lossless` (the rung whose WebP was chosen) and
        /// `gif` (no WebP cleared the bar with fewer bytes: the rendition lists the GIF).
        package var outcomes: [String: Int] = [:]
        /// The chosen WebPs' frame SSIM: the mean of their means and the worst frame of all.
        package var meanSSIM: Double?
        package var worstSSIM: Double?
        /// The chosen WebPs' worst-frame SSIM by bucket: `<0.98` (never: the gate), `0.98-0.99`,
        /// `0.99-0.995`, `0.995-0.999`, `>=0.999`.
        package var worstSSIMDistribution: [String: Int] = [:]
        /// Bytes of the distinct GIFs, and of their renditions (a WebP, or the GIF where it stands in).
        package var gifBytes: Int64 = 0
        package var renditionBytes: Int64 = 0
        /// renditionBytes / gifBytes.
        package var ratio: Double?

        package init() {}
    }

    /// One resolution of a build with several.
    package struct RenditionSummary: Sendable, Codable, Equatable {
        /// Pixels asked for.
        package var resolution: Int
        /// Its GIFs by outcome, as ``BuildReport/gifs``; `missing` counts the exercises without
        /// this rendition (they keep their others).
        package var gifs: GIFSummary
        /// Exercises the API served at a smaller size (the plan's ceiling): not packed at this
        /// resolution (also in `gifs.rejectedByReason` as `plan-ceiling`).
        package var planCeiling = 0
        /// Packs made at this resolution (none when no exercise has it).
        package var packs = 0
    }

    /// A GIF served at another size than the requested resolution.
    package struct ResolutionMismatch: Sendable, Codable, Equatable {
        package var exerciseID: String
        package var requested: Int
        package var width: Int
        package var height: Int
    }

    /// Whether `index.json` was written and, for a signed build, the key id, sequence and expiry.
    package struct IndexSummary: Sendable, Codable, Equatable {
        /// False when the index already in place was kept byte for byte.
        package var written: Bool
        package var signed: Bool
        package var keyID: String?
        package var sequence: Int?
        package var expires: String?
    }

    /// What happened to one pack.
    package struct PackResult: Sendable, Codable, Equatable {
        package var name: String
        package var version: Int
        package var file: String
        /// `published` (a new version written; the historical word, kept in `report.json`) or `unchanged`.
        package var outcome: String
        package var exercises: Int
        package var missing: Int
        package var distinctGIFs: Int
        package var bytes: Int64
        package var uncompressedBytes: Int64
        /// `uncompressedBytes / bytes`, rounded to 3 decimals; filled by ``BuildReport/complete(startedAt:finishedAt:)``.
        package var compressionRatio: Double?

        /// True when this run wrote a new version of the pack.
        package var isNewVersion: Bool { outcome == "published" }
    }

    /// Requests sent, retries, rate limits, quota left and connection use.
    package struct HTTPSummary: Sendable, Codable, Equatable {
        package var requests = 0
        package var retries = 0
        package var rateLimited = 0
        package var quotaRemaining: Int?
        package var maxInFlight = 0
        package var connectionsOpened = 0
        /// How full the fetch window was during the fetch stage: transfers in flight integrated
        /// over the stage, over `concurrency` times its length (1 means three requests in flight
        /// all the time). Absent when the stage sent no request.
        package var fetchWindowUse: Double?
        /// The window's empty slots over the fetch stage, in slot-seconds (`concurrency` times the
        /// stage's length, less the time transfers were in flight): the gaps between requests, and
        /// the stage's start and tail with fewer requests left than slots.
        package var fetchWindowIdleSlotSeconds: Double?
    }
}

extension BuildReport.PackResult {
    /// The line of a pack this run made or found current, from its description.
    init(_ pack: PackDescription, outcome: String, exercises: Int) {
        self.init(
            name: pack.name, version: pack.version, file: pack.file, outcome: outcome, exercises: exercises,
            missing: pack.exercises.filter { $0.gif == nil }.count, distinctGIFs: pack.gifs.count, bytes: pack.bytes,
            uncompressedBytes: pack.uncompressedBytes)
    }
}

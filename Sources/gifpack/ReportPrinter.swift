import Foundation
import GifPack

/// The human summary printed at the end of a build.
struct ReportPrinter {
    let report: BuildReport

    /// Prints the summary: on standard output after a build that published (exit 0 or 3), on
    /// standard error otherwise, unless `alwaysToStandardOutput` (JSON logs keep standard error for
    /// JSON lines alone). The block of counts only follows a run that got as far as the catalog;
    /// `quiet` leaves it out always, and after a full success prints nothing at all (cron mails
    /// any output).
    func print(quiet: Bool, alwaysToStandardOutput: Bool = false) {
        if quiet && report.exitStatus == .success { return }
        let published = report.exitStatus == .success || report.exitStatus == .partial
        let toStandardOutput = alwaysToStandardOutput || published
        // A reader that went away (EPIPE) must not turn a finished build into a crash: the
        // throwing write is used and its error ignored.
        let handle = toStandardOutput ? FileHandle.standardOutput : FileHandle.standardError
        let out: (String) -> Void = { line in try? handle.write(contentsOf: Data((line + "\n").utf8)) }
        if !quiet && report.stageSeconds["catalog"] != nil {
            let gifs = report.gifs
            out("catalog: \(report.catalog.exercises) exercises in \(report.catalog.pages) page(s)"
                + (report.catalog.rejectedRecords.isEmpty ? "" : ", \(report.catalog.rejectedRecords.count) record(s) refused")
                + (report.catalog.duplicateIDs.isEmpty ? "" : ", duplicate ids: \(report.catalog.duplicateIDs.joined(separator: ", "))"))
            out("gifs: \(gifs.wanted) wanted, \(gifs.valid) valid: \(gifs.downloaded) downloaded (\(gifs.newlyStored) new, \(gifs.deduplicated) deduplicated, \(gifs.bytesDownloaded) bytes), \(gifs.notModified) not modified, \(gifs.skippedFresh) fresh, \(gifs.reusedLastGood) last known good; \(gifs.rejected) rejected, \(gifs.missing) missing")
            if let changes = report.catalogChanges, changes.hadPrevious {
                out("catalog changes: \(changes.addedCount) added, \(changes.removedCount) removed, \(changes.changedCount) changed")
            }
            let http = report.http
            out("requests: \(http.requests) sent, \(http.retries) retries, \(http.rateLimited) rate-limited"
                + (http.quotaRemaining.map { ", quota left \($0)" } ?? ""))
            for problem in report.stateErrors {
                out("warning: \(problem)")
            }
            for (reason, count) in gifs.rejectedByReason.sorted(by: { $0.key < $1.key }) {
                out("  rejected \(reason): \(count)")
            }
            for rejection in report.rejections.prefix(20) {
                out("  \(rejection.exerciseID): \(rejection.reason) — \(rejection.detail)")
            }
            if !report.resolutionMismatches.isEmpty {
                out("warning: \(max(report.gifs.resolutionMismatches, report.resolutionMismatches.count)) GIF(s) are not at the requested resolution (plan downgrade?)")
            }
            for pack in report.packs {
                let ratio = pack.compressionRatio.map { String(format: ", ratio %.2f", $0) } ?? ""
                out("pack \(pack.name) v\(pack.version) \(pack.isNewVersion ? "published (new version)" : "unchanged"): \(pack.exercises) exercises, \(pack.distinctGIFs) GIFs, \(pack.bytes) bytes\(ratio) -> \(pack.file)")
            }
            let bytes = report.bytes
            if !report.packs.isEmpty {
                out("bytes: \(HumanUnits.bytes(bytes.downloaded)) downloaded; packs \(HumanUnits.bytes(bytes.packed)) from \(HumanUnits.bytes(bytes.packedUncompressed))"
                    + (bytes.compressionRatio.map { String(format: " (ratio %.2f)", $0) } ?? "") + ", \(HumanUnits.bytes(bytes.written)) written")
            }
            let stages = BuildStage.allCases.compactMap { stage in
                report.stageSeconds[stage.rawValue].map { "\(stage.rawValue) \(HumanUnits.duration($0))" }
            }
            out("time: \(HumanUnits.duration(report.stageSeconds["total"] ?? 0))"
                + (stages.isEmpty ? "" : " (\(stages.joined(separator: ", ")))"))
        }
        let word = switch report.exitStatus {
        case .success: "ok"
        case .partial: "published"
        default: "error"
        }
        out("\(word): \(report.message) (exit \(report.exitStatus.rawValue))")
    }
}

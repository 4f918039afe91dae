import GifPack

/// The human summary printed at the end of a build.
struct ReportPrinter {
    let report: BuildReport

    func print(quiet: Bool) {
        let toStandardOutput = report.exitStatus == .success
        let out: (String) -> Void = { line in
            if toStandardOutput { Terminal.output(line) } else { Terminal.error(line) }
        }
        if !quiet {
            let gifs = report.gifs
            out("catalog: \(report.catalog.exercises) exercises in \(report.catalog.pages) page(s)"
                + (report.catalog.rejectedRecords.isEmpty ? "" : ", \(report.catalog.rejectedRecords.count) record(s) refused")
                + (report.catalog.duplicateIDs.isEmpty ? "" : ", duplicate ids: \(report.catalog.duplicateIDs.joined(separator: ", "))"))
            out("gifs: \(gifs.wanted) wanted, \(gifs.valid) valid: \(gifs.downloaded) downloaded (\(gifs.newlyStored) new, \(gifs.deduplicated) already stored, \(gifs.bytesDownloaded) bytes), \(gifs.notModified) not modified, \(gifs.skippedFresh) fresh, \(gifs.reusedLastGood) last known good; \(gifs.rejected) rejected")
            if let changes = report.catalogChanges, changes.hadPrevious {
                out("catalog changes: \(changes.added.count) added, \(changes.removed.count) removed, \(changes.changed.count) changed")
            }
            let http = report.http
            out("requests: \(http.requests) sent, \(http.retries) retries, \(http.rateLimited) rate-limited"
                + (http.quotaRemaining.map { ", quota left \($0)" } ?? ""))
            for (reason, count) in gifs.rejectedByReason.sorted(by: { $0.key < $1.key }) {
                out("  rejected \(reason): \(count)")
            }
            for rejection in report.rejections.prefix(20) {
                out("  \(rejection.exerciseID): \(rejection.reason) — \(rejection.detail)")
            }
            if !report.resolutionMismatches.isEmpty {
                out("warning: \(report.resolutionMismatches.count) GIF(s) are not at the requested resolution (plan downgrade?)")
            }
            for pack in report.packs {
                out("pack \(pack.name) v\(pack.version) \(pack.outcome): \(pack.exercises) exercises, \(pack.distinctGIFs) GIFs, \(pack.bytes) bytes -> \(pack.file)")
            }
        }
        out("\(report.exitStatus == .success ? "ok" : "error"): \(report.message) (exit \(report.exitStatus.rawValue))")
    }
}

import Foundation
import GifPack

/// The human summary printed at the end of a build.
struct ReportPrinter {
    let report: BuildReport

    /// Prints the summary: on standard output after a build that wrote its packs (exit 0 or 3), on
    /// standard error otherwise. The block of counts only follows a run that got as far as the
    /// catalog; `quiet` leaves it out always, and after a full success prints nothing at all (cron
    /// mails any output). With `json` (`--log-format json`) the summary is one JSON record (event
    /// `summary`) on standard error and nothing goes to standard output: one stream for
    /// `journalctl -o cat | jq`.
    func print(quiet: Bool, json: Bool = false, redactor: SecretRedactor = SecretRedactor(secrets: [])) {
        if quiet && report.exitStatus == .success { return }
        if json {
            printRecord(redactor: redactor)
            return
        }
        let toStandardOutput = report.exitStatus == .success || report.exitStatus == .partial
        // A reader that went away (EPIPE) must not turn a finished build into a crash: the
        // throwing write is used and its error ignored.
        let handle = toStandardOutput ? FileHandle.standardOutput : FileHandle.standardError
        try? handle.write(contentsOf: Data(lines(quiet: quiet).map { $0 + "\n" }.joined().utf8))
    }

    /// The human summary's lines, each as a terminal may take it (``Terminal/safe(_:)``: rejection
    /// details quote what the API sent, its headers among them, which may hold controls and bidi overrides).
    func lines(quiet: Bool) -> [String] {
        var lines: [String] = []
        let out: (String) -> Void = { lines.append(Terminal.safe($0)) }
        if !quiet && report.seconds(of: .catalog) != nil {
            let gifs = report.gifs
            out(
                "catalog: \(report.catalog.exercises) exercises in \(report.catalog.pages) page(s)"
                    + (report.catalog.rejectedRecords.isEmpty ? "" : ", \(report.catalog.rejectedRecords.count) record(s) refused")
                    + (report.catalog.duplicateIDs.isEmpty ? "" : ", duplicate ids: \(report.catalog.duplicateIDs.joined(separator: ", "))"))
            out(
                "gifs: \(gifs.wanted) wanted, \(gifs.valid) valid: \(gifs.downloaded) downloaded (\(gifs.newlyStored) new, \(gifs.deduplicated) deduplicated, \(gifs.bytesDownloaded) bytes), \(gifs.notModified) not modified, \(gifs.skippedFresh) fresh, \(gifs.reusedLastGood) last known good; \(gifs.rejected) rejected, \(gifs.missing) missing"
            )
            for line in renditionLines { out(line) }
            if let hint = freshHint { out(hint) }
            if let changes = report.catalogChanges, changes.hadPrevious {
                out("catalog changes: \(changes.addedCount) added, \(changes.removedCount) removed, \(changes.changedCount) changed")
            }
            let http = report.http
            out(
                "requests: \(http.requests) sent, \(http.retries) retries, \(http.rateLimited) rate-limited"
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
                out(
                    "pack \(pack.name) v\(pack.version) \(pack.isNewVersion ? "written (new version)" : "unchanged"): \(pack.exercises) exercises, \(pack.distinctGIFs) GIFs, \(pack.bytes) bytes\(ratio) -> \(pack.file)"
                )
            }
            let bytes = report.bytes
            if !report.packs.isEmpty {
                out(
                    "bytes: \(HumanUnits.bytes(bytes.downloaded)) downloaded; packs \(HumanUnits.bytes(bytes.packed)) from \(HumanUnits.bytes(bytes.packedUncompressed))"
                        + (bytes.compressionRatio.map { String(format: " (ratio %.2f)", $0) } ?? "") + ", \(HumanUnits.bytes(bytes.written)) written")
            }
            let stages = BuildStage.allCases.compactMap { stage in
                report.seconds(of: stage).map { "\(stage.rawValue) \(HumanUnits.duration($0))" }
            }
            out(
                "time: \(HumanUnits.duration(report.totalSeconds ?? 0))"
                    + (stages.isEmpty ? "" : " (\(stages.joined(separator: ", ")))"))
        }
        out(lastLine)
        return lines
    }

    /// One line per resolution of a build with several (the `gifs:` line above counts the first):
    /// "  360 px: 1324 wanted, 1300 valid: 1300 downloaded (52000000 bytes), 0 not modified, 0 fresh;
    /// 24 missing (24 served at another size); 1 pack(s)".
    var renditionLines: [String] {
        (report.renditions ?? []).map { rendition in
            let gifs = rendition.gifs
            return "  \(rendition.resolution) px: \(gifs.wanted) wanted, \(gifs.valid) valid: \(gifs.downloaded) downloaded "
                + "(\(gifs.bytesDownloaded) bytes), \(gifs.notModified) not modified, \(gifs.skippedFresh) fresh; \(gifs.missing) missing"
                + (rendition.planCeiling > 0 ? " (\(rendition.planCeiling) served at another size)" : "") + "; \(rendition.packs) pack(s)"
        }
    }

    /// Why GIFs changed upstream may not show yet: "not re-checked: 12 GIF(s) fetched less than
    /// refresh_after ago — asked again from 2026-12-01T03:17:00.000Z, all by …"; nil when none was skipped.
    var freshHint: String? {
        guard report.gifs.skippedFresh > 0, let from = report.gifs.freshRecheckFrom, let by = report.gifs.freshRecheckBy else { return nil }
        return "not re-checked: \(report.gifs.skippedFresh) GIF(s) fetched less than refresh_after ago — the first is asked for again "
            + "from \(from)" + (by == from ? "" : ", all by \(by)") + "; a change upstream before then is not seen (lower fetch.refresh_after to check sooner)"
    }

    /// "ok: …", "partial: …" or "error: …", with the exit status.
    var lastLine: String {
        let word =
            switch report.exitStatus {
            case .success: "ok"
            case .partial: "partial"
            default: "error"
            }
        return "\(word): \(report.message) (exit \(report.exitStatus.rawValue))"
    }

    /// The summary as one JSON log record on standard error: the last line as `message`, the
    /// counts as fields.
    private func printRecord(redactor: SecretRedactor) {
        let level: LogSeverity =
            switch report.exitStatus {
            case .success: .notice
            case .partial: .warning
            default: .error
            }
        var fields: [String: LogField] = [
            "event": .string("summary"),
            "exit_status": .int(Int64(report.exitStatus.rawValue)),
            // `published`: the field's historical name for "wrote packs and an index". A quota stop in a
            // later resolution may have written the resolutions before it.
            "published": .bool(
                report.exitStatus == .success || report.exitStatus == .partial
                    || (report.stopReason != nil && report.index != nil)),
            "new_versions": .string(report.packs.filter(\.isNewVersion).map { "\($0.name)-v\($0.version)" }.joined(separator: " ")),
            "gifs_wanted": .int(Int64(report.gifs.wanted)),
            "gifs_valid": .int(Int64(report.gifs.valid)),
            "downloaded": .int(Int64(report.gifs.downloaded)),
            "not_modified": .int(Int64(report.gifs.notModified)),
            "skipped_fresh": .int(Int64(report.gifs.skippedFresh)),
            "missing": .int(Int64(report.gifs.missing)),
            "rejected": .int(Int64(report.gifs.rejected)),
            "requests": .int(Int64(report.http.requests)),
            "retries": .int(Int64(report.http.retries)),
            "duration_ms": .double((report.totalSeconds ?? 0) * 1000)
        ]
        if let stop = report.stopReason { fields["stop_reason"] = .string(String(describing: stop)) }
        if let from = report.gifs.freshRecheckFrom, let by = report.gifs.freshRecheckBy {
            fields["fresh_recheck_from"] = .string(from)
            fields["fresh_recheck_by"] = .string(by)
        }
        let record = LogRecord(timestamp: Date(), level: level, label: "gifpack", message: lastLine, fields: fields)
        try? FileHandle.standardError.write(contentsOf: Data((record.jsonLine(redactor: redactor) + "\n").utf8))
    }
}

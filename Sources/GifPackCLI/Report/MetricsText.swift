import Foundation
import GifPack

/// A build report in the Prometheus text exposition format (version 0.0.4), as node_exporter's
/// textfile collector reads it: `# HELP` and `# TYPE` before each metric, every name prefixed
/// `gifpack_`, every sample a gauge describing the last run.
///
/// `gifpack_gifs{outcome=…}` partitions the GIFs wanted (`downloaded`, `not_modified`,
/// `skipped_fresh`, `reused_last_good`, `missing` add up to `gifpack_gifs_wanted`); deduplicated
/// downloads and refusals by reason are separate metrics so no sum counts a GIF twice.
/// `gifpack_last_success_timestamp_seconds` is the time of the last run that wrote or found
/// its packs current (exit status 0 or 3): a failed run carries the previous file's value forward
/// (0 when no run has succeeded yet), so `time() - gifpack_last_success_timestamp_seconds` alerts on
/// staleness whatever the last run did.
///
/// ```swift
/// let text = MetricsText.render(report, finishedAt: Date(), previousLastSuccess: MetricsText.lastSuccess(in: oldText))
/// // # HELP gifpack_build_duration_seconds Wall-clock duration of the last build.
/// // # TYPE gifpack_build_duration_seconds gauge
/// // gifpack_build_duration_seconds 12.5
/// ```
enum MetricsText {
    static let lastSuccessName = "gifpack_last_success_timestamp_seconds"

    /// True for the exit statuses that count as a success: packs written or already current.
    static func isSuccess(_ status: ExitStatus) -> Bool { status == .success || status == .partial }

    static func render(_ report: BuildReport, finishedAt: Date, previousLastSuccess: Double?) -> String {
        var out = MetricsBuilder()
        let now = finishedAt.timeIntervalSince1970
        out.gauge(
            "build_duration_seconds", "Wall-clock duration of the last build.",
            [([], report.totalSeconds ?? 0)])
        out.gauge(
            "build_stage_duration_seconds", "Duration of each stage of the last build that ran.",
            BuildStage.allCases.compactMap { stage in report.seconds(of: stage).map { ([("stage", stage.rawValue)], $0) } })
        out.gauge("last_run_timestamp_seconds", "Unix time the last build finished.", [([], now)])
        out.gauge(
            "last_success_timestamp_seconds",
            "Unix time of the last build that wrote or found its packs current (exit status 0 or 3); 0 if none yet.",
            [([], isSuccess(report.exitStatus) ? now : (previousLastSuccess ?? 0))])
        out.gauge(
            "exit_status", "Exit status of the last build (0 ok, 1 failed, 2 usage, 3 partial, 4 key rejected, 5 quota, 6 locked).",
            [([], Double(report.exitStatus.rawValue))])

        let gifs = report.gifs
        out.gauge("gifs_wanted", "Exercises selected by at least one pack in the last build.", [([], Double(gifs.wanted))])
        out.gauge(
            "gifs", "GIFs of the last build by outcome; the outcomes add up to gifpack_gifs_wanted.",
            [
                ([("outcome", "downloaded")], Double(gifs.downloaded)),
                ([("outcome", "not_modified")], Double(gifs.notModified)),
                ([("outcome", "skipped_fresh")], Double(gifs.skippedFresh)),
                ([("outcome", "reused_last_good")], Double(gifs.reusedLastGood)),
                ([("outcome", "missing")], Double(gifs.missing))
            ])
        out.gauge(
            "gifs_deduplicated", "Downloaded GIFs whose bytes were already stored (another exercise's or an earlier build's).",
            [([], Double(gifs.deduplicated))])
        out.gauge(
            "gifs_rejected", "GIFs refused in the last build, by reason.",
            gifs.rejectedByReason.sorted { $0.key < $1.key }.map { ([("reason", $0.key)], Double($0.value)) })
        out.gauge(
            "downloaded_bytes", "Bytes of GIF bodies downloaded and validated by the last build.",
            [([], Double(gifs.bytesDownloaded))])

        out.gauge(
            "pack_bytes", "Size of each pack file the index lists after the last build.",
            report.packs.map { ([("pack", $0.name)], Double($0.bytes)) })
        out.gauge(
            "pack_version", "Version of each pack the index lists after the last build.",
            report.packs.map { ([("pack", $0.name)], Double($0.version)) })
        out.gauge(
            "pack_published", "1 if the last build wrote a new version of the pack, 0 if it was unchanged.",
            report.packs.map { ([("pack", $0.name)], $0.isNewVersion ? 1 : 0) })
        out.gauge(
            "pack_exercises_missing", "Exercises of each pack without a GIF after the last build.",
            report.packs.map { ([("pack", $0.name)], Double($0.missing)) })

        out.gauge(
            "requests", "HTTP requests the last build sent (catalog pages included, retries included).",
            [([], Double(report.http.requests))])
        out.gauge("retries", "Requests of the last build that were tried again.", [([], Double(report.http.retries))])
        out.gauge("rate_limited", "HTTP 429 answers the last build got.", [([], Double(report.http.rateLimited))])
        out.gauge(
            "quota_remaining", "API requests left (x-ratelimit-requests-remaining) at the end of the last build.",
            report.http.quotaRemaining.map { [([], Double($0))] } ?? [])
        return out.text
    }

    /// The value of `gifpack_last_success_timestamp_seconds` in an earlier metrics file, if any.
    static func lastSuccess(in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(lastSuccessName + " ") {
            let value = line.dropFirst(lastSuccessName.count + 1).split(separator: " ").first.map(String.init) ?? ""
            if let number = Double(value), number.isFinite, number > 0 { return number }
        }
        return nil
    }
}

/// Accumulates metric families in exposition order.
private struct MetricsBuilder {
    var text = ""

    /// Writes one gauge family; a family without samples is left out whole.
    mutating func gauge(_ name: String, _ help: String, _ samples: [([(String, String)], Double)]) {
        guard !samples.isEmpty else { return }
        let full = "gifpack_" + name
        text += "# HELP \(full) \(escapeHelp(help))\n# TYPE \(full) gauge\n"
        for (labels, value) in samples {
            let labelText = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
            text += "\(full)\(labelText) \(format(value))\n"
        }
    }

    private func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    private func escapeLabel(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.6f", value).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
    }
}

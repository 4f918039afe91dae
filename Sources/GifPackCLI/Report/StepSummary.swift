import Foundation
import GifPack

/// A short Markdown account of a build for CI step summaries (GitHub Actions'
/// `$GITHUB_STEP_SUMMARY`, GitLab or Buildkite annotations): a heading with the result, the GIF
/// counts, one row per pack, and the request and timing totals. ``append(_:to:)`` adds it to the
/// end of the file, as GitHub expects several steps to write to the same one.
///
/// ```swift
/// try StepSummary.append(StepSummary.markdown(report), to: environment["GITHUB_STEP_SUMMARY"]!)
/// ```
enum StepSummary {
    static func markdown(_ report: BuildReport) -> String {
        let gifs = report.gifs
        let icon = report.exitStatus == .success ? "✅" : (report.exitStatus == .partial ? "⚠️" : "❌")
        var lines = [
            "### \(icon) gifpack build: \(cell(report.exitMeaning.isEmpty ? report.exitStatus.summary : report.exitMeaning)) (exit \(report.exitStatus.rawValue))",
            "",
            cell(report.message),
            "",
            "| GIFs | count |",
            "|:--|--:|",
            "| wanted | \(gifs.wanted) |",
            "| downloaded | \(gifs.downloaded) (\(gifs.deduplicated) deduplicated, \(HumanUnits.bytes(gifs.bytesDownloaded))) |",
            "| not modified | \(gifs.notModified) |",
            "| skipped as fresh | \(gifs.skippedFresh) |",
            "| reused last good | \(gifs.reusedLastGood) |"
        ]
        let reasons = gifs.rejectedByReason.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        lines.append("| missing | \(gifs.missing)\(reasons.isEmpty ? "" : " (\(cell(reasons)))") |")
        if !report.packs.isEmpty {
            lines += ["", "| pack | version | result | exercises | GIFs | size | ratio |", "|:--|--:|:--|--:|--:|--:|--:|"]
            for pack in report.packs {
                let ratio = pack.compressionRatio.map { String(format: "%.2f", $0) } ?? "-"
                lines.append(
                    "| \(cell(pack.name)) | \(pack.version) | \(pack.isNewVersion ? "new version" : "unchanged") | \(pack.exercises) | \(pack.distinctGIFs) | \(HumanUnits.bytes(pack.bytes)) | \(ratio) |"
                )
            }
        }
        let quota = report.http.quotaRemaining.map { ", quota left \($0)" } ?? ""
        let duration = HumanUnits.duration(report.totalSeconds ?? 0)
        lines += ["", "\(report.http.requests) requests (\(report.http.retries) retries)\(quota) · \(duration)", ""]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Appends `markdown` to the file at `path`, creating it if needed.
    static func append(_ markdown: String, to path: String) throws(FileSystemError) {
        try FileSystem.append(Array(markdown.utf8), to: path)
    }

    /// Text safe inside a table cell: no pipes breaking the row, no newlines.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: "\r", with: " ")
    }
}

import GifPack

/// The outputs a CI step exposes to later steps, as `name=value` lines for GitHub Actions'
/// `$GITHUB_OUTPUT` (`--github-output`): `published` (its historical name: `true` when this run wrote a
/// new pack version), `exit-status`, and `packs` (the new versions, `name-vN` separated by spaces; empty
/// when none). Appended with ``StepSummary/append(_:to:)``, like the step summary.
///
/// ```swift
/// try StepSummary.append(StepOutputs.lines(report), to: environment["GITHUB_OUTPUT"]!)
/// // published=true
/// // exit-status=3
/// // packs=all-v4 chest-v2
/// ```
enum StepOutputs {
    static func lines(_ report: BuildReport) -> String {
        let wrote = report.exitStatus == .success || report.exitStatus == .partial
        let newVersions = wrote ? report.packs.filter(\.isNewVersion) : []
        // Pack names are [a-z0-9_-] (the manifest checks them): nothing here can break a line.
        return """
            published=\(!newVersions.isEmpty)
            exit-status=\(report.exitStatus.rawValue)
            packs=\(newVersions.map { "\($0.name)-v\($0.version)" }.joined(separator: " "))

            """
    }
}

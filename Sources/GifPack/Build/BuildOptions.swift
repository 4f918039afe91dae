import Foundation

/// Run-time settings of a build that do not belong in the manifest.
package struct BuildOptions: Sendable, Equatable {
    package var outputDirectory: String
    package var cacheDirectory: String
    /// The mtime of every tar entry: `SOURCE_DATE_EPOCH`, else 0.
    package var sourceDateEpoch: Int64
    /// Written into the index and report.
    package var generator: String
    /// `--previous-index`: the live index (a path or an http(s) URL) whose versions and sequence
    /// this build continues, for a runner that starts without the output directory or cache.
    package var previousIndex: String?
    /// The time a signed index's expiry is counted from; nil: the clock. Set from `GIFPACK_NOW` (tests).
    package var now: Date?
    /// The most entries each per-exercise list of the report holds (``BuildReport/listLimit``).
    package var reportListLimit = BuildReport.listLimit
    /// `--allow-missing-renditions`: exercises without a GIF at a resolution other than the first
    /// (the plan's ceiling, a failed fetch) end the build with 0 instead of 3.
    package var allowMissingRenditions = false

    /// The CLI's version: `gifpack --version`, and the `generator` of every index it writes. It is the
    /// newest released section of CHANGELOG.md (`ChangelogTests` fails when they disagree).
    package static let version = "0.2.0"

    package init(
        outputDirectory: String, cacheDirectory: String, sourceDateEpoch: Int64 = 0,
        generator: String = "gifpack \(BuildOptions.version)", previousIndex: String? = nil, now: Date? = nil
    ) {
        self.outputDirectory = outputDirectory
        self.cacheDirectory = cacheDirectory
        self.sourceDateEpoch = sourceDateEpoch
        self.generator = generator
        self.previousIndex = previousIndex
        self.now = now
    }

    /// Options from the manifest, overridden by the command line, with `SOURCE_DATE_EPOCH` read
    /// from the environment.
    package static func resolve(
        manifest: Manifest, outputDirectory: String?, cacheDirectory: String?,
        environment: [String: String]
    ) throws(ManifestError) -> BuildOptions {
        var epoch: Int64 = 0
        if let text = environment["SOURCE_DATE_EPOCH"], !text.isEmpty {
            guard let value = Int64(text), value >= 0, value < 8_589_934_592 else {
                throw .invalidValue(path: "SOURCE_DATE_EPOCH", reason: "\"\(text)\" is not a non-negative integer below 8^11 (ustar mtime range)")
            }
            epoch = value
        }
        var now: Date?
        if environment["GIFPACK_NOW"]?.isEmpty == false {
            do { now = try IndexTimestamp.now(environment: environment) } catch {
                throw .invalidValue(path: "GIFPACK_NOW", reason: error.description)
            }
        }
        return BuildOptions(
            outputDirectory: outputDirectory ?? manifest.output.directory,
            cacheDirectory: cacheDirectory ?? manifest.cache.directory, sourceDateEpoch: epoch, now: now)
    }
}

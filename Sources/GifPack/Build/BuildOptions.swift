import Foundation

/// Run-time settings of a build that do not belong in the manifest.
public struct BuildOptions: Sendable, Equatable {
    public var outputDirectory: String
    public var cacheDirectory: String
    /// The mtime of every tar entry: `SOURCE_DATE_EPOCH`, else 0.
    public var sourceDateEpoch: Int64
    /// Written into the index and report.
    public var generator: String

    public static let version = "0.1.0"

    public init(outputDirectory: String, cacheDirectory: String, sourceDateEpoch: Int64 = 0,
                generator: String = "gifpack \(BuildOptions.version)") {
        self.outputDirectory = outputDirectory
        self.cacheDirectory = cacheDirectory
        self.sourceDateEpoch = sourceDateEpoch
        self.generator = generator
    }

    /// Options from the manifest, overridden by the command line, with `SOURCE_DATE_EPOCH` read
    /// from the environment.
    public static func resolve(manifest: Manifest, outputDirectory: String?, cacheDirectory: String?,
                               environment: [String: String]) throws(ManifestError) -> BuildOptions {
        var epoch: Int64 = 0
        if let text = environment["SOURCE_DATE_EPOCH"], !text.isEmpty {
            guard let value = Int64(text), value >= 0, value < 8_589_934_592 else {
                throw .invalidValue(path: "SOURCE_DATE_EPOCH", reason: "\"\(text)\" is not a non-negative integer below 8^11 (ustar mtime range)")
            }
            epoch = value
        }
        return BuildOptions(outputDirectory: outputDirectory ?? manifest.output.directory,
                            cacheDirectory: cacheDirectory ?? manifest.cache.directory, sourceDateEpoch: epoch)
    }
}

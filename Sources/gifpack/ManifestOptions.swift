import ArgumentParser
import Foundation
import GifPack

/// The options every manifest-driven command shares.
struct ManifestOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "The manifest (YAML or JSON).")
    var manifest: String

    @Option(name: .customLong("out"), help: "Output directory (overrides output.directory).")
    var outputDirectory: String?

    @Option(name: .customLong("cache"), help: "Cache directory (overrides cache.directory).")
    var cacheDirectory: String?

    @Option(name: .customLong("base-url"), help: "API base URL (overrides source.base_url), e.g. a fixture server.")
    var baseURL: String?

    /// Loads and validates the manifest; a problem exits with status 2 before any network traffic.
    func load() throws -> (Manifest, BuildOptions) {
        let environment = ProcessInfo.processInfo.environment
        do {
            var manifest = try ManifestLoader().load(path: self.manifest, environment: environment)
            if let baseURL {
                try ManifestLoader.checkHTTPURL(baseURL, path: "--base-url")
                manifest.source.baseURL = baseURL
            }
            let options = try BuildOptions.resolve(manifest: manifest, outputDirectory: outputDirectory,
                                                   cacheDirectory: cacheDirectory, environment: environment)
            return (manifest, options)
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}

import ArgumentParser
import Foundation
import GifPack

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Fetch the catalog and GIFs named by a manifest and publish packs plus index.json.",
        discussion: """
        Writes <out>/packs/<pack>-v<N>.tar.zst, <out>/index.json (replaced atomically, last) and
        <out>/report.json. A pack gets a new version only when its content changes.

        Examples:
          EXERCISEDB_API_KEY=… gifpack build --manifest manifests/exercisedb.yaml --out dist/
          gifpack build --manifest manifests/demo.yaml --base-url http://127.0.0.1:8080

        Exit status:
        \(ExitStatus.allCases.map { "  \($0.rawValue)  \($0.summary)" }.joined(separator: "\n"))
        """
    )

    @Option(name: .shortAndLong, help: "The manifest (YAML or JSON).")
    var manifest: String

    @Option(name: .customLong("out"), help: "Output directory (overrides output.directory).")
    var outputDirectory: String?

    @Option(name: .customLong("cache"), help: "Cache directory (overrides cache.directory).")
    var cacheDirectory: String?

    @Option(name: .customLong("base-url"), help: "API base URL (overrides source.base_url), e.g. a fixture server.")
    var baseURL: String?

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let loaded: Manifest
        let options: BuildOptions
        do {
            var manifest = try ManifestLoader().load(path: self.manifest, environment: environment)
            if let baseURL {
                try ManifestLoader.checkHTTPURL(baseURL, path: "--base-url")
                manifest.source.baseURL = baseURL
            }
            loaded = manifest
            options = try BuildOptions.resolve(manifest: manifest, outputDirectory: outputDirectory,
                                               cacheDirectory: cacheDirectory, environment: environment)
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let report = await BuildPipeline(manifest: loaded, options: options).run()
        if !quiet || report.exitStatus != .success {
            ReportPrinter(report: report).print(quiet: quiet)
        }
        if report.exitStatus != .success { throw ExitCode(report.exitStatus.rawValue) }
    }
}

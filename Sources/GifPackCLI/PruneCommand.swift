import ArgumentParser
import Foundation
import GifPack

struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete old pack versions and unreferenced blobs; never anything index.json references.",
        discussion: """
            Keeps the last K versions of each pack (output.keep_versions, default 3, or --keep), removes temporary files left by killed runs, and deletes cached GIFs no exercise refers to. A build does the same at its end.

            Examples:
              gifpack prune --manifest manifests/exercisedb.yaml --keep 2
              gifpack prune -m manifests/demo.yaml --out dist --cache .gifpack-cache
            """
    )

    @OptionGroup var source: ManifestOptions

    @Option(help: "Versions to keep per pack (overrides output.keep_versions).")
    var keep: Int?

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func run() async throws {
        // Prune sends no request and never rewrites (so never signs) index.json: neither the API key
        // variable nor the signing key need be there.
        let (manifest, options) = try source.load(requiresAPIKey: false, readsSigningKey: false)
        let layout = CacheLayout(root: options.cacheDirectory)
        do {
            let locks = try BuildLock.acquire([options.outputDirectory, options.cacheDirectory])
            defer { withExtendedLifetime(locks) {} }
            let index = try BuilderIndexReader.readOutputIndex("\(options.outputDirectory)/index.json")
            let state =
                FileSystem.exists(layout.statePath)
                ? try BuildState(path: layout.statePath, source: manifest.source.stateKey) : nil
            let result = try Pruner(
                outputDirectory: options.outputDirectory, layout: layout,
                keep: keep ?? manifest.output.keepVersions
            ).prune(index: index, state: state)
            guard !quiet else { return }
            Terminal.output("deleted \(result.deletedPacks.count) pack file(s), \(result.deletedBlobs) blob(s), \(result.deletedTemporaryFiles) temporary file(s); freed \(result.freedBytes) bytes")
            for file in result.deletedPacks { Terminal.output("  \(file)") }
        } catch let error as BuildLock.LockError {
            Terminal.error("gifpack: \(error)")
            let status: ExitStatus = if case .held = error { .locked } else { .failed }
            throw ExitCode(status.rawValue)
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(ExitStatus.failed.rawValue)
        }
    }
}

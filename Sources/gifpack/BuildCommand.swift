import ArgumentParser
import Foundation
import GifPack

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Fetch the catalog and GIFs named by a manifest and publish packs plus index.json.",
        discussion: """
        Writes <out>/packs/<pack>-v<N>.tar.zst, <out>/index.json (replaced atomically, last) and
        <out>/report.json. A pack gets a new version only when its content changes. State (ETags,
        hashes, failures) lives in <cache>/state.sqlite, so a rebuild sends conditional requests or
        none at all (refresh_after), and a killed run is finished by the next one.

        Examples:
          EXERCISEDB_API_KEY=… gifpack build --manifest manifests/exercisedb.yaml --out dist/
          gifpack build --manifest manifests/demo.yaml --base-url http://127.0.0.1:8080
          gifpack build --manifest manifests/exercisedb.yaml --dry-run

        Exit status:
        \(ExitStatus.allCases.map { "  \($0.rawValue)  \($0.summary)" }.joined(separator: "\n"))
        """
    )

    @OptionGroup var source: ManifestOptions

    @Flag(help: "Print the plan (requests of each kind, budget) without sending any image request.")
    var dryRun = false

    @Flag(name: .shortAndLong, help: "Print only errors and the last line.")
    var quiet = false

    func run() async throws {
        let (manifest, options) = try source.load()
        if dryRun {
            try await printDryRun(manifest: manifest, options: options)
            return
        }
        let report = await BuildPipeline(manifest: manifest, options: options).run()
        ReportPrinter(report: report).print(quiet: quiet)
        if report.exitStatus != .success { throw ExitCode(report.exitStatus.rawValue) }
    }

    private func printDryRun(manifest: Manifest, options: BuildOptions) async throws {
        let plan: DryRun.Plan
        do { plan = try await DryRun(manifest: manifest, options: options).plan() } catch {
            Terminal.error("gifpack: \(error)")
            let status: ExitStatus = if case CatalogError.authRejected = error { .authRejected } else { .failed }
            throw ExitCode(status.rawValue)
        }
        Terminal.output("dry run: no image request sent (\(plan.catalogRequests) catalog request(s) made)")
        Terminal.output("catalog: \(plan.exercises) exercises; \(plan.wanted) wanted by \(plan.packs.count) pack(s)")
        for (name, count) in plan.packs.sorted(by: { $0.key < $1.key }) { Terminal.output("  pack \(name): \(count) exercises") }
        Terminal.output("would send: \(plan.fullRequests) full request(s), \(plan.conditionalRequests) conditional request(s)")
        Terminal.output("would skip: \(plan.skippedFresh) fresh (refresh_after), \(plan.skippedKnownMissing) known missing (missing_ttl)")
        let budget = plan.requestBudget.map { "\($0) (max_requests)" } ?? "no limit (max_requests unset)"
        Terminal.output("image requests: at most \(plan.imageRequests) before retries, against a budget of \(budget)")
    }
}

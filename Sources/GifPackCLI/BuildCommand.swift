import ArgumentParser
import Foundation
import GifPack
import GifPackSystem
import Logging

struct BuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Fetch the catalog and GIFs named by a manifest and write packs plus index.json.",
        discussion: """
            Writes <out>/packs/<pack>-v<N>-<sha8>.tar.zst, <out>/index.json (replaced atomically, last), with a signing block <out>/index.json.minisig, and <out>/report.json (not for upload). A pack gets a new version only when its content changes; a pack file name never refers to two contents, and versions continue from the state, the output directory and --previous-index. A signed index carries sequence and expires and is signed again once less than half of expires_after remains. State (ETags, hashes, failures) lives in <cache>/state.sqlite, so a rebuild sends conditional requests or none at all (refresh_after), and a killed run is finished by the next one.

            Progress and logs go to standard error: on a terminal a live progress line, otherwise a plain log line every --progress-interval seconds and every 10%, never a control character. The summary goes to standard output after a build that wrote its packs (exit 0 or 3), to standard error otherwise; with --log-format json it is one JSON object (event "summary") on standard error like every log line, and nothing is written to standard output. --quiet prints nothing after a success and only the last line otherwise (no log lines unless --log-level is given).

            With --publish (or output.publish) the output is published after a build that exits 0 or 3 (also when nothing changed, so a publish that failed before is retried), exactly as `gifpack publish` does; --public-url then reads it back from where clients read it and fails (exit 1) when they could not install. The exit status is the build's, or the publish's when the publish fails. --metrics-file, --summary-file and --github-output are written whatever the outcome, a refused command line included. Relative paths in the manifest are relative to the manifest's folder; --out and --cache to the working directory.

            Examples:
              EXERCISEDB_API_KEY="$(cat /etc/gifpack/api-key)" gifpack build -m manifests/exercisedb.yaml --out dist/
              gifpack build -m manifests/demo.yaml --base-url http://127.0.0.1:8080
              gifpack build -m manifests/exercisedb.yaml --dry-run
              # cron: build and publish, silent on success, one line on failure
              /usr/local/bin/gifpack build -m /srv/gifpack/exercisedb.yaml --quiet --publish /var/www/gifpack \\
                --public-url https://www.example.com/gifpack/ --metrics-file /var/lib/node_exporter/textfile/gifpack.prom
              # CI step: plain progress and a Markdown summary of the build
              gifpack build -m manifests/exercisedb.yaml --progress plain \\
                --summary-file "$GITHUB_STEP_SUMMARY" --github-output "$GITHUB_OUTPUT"
              # every request attempt in the log
              gifpack build -m manifests/demo.yaml --verbose
              # a release runner that starts empty: continue from the live index
              gifpack build -m manifests/exercisedb.yaml --previous-index https://cdn.example.com/gifpack/index.json
              # build, then publish: packs first, index last
              gifpack build -m manifests/exercisedb.yaml --publish s3://cdn-bucket/gifpack

            Exit status:
            \(ExitStatus.allCases.map { "  \($0.rawValue)  \($0.summary)" }.joined(separator: "\n"))
            """
    )

    @OptionGroup var source: ManifestOptions

    @Flag(help: "Print the plan (requests of each kind, budget) without sending any image request.")
    var dryRun = false

    @Flag(help: "Exit 0, not 3, when exercises lack a rendition other than the first resolution's (e.g. the API plan serves no higher resolution).")
    var allowMissingRenditions = false

    @Option(
        help: ArgumentHelp(
            "The live index (a path or an http(s) URL): pack versions and the index sequence continue from it, for a runner without the last output directory or cache.", valueName: "path|url"))
    var previousIndex: String?

    @Option(help: ArgumentHelp("After a successful build, publish the output to a directory or s3://bucket/prefix (overrides output.publish; see `gifpack publish`).", valueName: "target"))
    var publish: String?

    @Option(help: ArgumentHelp("S3-compatible endpoint for --publish (overrides output.publish_endpoint).", valueName: "url"))
    var endpoint: String?

    @Option(
        help: ArgumentHelp(
            "How many of the last catalog's exercises this one may lack, a count or a percentage (overrides fetch.max_removed, default 10%); --max-removed 100% accepts a removal that is real.",
            valueName: "N|N%"))
    var maxRemoved: MissingAllowance?

    @Option(
        help: ArgumentHelp(
            "Where clients read the published index (its URL or folder): after --publish, read back anonymously; exit 1 when clients could not install (see `gifpack publish`).", valueName: "url"))
    var publicURL: String?

    @Option(
        help: ArgumentHelp(
            "After a build that wrote its packs (exit 0 or 3), write a release-review page of it against the previous output (its last index, else --previous-index) into this folder (see `gifpack review`).",
            valueName: "dir"))
    var reviewHTML: String?

    @OptionGroup(title: "Progress, logs and reports") var operation: OperationOptions

    func run() async throws {
        var manifest: Manifest
        var options: BuildOptions
        do {
            (manifest, options) = try source.loadManifest(previousIndex: previousIndex)
            options.allowMissingRenditions = allowMissingRenditions
            if let maxRemoved { manifest.fetch.maxRemoved = maxRemoved }
        } catch {
            Terminal.error("gifpack: \(error)")
            runFiles(outputDirectory: source.outputDirectory ?? RunFiles.outputDirectory(ofManifest: source.manifest))
                .recordRefusal(message: error.description)
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        var publishOptions: PublishOptions?
        if let to = publish ?? manifest.output.publish {
            do {
                let target = try PublishTargetSpec.parse(to, endpoint: endpoint ?? (publish == nil ? manifest.output.publishEndpoint : nil))
                publishOptions = PublishOptions(
                    from: options.outputDirectory, target: target, keepVersions: manifest.output.keepVersions,
                    indexMaxAge: manifest.output.indexMaxAge)
            } catch {
                Terminal.error("gifpack: \(error)")
                throw ExitCode(error.exitStatus.rawValue)
            }
        } else if endpoint != nil || publicURL != nil {
            Terminal.error("gifpack: \(endpoint != nil ? "--endpoint" : "--public-url") needs --publish or output.publish")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        if let publicURL {
            do { try PublicReadCheck.validate(publicURL) } catch {
                Terminal.error("gifpack: \(error)")
                throw ExitCode(ExitStatus.usage.rawValue)
            }
        }
        if dryRun {
            try await printDryRun(manifest: manifest, options: options)
            return
        }
        // A log reader that goes away (`gifpack build 2>&1 | logger`) must not kill the build
        // half-way: writes to a closed pipe fail with EPIPE instead.
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessInfo.processInfo.environment
        let terminal = TerminalInfo(environment: environment)
        let console = Console()
        let redactor = SecretRedactor(secrets: [manifest.source.apiKey?.value].compactMap { $0 })
        let logger = LogSetup.bootstrap(
            format: operation.logFormat == .json ? .json : .text, level: operation.resolvedLogLevel,
            color: terminal.allowsColor && operation.logFormat == .text, console: console,
            redactor: redactor)
        // The previous output's index, for --review-html: read before the build replaces it.
        let previous = reviewHTML == nil ? nil : previousRelease(options: options)
        let tracker = ProgressTracker()
        let renderer = operation.progressMode(terminal: terminal).map {
            ProgressRenderer(mode: $0, tracker: tracker, console: console, logger: logger, terminal: terminal)
        }
        let monitor = BuildMonitor(logger: logger, renderer: renderer, tracker: tracker)
        monitor.start()
        let report = await BuildPipeline(manifest: manifest, options: options, observer: monitor.observer).run()
        monitor.stop()
        let printer = ReportPrinter(report: report)
        let publishes = publishOptions != nil && (report.exitStatus == .success || report.exitStatus == .partial)
        // --quiet and a publish to follow: the build's line (exit 3) waits for the publish, so a
        // failed publish is the one line printed.
        let printAfterPublish = publishes && operation.quiet
        if !printAfterPublish { printer.print(quiet: operation.quiet, json: operation.logFormat == .json, redactor: redactor) }
        let output = CommandOutput(format: operation.logFormat == .json ? .json : .text, quiet: operation.quiet, redactor: redactor)
        writeRunFiles(report, redactor: redactor, logger: logger, output: output)
        if let reviewHTML, report.exitStatus == .success || report.exitStatus == .partial {
            await writeReview(reviewHTML, previous: previous?.argument, options: options, output: output)
        }
        if let copy = previous?.copy { FileSystem.remove(copy) }
        if let publishOptions, publishes {
            try await PublishCommand.publish(publishOptions, output: output, publicURL: publicURL)
        }
        if printAfterPublish { printer.print(quiet: operation.quiet, json: operation.logFormat == .json, redactor: redactor) }
        if report.exitStatus != .success { throw ExitCode(report.exitStatus.rawValue) }
    }

    /// What `--review-html` compares the new build with: the output's own index when it has one,
    /// else `--previous-index`; nil for a first release.
    private func previousRelease(options: BuildOptions) -> (argument: String, copy: String?)? {
        let own = options.outputDirectory + "/index.json"
        // A copy beside it (a hidden temporary name, removed after the review): the build replaces
        // index.json; the pack files it names stay for keep_versions versions.
        if let bytes = try? FileSystem.readAll(own) {
            let copy = FileSystem.temporaryPath(beside: own)
            if (try? FileSystem.writeAtomically(bytes, to: copy)) != nil { return (copy, copy) }
        }
        return previousIndex.map { ($0, nil) }
    }

    /// Writes the review page; a failure is said and leaves the build's exit status alone.
    private func writeReview(_ directory: String, previous: String?, options: BuildOptions, output: CommandOutput) async {
        do {
            let summary = try await ReviewCommand.review(old: previous, new: options.outputDirectory, html: directory, trust: nil)
            for line in ReviewCommand.lines(summary, html: directory) { output.line(line, event: "review") }
        } catch {
            output.failure("gifpack: review page: \(error)", event: "review")
        }
    }

    private func runFiles(outputDirectory: String?) -> RunFiles {
        RunFiles(
            metricsFile: operation.metricsFile, summaryFile: operation.summaryFile, githubOutput: operation.githubOutput,
            outputDirectory: outputDirectory)
    }

    /// The metrics file and the CI summary, written whatever the outcome; a failure to write them
    /// is logged and leaves the exit status alone.
    private func writeRunFiles(_ report: BuildReport, redactor: SecretRedactor, logger: Logger, output: CommandOutput) {
        runFiles(outputDirectory: nil).write(report, redactor: redactor) { problem in
            // --quiet logs nothing, but a file cron or CI reads that could not be written is said.
            if logger.allows(.error) { logger.error("\(problem)") } else { output.failure("gifpack: \(problem)", event: "run-files") }
        }
    }

    private func printDryRun(manifest: Manifest, options: BuildOptions) async throws {
        let plan: DryRun.Plan
        do { plan = try await DryRun(manifest: manifest, options: options).plan() } catch {
            Terminal.error("gifpack: " + SecretRedactor(source: manifest.source).redact(String(describing: error)))
            let status: ExitStatus = if case CatalogError.authRejected = error { .authRejected } else { .failed }
            throw ExitCode(status.rawValue)
        }
        Terminal.output("dry run: no image request sent (\(plan.catalogRequests) catalog request(s) made)")
        if let recovery = plan.stateRecovery {
            Terminal.output(
                "state: the state database is damaged (\(recovery.reason)): a build would move it aside to \(recovery.movedTo) "
                    + "and rebuild it from the index and the blobs (\(recovery.rebuiltPacks) pack(s), \(recovery.rebuiltGIFs) GIF(s)); "
                    + "nothing was moved, the counts below assume the rebuilt state")
        }
        Terminal.output("catalog: \(plan.exercises) exercises; \(plan.wanted) wanted by \(plan.packs.count) pack(s)")
        for (name, count) in plan.packs.sorted(by: { $0.key < $1.key }) { Terminal.output("  pack \(name): \(count) exercises") }
        Terminal.output("would send: \(plan.fullRequests) full request(s), \(plan.conditionalRequests) conditional request(s)")
        for rendition in plan.renditions ?? [] {
            Terminal.output(
                "  \(rendition.resolution) px (\(rendition.wanted) wanted): \(rendition.fullRequests) full, "
                    + "\(rendition.conditionalRequests) conditional, \(rendition.skippedFresh + rendition.skippedKnownMissing) skipped")
        }
        Terminal.output("would skip: \(plan.skippedFresh) fresh (refresh_after), \(plan.skippedKnownMissing) known missing (missing_ttl)")
        let budget = plan.requestBudget.map { "\($0) (max_requests)" } ?? "no limit (max_requests unset)"
        Terminal.output("image requests: at most \(plan.imageRequests) before retries, against a budget of \(budget)")
    }
}

extension MissingAllowance: ExpressibleByArgument {
    /// `--max-removed 50` or `--max-removed 10%`.
    package init?(argument: String) { self.init(parsing: argument) }
}

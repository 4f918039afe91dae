import ArgumentParser
import Foundation
import GifPack

struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Upload a build's packs, then its signature and index, to a directory or S3.",
        discussion: """
            Every pack file index.json names is uploaded and confirmed (size and SHA-256) before the index's signature \
            (when the build is signed: signatures/<sha256 of index.json>.minisig) and then index.json are written, and \
            index.json.minisig after it, so the target serves the old index or the new one, never an index whose packs \
            or signature are missing. A pack already at the target with the same size and SHA-256 is not sent again: a \
            killed publish is finished by running it again. A live index with a higher sequence or a newer format is \
            never replaced (exit 7); one that does not parse stops the publish (exit 1) unless \
            --replace-unreadable-index is given. Nothing else is uploaded (report.json only with --with-report). After \
            the new index is live, pack files older than the newest --keep-versions versions of their pack, and the \
            signatures of older indexes, are deleted, never one the live index names.

            S3: credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (optional), region from \
            AWS_REGION (default us-east-1); --endpoint for S3-compatible stores (path-style). Packs get \
            Cache-Control: public, max-age=31536000, immutable; index.json and index.json.minisig public, \
            max-age=--index-max-age. A directory target's headers are the web server's job (docs/running-unattended.md).

            --public-url names where clients read what is published (the URL they give `gifpack install --index`, or its \
            folder). After uploading, publish fetches index.json and index.json.minisig from there anonymously and asks for \
            the first byte of every pack file (a range request, Accept-Encoding: gzip), and fails (exit 1) with the reason when clients could not install: \
            HTTP 403 (the bucket or CDN refuses anonymous reads), 404, a stale copy of the index or of its signature, a pack \
            served compressed or of another size.

            --quiet prints nothing when the publish succeeds and one line when it fails.

            Examples:
              gifpack publish --from dist --to /var/www/gifpack
              gifpack publish --from dist --to s3://cdn-bucket/gifpack --dry-run
              gifpack publish --from dist --to s3://cdn-bucket/gifpack --public-url https://cdn-bucket.s3.amazonaws.com/gifpack/
              AWS_REGION=auto gifpack publish --from dist --to s3://packs/gifpack --endpoint https://ACCOUNT.r2.cloudflarestorage.com

            Exit status: 0 published (or already current), 1 failed (unreachable, no such bucket, I/O, clients cannot read \
            it at --public-url), 2 bad command line or --from (nothing uploaded), 4 credentials refused, 7 the target serves a newer index.
            """
    )

    @Option(help: ArgumentHelp("The build's output directory.", valueName: "dir"))
    var from = "dist"

    @Option(help: ArgumentHelp("A directory or s3://bucket/prefix.", valueName: "target"))
    var to: String

    @Option(help: ArgumentHelp("S3-compatible endpoint, e.g. http://127.0.0.1:9000 (path-style addressing).", valueName: "url"))
    var endpoint: String?

    @Option(help: "Pack versions kept at the target per pack (the manifest's keep_versions).")
    var keepVersions = 3

    @Option(help: "Cache-Control max-age of index.json and its signature, in seconds.")
    var indexMaxAge = 60

    @Flag(help: "Upload report.json too (after the index).")
    var withReport = false

    @Flag(help: "List what would be uploaded and deleted; change nothing.")
    var dryRun = false

    @Flag(help: "Replace a live index.json that does not parse (retention then deletes nothing).")
    var replaceUnreadableIndex = false

    @Option(
        help: ArgumentHelp(
            "Where clients read the published index (its URL or folder): read back anonymously after the upload.",
            valueName: "url"))
    var publicURL: String?

    @Flag(name: .shortAndLong, help: "Print nothing on success, one line on failure.")
    var quiet = false

    func run() async throws {
        guard keepVersions >= 1, (0...86400).contains(indexMaxAge) else {
            Terminal.error("gifpack: --keep-versions must be at least 1 and --index-max-age between 0 and 86400")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        let target: PublishTargetSpec
        do { target = try PublishTargetSpec.parse(to, endpoint: endpoint) } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(error.exitStatus.rawValue)
        }
        if let publicURL {
            do { try PublicReadCheck.validate(publicURL) } catch {
                Terminal.error("gifpack: \(error)")
                throw ExitCode(ExitStatus.usage.rawValue)
            }
        }
        let options = PublishOptions(
            from: from, target: target, keepVersions: keepVersions, indexMaxAge: indexMaxAge,
            withReport: withReport, dryRun: dryRun, replaceUnreadableIndex: replaceUnreadableIndex)
        try await Self.publish(options, output: CommandOutput(format: .text, quiet: quiet, redactor: SecretRedactor(secrets: [])), publicURL: publicURL)
    }

    /// Runs a publish and prints its lines and summary through `output` (nothing but a failure
    /// with `quiet`), then, given the `publicURL` clients read from, checks that they can
    /// (``PublicReadCheck``); a failure is one line and exits with its status.
    static func publish(_ options: PublishOptions, output: CommandOutput, publicURL: String?) async throws {
        signal(SIGPIPE, SIG_IGN)
        let started = ContinuousClock.now
        let report: PublishReport
        do {
            report = try await Publisher(options: options, environment: ProcessInfo.processInfo.environment).run { line in
                output.line(line, event: "publish")
            }
        } catch {
            output.failure(
                "gifpack: publish to \(options.target) failed: \(error)", event: "publish",
                fields: ["outcome": .string("failed"), "exit_status": .int(Int64(error.exitStatus.rawValue))])
            throw ExitCode(error.exitStatus.rawValue)
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let verb = report.dryRun ? "dry run, would publish" : "published"
        if let publicURL, !report.dryRun {
            let check = PublicReadCheck(publicURL: publicURL, outputDirectory: options.from)
            if let problem = await check.run() {
                output.failure(
                    "gifpack: published to \(options.target), but clients cannot install from \(check.indexURL): \(problem)",
                    event: "publish",
                    fields: [
                        "outcome": .string("unreadable"), "exit_status": .int(Int64(ExitStatus.failed.rawValue)),
                        "url": .string(check.indexURL)
                    ])
                throw ExitCode(ExitStatus.failed.rawValue)
            }
        }
        output.success(
            "\(verb) to \(options.target): \(report.uploaded.count) pack(s) uploaded (\(report.bytesUploaded) bytes), "
                + "\(report.alreadyThere.count) already there, index \(report.indexWritten ? "written" : "unchanged")"
                + (report.sequence.map { " (sequence \($0))" } ?? "") + ", \(report.deleted.count) old pack file(s) deleted"
                + String(format: " in %.2f s", seconds) + (report.dryRun ? "" : publicURL.map { "; clients can read it at \($0)" } ?? ""),
            event: "publish",
            fields: [
                "outcome": .string(report.dryRun ? "dry-run" : "published"),
                "uploaded": .int(Int64(report.uploaded.count)), "bytes": .int(report.bytesUploaded),
                "index_written": .bool(report.indexWritten), "deleted": .int(Int64(report.deleted.count))
            ])
    }
}

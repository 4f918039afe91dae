import ArgumentParser
import Foundation
import GifPack
import GifPackClient
import GifPackHTTP
import GifPackSystem
import GifPackIndexReader

struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Write a static release-review page: what a new version changes, in pictures.",
        discussion: """
            OLD and NEW are output folders, index files or http(s) index URLs; with NEW alone the page \
            reviews a first release. DIR gets index.html (the summary: versions, sequence, signer, expiry, \
            exercises added, changed, removed and missing, bytes per pack before and after, what an app's \
            upgrade downloads; then tiles of each section, changed ones before and after side by side, the \
            animation on hover or click, and a "look again" list of what automatic checks flag: the first 24 of each), every section's \
            tiles on pages of their own (--page-size a page), a gallery of the new version per pack, review.css \
            and the images, img/<sha256>.gif. Nothing on the page comes from the network: open DIR/index.html from \
            the disk, or serve DIR from any static host. Remote packs are downloaded (and verified) into a \
            temporary folder; posters are shown for local folders only.

            Examples:
              gifpack review old-dist/ dist/ --html review/
              gifpack review https://cdn.example.com/gifpack/index.json dist/ --html review/ --trusted-key gifpack.pub
              gifpack review dist/ --html review/        # a first release
            """
    )

    @Argument(help: ArgumentHelp("[OLD] NEW: output folders, index files or index URLs.", valueName: "index"))
    var releases: [String]

    @Option(help: ArgumentHelp("Where to write the page (made if needed).", valueName: "dir"))
    var html: String

    @Option(help: ArgumentHelp("Tiles per page of a section or of the gallery (half as many changed tiles, which show two pictures).", valueName: "n"))
    var pageSize = 120

    @OptionGroup var trust: TrustOptions

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func validate() throws {
        guard (1...2).contains(releases.count) else { throw ValidationError("give NEW, or OLD and NEW (\(releases.count) given)") }
        guard pageSize >= 1 else { throw ValidationError("--page-size must be at least 1") }
    }

    func run() async throws {
        let indexTrust = try trust.load()
        let summary: ReviewPage.Summary
        do {
            summary = try await Self.review(
                old: releases.count == 2 ? releases[0] : nil, new: releases[releases.count - 1],
                html: html, trust: indexTrust, pageSize: pageSize)
        } catch {
            Terminal.error("gifpack: review: \(error)")
            throw ExitCode(1)
        }
        guard !quiet else { return }
        for line in Self.lines(summary, html: html) { Terminal.output(line) }
    }

    /// Reads both sides and writes the page (off the cooperative pool); `gifpack build --review-html` calls it too.
    static func review(old: String?, new: String, html: String, trust: IndexTrust?, pageSize: Int = 120) async throws -> ReviewPage.Summary {
        let downloads = NSTemporaryDirectory() + "gifpack-review-\(UUID().uuidString)"
        defer { FileSystem.removeTree(downloads) }
        let oldClient = try old.flatMap { try CurlTransport.client(for: $0, maxConnections: 2) }
        let newClient = try CurlTransport.client(for: new, maxConnections: 2)
        defer { oldClient?.shutdown(); newClient?.shutdown() }
        var loadedOld: ReviewRelease?
        if let old {
            loadedOld = try await ReviewSide.load(old, trust: trust, client: oldClient).release(downloads: downloads + "/old", client: oldClient)
        }
        let oldRelease = loadedOld
        let newRelease = try await ReviewSide.load(new, trust: trust, client: newClient)
            .release(downloads: downloads + "/new", client: newClient)
        let options = ReviewPage.Options(pageSize: pageSize)
        return try await BlockingWork.run("gifpack.review") { () throws -> ReviewPage.Summary in
            try ReviewPage.write(old: oldRelease, new: newRelease, to: html, options: options)
        }
    }

    static func lines(_ summary: ReviewPage.Summary, html: String) -> [String] {
        var lines = [
            "review: \(TerminalText.escaped(html, maxScalars: 200))/index.html — \(summary.exercises) exercises: "
                + "\(summary.added) added, \(summary.changed) changed, \(summary.removed) removed, \(summary.missing) missing, "
                + "\(summary.flagged) to look again (\(summary.pages) page(s))"
        ]
        if !summary.problems.isEmpty {
            lines.append(
                "not shown (\(summary.problems.count)): " + TerminalText.escaped(summary.problems[0], maxScalars: 200)
                    + (summary.problems.count > 1 ? " …" : ""))
        }
        return lines
    }
}

import ArgumentParser
import Foundation
import GifPackClient
import GifPackSystem
import struct GifPack.PublicReadCheck
import GifPackIndexReader

extension InstallLayout: ExpressibleByArgument {}

struct InstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Fetch, verify and install packs into a cache directory, switching atomically.",
        discussion: """
            Reads the index (a path or an http(s) URL), downloads the chosen packs into <cache>.d/downloads \
            (resuming an interrupted download with a Range request; a local index's packs are read in \
            place), verifies every pack and GIF, and installs them as a new generation: <cache> is a \
            symbolic link switched with one rename, so readers see the old complete set or the new one. \
            Unchanged GIFs are hard-linked from the previous generation, GIFs that left are dropped. \
            A refused pack leaves <cache> untouched and names its reason.

            With --trusted-key (repeatable), the index must be signed: index.json.minisig beside it must \
            verify with one of the keys, the index must not be expired, and its sequence must not be \
            lower than the cache's floor, the highest sequence ever verified there (every install keeps \
            it, one without --trusted-key too); otherwise nothing is downloaded and the refusal names \
            its reason (unsigned, malformed-signature, unknown-key, bad-signature, expired, rollback).

            Upgrades from a URL are sparse: with a generation installed, only the new pack's catalog \
            frame and the frames of GIFs the cache lacks are fetched, with single-range requests (at \
            most 3 at once), each frame checked like a whole download's. The whole pack is downloaded \
            when the server ignores Range, when the ranges would cost more, or on a first install \
            (--no-sparse: always). The report says which way each pack came and the bytes it took.

            Layouts: by-id puts <cache>/<exerciseId>.gif (exercises sharing a GIF share one file \
            through hard links); by-hash puts <cache>/gifs/<sha256>.gif plus <cache>/index-by-id.json. \
            Either way <cache>/gifpack-manifest.json records the installed packs and versions.

            With --with-posters, each chosen pack's posters pack (format 1.2) is installed too, in the \
            same generation: <cache>/posters/<size>/<exerciseId>.gif (by-hash: posters/<size>/<sha256>.gif), \
            every size the posters pack has. It is fetched whole and verified like a pack, and not at \
            all when the installed generation holds every poster of that version. Without the flag \
            nothing poster-related is fetched.

            With --resolution PX and an index that has renditions (format 1.3: renditionPacks, packs \
            named <pack>.<px>), each exercise of each chosen pack gets its smallest rendition of at \
            least PX pixels, else the largest there is, and only the packs giving those GIFs are \
            fetched (a 360 install downloads no byte of the 180 packs). Placeholders and posters stay \
            the first resolution's. Without it, or with an index without renditions, the index's packs \
            are installed as before. The manifest records the resolution asked for.

            With --format webp,gif and an index that has WebP renditions (format 1.4: formatPacks, \
            packs named <pack>.<px>.webp), each chosen pack (or rendition) is installed from its WebP \
            pack where the index has one, as <cache>/<exerciseId>.webp (a GIF the WebP pack lists \
            stays .gif), and its GIF pack is not fetched; placeholders and posters stay the GIFs'. \
            Without it (or --format gif) the GIF packs are installed and no WebP pack is read. The \
            manifest records the formats asked for.

            Examples:
              gifpack install --index dist/index.json --cache /var/cache/gifs
              gifpack install --index https://cdn.example.com/index.json \\
                              --cache /var/cache/gifs --pack chest --pack back
              gifpack install --index dist/index.json --cache /tmp/gifs --layout by-hash
              gifpack install --index https://cdn.example.com/index.json --cache /var/cache/gifs --with-posters
              gifpack install --index https://cdn.example.com/index.json --cache /var/cache/gifs --resolution 360
              gifpack install --index https://cdn.example.com/index.json --cache /var/cache/gifs --format webp,gif
              gifpack install --index https://cdn.example.com/index.json --cache /var/cache/gifs \\
                              --trusted-key gifpack.pub --trusted-key gifpack-next.pub

            Exit status: 0 installed (or already up to date), 1 failed or refused, 2 bad arguments (or key file), \
            6 another install holds the cache.
            """
    )

    @Option(help: "The index: a path to index.json or an http(s) URL.")
    var index: String

    @Option(help: "The cache directory apps read (becomes a symbolic link to the installed generation).")
    var cache: String

    @Option(name: .customLong("pack"), help: "A pack to install (repeatable); default: every pack of the index.")
    var packs: [String] = []

    @Option(help: "by-id (<id>.gif, default) or by-hash (gifs/<sha256>.gif plus index-by-id.json).")
    var layout: InstallLayout = .byID

    @Flag(help: "Keep verified pack downloads in <cache>.d/downloads after installing.")
    var keepDownloads = false

    @OptionGroup var trust: TrustOptions

    @OptionGroup var network: DeadlineOption

    @Flag(help: "Always download whole packs (no sparse upgrade by range requests).")
    var noSparse = false

    @Option(help: "With renditions (format 1.3): the pixels wanted; each exercise gets its smallest rendition at least this size, else the largest.")
    var resolution: Int?

    @Flag(help: "Also install each pack's still posters: <cache>/posters/<size>/<id>.gif (format 1.2 indexes).")
    var withPosters = false

    @OptionGroup var format: FormatOption

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func validate() throws {
        if let resolution, !(1...100_000).contains(resolution) { throw ValidationError("--resolution must be 1...100000 pixels") }
    }

    func run() async throws {
        var installer = PackInstaller(cacheDirectory: cache, layout: layout)
        installer.keepDownloads = keepDownloads
        installer.trust = try trust.load()
        installer.sparseUpgrades.isEnabled = !noSparse
        installer.withPosters = withPosters
        installer.preferredPixelSize = resolution
        installer.formats = format.formats
        installer.timeouts = network.timeouts
        let client = try CurlTransport.client(for: index, maxConnections: max(2, installer.sparseUpgrades.maxRequestsInFlight))
        defer { client?.shutdown() }
        let report: InstallReport
        do {
            report = try await installer.install(from: PackIndexSource(index), packs: packs.isEmpty ? nil : packs, client: client)
        } catch {
            let failure = error as? PackClientError
            Terminal.error("gifpack: \(error)" + (failure.flatMap(Self.readHint).map { " — \($0)" } ?? ""))
            switch failure {
            case .unknownPack?: throw ExitCode(2)
            case .cacheLocked?: throw ExitCode(6)
            default: throw ExitCode(1)
            }
        }
        guard !quiet else { return }
        let packs = report.packs.map { "\(TerminalText.escaped($0.name, maxScalars: 70)) v\($0.version)" }.joined(separator: ", ")
        if report.isUnchanged {
            Terminal.output("ok: \(packs) already installed in \(report.cacheDirectory) (generation \(report.generation))")
            return
        }
        Terminal.output("installed \(packs) into \(report.cacheDirectory) -> \(report.generationDirectory) (\(report.layout.rawValue))")
        Terminal.output(
            "exercises: \(report.exercises) (\(report.placeholders) without GIF): \(report.added.count) added, "
                + "\(report.changed.count) changed, \(report.removed.count) removed")
        Terminal.output(
            "gifs: \(report.gifsWritten) written (\(report.bytesWritten) bytes), \(report.gifsReused) unchanged kept "
                + "(\(report.gifChecksSkipped) already checked), \(report.linksCreated) shared by hard link; downloaded \(report.bytesDownloaded) bytes")
        if !report.posterPacks.isEmpty {
            let sizes = Array(Set(report.posterPacks.flatMap(\.sizes))).sorted().map(String.init).joined(separator: ", ")
            Terminal.output("posters: \(report.postersWritten) written, \(report.postersReused) unchanged kept (sizes \(sizes) px)")
        }
        for fetch in report.fetches { Terminal.output(Self.describe(fetch)) }
        Terminal.output(Self.describe(report.phases))
        Terminal.output("ok: generation \(report.generation)")
    }

    /// What an HTTP 401/403/404 answer for the index or a pack usually means: the publisher's
    /// bucket or CDN refuses anonymous reads, or the URL is not where the packs are published.
    static func readHint(_ error: PackClientError) -> String? {
        guard case .unreadable(let location, let detail) = error, location.lowercased().hasPrefix("http"),
            detail.hasPrefix("HTTP status "), let status = Int(detail.dropFirst("HTTP status ".count))
        else { return nil }
        return PublicReadCheck.hint(forStatus: status)
    }

    /// Where the install's time went (``InstallPhases``), in seconds: every phase, what no phase
    /// covers and the total (make bench reads this line).
    static func describe(_ phases: InstallPhases) -> String {
        let parts = phases.named.map { "\($0.name) \(seconds($0.seconds))" } + ["other \(seconds(phases.other))"]
        return "phases s: " + parts.joined(separator: ", ") + "; total \(seconds(phases.total))"
    }

    private static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    /// One line per pack: which path it took, the bytes fetched and what the whole pack costs.
    static func describe(_ fetch: PackFetchSummary) -> String {
        let head = "fetch \(fetch.pack) v\(fetch.version): "
        switch fetch.method {
        case .sparse:
            return head + "sparse, \(fetch.framesFetched ?? 0) GIF frames and the catalog in \(fetch.requests ?? 0) range requests, "
                + "\(fetch.bytesFetched) bytes (whole pack: \(fetch.wholePackBytes) bytes)"
        case .wholePack:
            return head + "whole pack, \(fetch.bytesFetched) bytes downloaded (pack: \(fetch.wholePackBytes) bytes)"
                + (fetch.fallbackReason.map { "; not sparse: \($0)" } ?? "")
        case .local:
            return head + "read in place (\(fetch.wholePackBytes) bytes)"
        case .installed:
            return head + "nothing fetched, the installed generation holds all of it (\(fetch.wholePackBytes) bytes)"
        }
    }
}

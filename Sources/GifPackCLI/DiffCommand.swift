import ArgumentParser
import Foundation
import GifPackClient
import GifPackSystem
import GifPackFormat
import GifPackIndexReader

struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two indexes: exercises added, removed and changed, and the bytes a client would download.",
        discussion: """
            Exercises are compared by id across all packs; "changed" means the GIF's hash changed (or the \
            exercise gained or lost its GIF). A client installing packs downloads every pack whose file \
            changed; a client reading single GIFs by frame offset fetches only the new GIFs' frames. \
            With renditions (format 1.3), exercises are compared at the first resolution (packs[]) and \
            the rendition packs (<pack>.<px>) are listed among the packs to download or removed, with \
            their resolution.

            Examples:
              gifpack diff old/index.json dist/index.json
              gifpack diff https://cdn.example.com/index.json dist/index.json
            """
    )

    @Argument(help: "The old index (path or http(s) URL).")
    var old: String

    @Argument(help: "The new index (path or http(s) URL).")
    var new: String

    @Flag(help: "List every exercise id (by default at most 20 per kind).")
    var all = false

    @Flag(name: .shortAndLong, help: "Print nothing on success; a failure is one line.")
    var quiet = false

    func run() async throws {
        let oldClient = try CurlTransport.client(for: old, maxConnections: 2)
        let newClient = try CurlTransport.client(for: new, maxConnections: 2)
        defer { oldClient?.shutdown(); newClient?.shutdown() }
        let diff: IndexDiff
        do {
            diff = IndexDiff(
                old: try await PackIndexSource(old).load(client: oldClient),
                new: try await PackIndexSource(new).load(client: newClient))
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        guard !quiet else { return }
        for (label, ids) in [("added", diff.added), ("removed", diff.removed), ("changed", diff.changed)] {
            let shown = (all ? ids : Array(ids.prefix(20))).map { TerminalText.escaped($0, maxScalars: 70) }
            let more = ids.count > shown.count ? " … (\(ids.count - shown.count) more)" : ""
            Terminal.output("\(label): \(ids.count)" + (ids.isEmpty ? "" : " — " + shown.joined(separator: " ") + more))
        }
        Terminal.output("download: \(diff.downloadBytes) bytes in \(diff.downloads.count) pack(s)")
        for pack in diff.downloads {
            let resolution = pack.resolution.map { " (\($0) px)" } ?? ""
            Terminal.output("  \(TerminalText.escaped(pack.name, maxScalars: 70))\(resolution) \(pack.oldVersion.map { "v\($0)" } ?? "new") -> v\(pack.newVersion): \(pack.bytes) bytes")
        }
        if !diff.removedPacks.isEmpty { Terminal.output("packs removed: \(diff.removedPacks.map { TerminalText.escaped($0, maxScalars: 70) }.joined(separator: " "))") }
        Terminal.output("single-GIF reads instead: \(diff.newGIFFrameBytes) bytes of new GIF frames")
    }
}

import ArgumentParser
import Foundation
import GifPackClient
import GifPackSystem
import GifPackFormat

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a pack's exercises as a table: exercise, size, dimensions, frames, duration.",
        discussion: """
            Reads the pack's catalog.json (its first frame) only. Exercises without a GIF show "-". A \
            rendition pack (<pack>.<px>, format 1.3) is a pack like the others; the summary names the \
            resolution its catalog was built for. A WebP pack (<pack>.<px>.webp, format 1.4) adds a \
            format column: webp, or gif where the GIF stands in; sizes and timing are the WebP's. \
            A posters pack (<pack>-posters, format 1.2) is listed poster by poster: path, longest side, \
            bytes, and the GIF it shows.

            Example:
              gifpack inspect dist/packs/all-v3-1a2b3c4d.tar.zst
              gifpack inspect dist/packs/all-posters-v3-5e6f7a8b.tar.zst
            """
    )

    @Argument(help: "A .tar.zst pack file.")
    var pack: String

    func run() throws {
        let catalog: PackCatalog
        do {
            let scan = try PackFileScan(path: pack)
            if let posters = Self.posterCatalog(scan) {
                printPosters(posters)
                return
            }
            catalog = try scan.catalog()
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        // A WebP pack (format 1.4) says each entry's format.
        let formats = catalog.exercises.contains { $0.gif?.format != nil }
        var rows = [["exercise", "name", "bytes", "dimensions", "frames", "duration"] + (formats ? ["format"] : [])]
        for exercise in catalog.exercises {
            let id = TerminalText.escaped(exercise.id, maxScalars: 70)
            let name = TerminalText.escaped(exercise.name, maxScalars: 40)
            if let gif = exercise.gif {
                let seconds = String(format: "%.2fs", Double(gif.durationMilliseconds) / 1000)
                rows.append(
                    [id, name, String(gif.bytes), "\(gif.width)x\(gif.height)", String(gif.frames), seconds]
                        + (formats ? [TerminalText.escaped((gif.format ?? .gif).rawValue, maxScalars: 10)] : []))
            } else {
                rows.append([id, name, "-", "-", "-", "-"] + (formats ? ["-"] : []))
            }
        }
        Self.printTable(rows, numeric: [2, 4, 5])
        let withGIF: [GIFMetadata] = catalog.exercises.compactMap { $0.gif }
        let distinct = Set(withGIF.map { $0.sha256 }).count
        let bytes = withGIF.reduce(Int64(0)) { $0 + $1.bytes }
        let resolution = catalog.source.resolution.map { " at \($0) px" } ?? ""
        Terminal.output(
            "\(catalog.exercises.count) exercise(s) in pack \(TerminalText.escaped(catalog.pack, maxScalars: 70))\(resolution), "
                + "\(withGIF.count) with a GIF, \(distinct) distinct GIF(s), \(bytes) bytes"
                + (formats ? " (\(Set(withGIF.filter { $0.format == .webp }.map(\.sha256)).count) WebP, the others GIF)" : ""))
    }

    /// The posters pack catalog, when the first entry is one (a pack's catalog is not).
    static func posterCatalog(_ scan: PackFileScan) -> PosterPackCatalog? {
        guard let first = scan.frames.first, let entry = try? scan.entry(first, maxSize: scan.limits.maxCatalogBytes),
            entry.header.name == PackCatalog.path
        else { return nil }
        return try? PosterPackCatalog.decode(from: entry.data)
    }

    private func printPosters(_ catalog: PosterPackCatalog) {
        var rows = [["poster", "size", "bytes", "gif"]]
        for poster in catalog.posters {
            rows.append([
                TerminalText.escaped(poster.path, maxScalars: 90), String(poster.size), String(poster.bytes),
                TerminalText.escaped(String(poster.gif.prefix(12)), maxScalars: 12)
            ])
        }
        Self.printTable(rows, numeric: [1, 2])
        let bytes = catalog.posters.reduce(Int64(0)) { $0 + $1.bytes }
        let sizes = catalog.sizes.map(String.init).joined(separator: ", ")
        Terminal.output(
            "\(catalog.posters.count) poster(s) in posters pack \(TerminalText.escaped(catalog.pack, maxScalars: 70)), "
                + "sizes \(sizes) px, \(Set(catalog.posters.map(\.gif)).count) GIF(s), \(bytes) bytes")
    }

    private static func printTable(_ rows: [[String]], numeric: Set<Int>) {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? padding + cell : cell + padding
            }
            Terminal.output(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }
}

import ArgumentParser
import Foundation
import GifPackClient

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a pack's exercises as a table: exercise, size, dimensions, frames, duration.",
        discussion: """
        Reads the pack's catalog.json (its first frame) only. Exercises without a GIF show "-".

        Example:
          gifpack inspect dist/packs/all-v3-1a2b3c4d.tar.zst
        """
    )

    @Argument(help: "A .tar.zst pack file.")
    var pack: String

    func run() throws {
        let catalog: PackCatalog
        do { catalog = try PackFileScan(path: pack).catalog() } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        var rows = [["exercise", "name", "bytes", "dimensions", "frames", "duration"]]
        for exercise in catalog.exercises {
            let id = TerminalText.escaped(exercise.id, maxScalars: 70)
            let name = TerminalText.escaped(exercise.name, maxScalars: 40)
            if let gif = exercise.gif {
                let seconds = String(format: "%.2fs", Double(gif.durationMilliseconds) / 1000)
                rows.append([id, name, String(gif.bytes), "\(gif.width)x\(gif.height)", String(gif.frames), seconds])
            } else {
                rows.append([id, name, "-", "-", "-", "-"])
            }
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let numeric: Set<Int> = [2, 4, 5]
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? padding + cell : cell + padding
            }
            Terminal.output(cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        let withGIF: [GIFMetadata] = catalog.exercises.compactMap { $0.gif }
        let distinct = Set(withGIF.map { $0.sha256 }).count
        let bytes = withGIF.reduce(Int64(0)) { $0 + $1.bytes }
        Terminal.output("\(catalog.exercises.count) exercise(s) in pack \(TerminalText.escaped(catalog.pack, maxScalars: 70)), "
            + "\(withGIF.count) with a GIF, \(distinct) distinct GIF(s), \(bytes) bytes")
    }
}

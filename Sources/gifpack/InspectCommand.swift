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
          gifpack inspect dist/packs/all-v3.tar.zst
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
            let name = Self.printable(exercise.name)
            if let gif = exercise.gif {
                let seconds = String(format: "%.2fs", Double(gif.durationMilliseconds) / 1000)
                rows.append([exercise.id, name, String(gif.bytes), "\(gif.width)x\(gif.height)", String(gif.frames), seconds])
            } else {
                rows.append([exercise.id, name, "-", "-", "-", "-"])
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
        Terminal.output("\(catalog.exercises.count) exercise(s) in pack \(Self.printable(catalog.pack)), "
            + "\(withGIF.count) with a GIF, \(distinct) distinct GIF(s), \(bytes) bytes")
    }

    /// At most 40 characters of untrusted API text, without control characters.
    private static func printable(_ text: String) -> String {
        let scalars = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(40)
        return String(String.UnicodeScalarView(scalars))
    }
}

import ArgumentParser
import Foundation
import GifPackClient

struct CatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Write one exercise's GIF, byte for byte, to standard output.",
        discussion: """
        With an index (a local index.json), the GIF's zstd frame is read at its offset and nothing \
        else of the pack is decompressed; with a pack file alone, the catalog is read and the frames \
        are decoded until the GIF's entry. Either way the tar header and the SHA-256 are checked \
        before any byte is written.

        Examples:
          gifpack cat dist/index.json 0001 > 0001.gif
          gifpack cat dist/packs/all-v3.tar.zst 0001 > 0001.gif

        Exit status: 0 written, 1 unknown exercise, no GIF or a refused pack, 2 bad arguments.
        """
    )

    @Argument(help: "A local index.json or a .tar.zst pack file.")
    var source: String

    @Argument(help: "The exercise id.")
    var id: String

    func run() throws {
        guard FileManager.default.isReadableFile(atPath: source) else {
            Terminal.error("gifpack: cannot read \(source)")
            throw ExitCode(2)
        }
        let bytes: [UInt8]
        do {
            bytes = try isPack(source) ? PackFileScan(path: source).gif(forExercise: id) : gifThroughIndex()
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// True when the file starts with the zstd magic number.
    private func isPack(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)).map { Array($0) } == [0x28, 0xB5, 0x2F, 0xFD]
    }

    private func gifThroughIndex() throws(PackClientError) -> [UInt8] {
        let data = try IndexFile.read(source)
        let index: PackIndex
        do throws(IndexError) { index = try PackIndex.decode(from: data) } catch { throw .index(error) }
        guard let pack = index.packs.first(where: { $0.exercises.contains { $0.id == id } }) else {
            throw .unknownExercise(id)
        }
        guard case .file(let path) = try PackIndexSource(location: .file(source)).packLocation(for: pack) else {
            throw .unreadable(location: source, detail: "not a local index")
        }
        return try PackEntryReader(path: path, pack: pack).gif(forExercise: id)
    }
}

/// Reads a local index file for the synchronous commands.
enum IndexFile {
    static func read(_ path: String) throws(PackClientError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(location: path, detail: "cannot read the file")
        }
        return data
    }
}

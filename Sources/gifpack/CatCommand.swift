import ArgumentParser
import Foundation
import GifPackClient
#if canImport(Glibc)
import Glibc
#endif

struct CatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Write one exercise's GIF, byte for byte, to standard output.",
        discussion: """
        With an index (a local index.json), the GIF's zstd frame is read at its offset and nothing \
        else of the pack is decompressed; with a pack file alone, the catalog is read and the frames \
        are decoded until the GIF's entry. Either way the tar header and the SHA-256 are checked \
        before any byte is written. With --trusted-key (repeatable) the index must verify against \
        index.json.minisig beside it with one of the keys and not be expired (a pack file alone is \
        refused: it carries no signature).

        Examples:
          gifpack cat dist/index.json 0001 > 0001.gif
          gifpack cat dist/packs/all-v3-1a2b3c4d.tar.zst 0001 > 0001.gif
          gifpack cat dist/index.json 0001 --trusted-key gifpack.pub > 0001.gif

        Exit status: 0 written, 1 unknown exercise, no GIF or a refused pack, 2 bad arguments.
        """
    )

    @Argument(help: "A local index.json or a .tar.zst pack file.")
    var source: String

    @Argument(help: "The exercise id.")
    var id: String

    @OptionGroup var trust: TrustOptions

    func run() throws {
        let isPack: Bool
        do { isPack = try Self.startsWithZstdMagic(source) } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(2)
        }
        let trust = try self.trust.load()
        if trust != nil && isPack {
            Terminal.error("gifpack: a pack file alone carries no signature; read the GIF through its index.json with --trusted-key")
            throw ExitCode(2)
        }
        let bytes: [UInt8]
        do {
            bytes = try isPack ? PackFileScan(path: source).gif(forExercise: id) : gifThroughIndex(trust: trust)
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// True when the file starts with the zstd magic number. Only a regular file is opened for
    /// reading (`O_NONBLOCK`, then `fstat`): a FIFO, device or directory is refused at once.
    static func startsWithZstdMagic(_ path: String) throws(PackClientError) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .unreadable(location: path, detail: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(location: path, detail: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(location: path, detail: "not a regular file (\(FileKind.name(info.st_mode)))")
        }
        var magic = [UInt8](repeating: 0, count: 4)
        let got = magic.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4, 0) }
        return got == 4 && magic == [0x28, 0xB5, 0x2F, 0xFD]
    }

    /// The index is read by the same loader as every other command (64 MiB cap, regular files only,
    /// validated); with trusted keys, its signature beside it must verify first.
    private func gifThroughIndex(trust: IndexTrust?) throws(PackClientError) -> [UInt8] {
        let index: PackIndex
        if let trust {
            index = try trust.verifyFile(source)
        } else {
            index = try PackIndexSource.loadFile(source)
        }
        guard let pack = index.packs.first(where: { $0.exercises.contains { $0.id == id } }) else {
            throw .unknownExercise(id)
        }
        guard case .file(let path) = try PackIndexSource(location: .file(source)).packLocation(for: pack) else {
            throw .unreadable(location: source, detail: "not a local index")
        }
        return try PackEntryReader(path: path, pack: pack).gif(forExercise: id)
    }
}

import ArgumentParser
import Foundation
import GifPackClient
import GifPackSystem
import Glibc
import GifPackFormat
import GifPackIndexReader

struct CatCommand: AsyncParsableCommand {
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

            With --index URL, the GIF comes from a disk cache (--cache) or is fetched alone: one range \
            request for exactly its frame, checked the same way, then kept in the cache (at most \
            --cache-limit bytes, least recently used GIFs evicted). The index is kept there too and \
            revalidated with If-None-Match. An exercise without a GIF makes no GIF request. With \
            --trusted-key, the index must verify against index.json.minisig beside the URL (fetched with \
            it), not be expired, and its sequence must not be lower than the highest the cache has \
            accepted from this URL with trusted keys, whichever keys (the floor belongs to the URL and \
            survives a change of --trusted-key; a read without --trusted-key never touches it); a refused \
            index is reported with its reason and nothing is fetched or cached.

            The cache directory must be gifpack's: a new or empty directory is claimed (it gets a \
            .gifpack-lazy-cache marker), one with the marker is used, and any other non-empty \
            directory is refused (exit 2) before anything in it is created or deleted. Only the \
            cache's own files (gifs/<sha256>.gif, tmp/<UUID>.frame|gif|index) are ever deleted.

            Examples:
              gifpack cat dist/index.json 0001 > 0001.gif
              gifpack cat dist/packs/all-v3-1a2b3c4d.tar.zst 0001 > 0001.gif
              gifpack cat dist/index.json 0001 --trusted-key gifpack.pub > 0001.gif
              gifpack cat --index https://cdn.example.com/gifpack/index.json 0001 > 0001.gif
              gifpack cat --index https://cdn.example.com/gifpack/index.json 0001 --trusted-key gifpack.pub > 0001.gif
              gifpack cat --poster 80 dist/index.json 0001 > 0001-80.gif
              gifpack cat --resolution 360 --index https://cdn.example.com/gifpack/index.json 0001 > 0001.gif
              gifpack cat --format webp,gif --index https://cdn.example.com/gifpack/index.json 0001 > 0001.webp

            With --poster SIZE (a local index.json only), the exercise's still poster at that longest side \
            is read from the pack's posters pack instead (format 1.2).

            With --resolution PX and an index that has renditions (format 1.3), the GIF is the exercise's \
            smallest rendition of at least PX pixels, else the largest there is (the choice of \
            install --resolution); without it, the first resolution's (packs[]).

            With --format webp,gif and an index that has WebP renditions (format 1.4), the exercise's \
            WebP is written where its pack has one (its RIFF container walked before any byte is \
            written), else its GIF; the formats are tried in the order given. Without it, the GIF.

            Exit status: 0 written, 1 unknown exercise, no GIF, a refused pack or a refused index, 2 bad arguments \
            (a --cache directory that is not gifpack's included).
            """
    )

    @Option(help: "An index (http(s) URL or local path) to find the GIF through; then give only the exercise id.")
    var index: String?

    @Option(help: "With --index URL: the GIF cache directory (default $XDG_CACHE_HOME/gifpack/gifs, else ~/.cache/gifpack/gifs).")
    var cache: String?

    @OptionGroup var trust: TrustOptions

    @OptionGroup var network: DeadlineOption

    @Option(help: "With --index URL: most bytes of GIFs the cache keeps.")
    var cacheLimit: Int64 = 64 << 20

    @Option(name: .customLong("poster"), help: "Write the still poster of this longest side (px) instead of the GIF (a local index.json only).")
    var posterSize: Int?

    @Option(help: "With renditions (format 1.3): the pixels wanted; the smallest rendition at least this size, else the largest.")
    var resolution: Int?

    @OptionGroup var format: FormatOption

    @Argument(help: "A local index.json or a .tar.zst pack file, then the exercise id (with --index: the exercise id alone).")
    var operands: [String] = []

    private var source: String { operands.first ?? "" }
    private var id: String { operands.last ?? "" }

    func validate() throws {
        let wanted = index == nil ? 2 : 1
        guard operands.count == wanted else {
            throw ValidationError(
                index == nil
                    ? "expected a source (index.json or pack) and an exercise id"
                    : "with --index, expected the exercise id alone")
        }
        if posterSize != nil, index != nil {
            throw ValidationError("--poster reads a local index.json and its posters pack; it cannot be combined with --index")
        }
        guard cacheLimit >= 0 else { throw ValidationError("--cache-limit must not be negative") }
        if let resolution, !(1...100_000).contains(resolution) { throw ValidationError("--resolution must be 1...100000 pixels") }
        if resolution != nil, posterSize != nil {
            throw ValidationError("--poster reads the first resolution's posters pack; it cannot be combined with --resolution")
        }
        if format.text != nil, posterSize != nil {
            throw ValidationError("--poster reads the GIFs' posters pack (posters are stills, GIF only); it cannot be combined with --format")
        }
    }

    func run() async throws {
        if let index {
            try await lazyGIF(index: index)
            return
        }
        let isPack: Bool
        do { isPack = try Self.startsWithZstdMagic(source) } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(2)
        }
        if let posterSize, !(16...512).contains(posterSize) {
            Terminal.error("gifpack: --poster \(posterSize) is outside 16...512")
            throw ExitCode(2)
        }
        let trust = try self.trust.load()
        if trust != nil && isPack {
            Terminal.error("gifpack: a pack file alone carries no signature; read the GIF through its index.json with --trusted-key")
            throw ExitCode(2)
        }
        if posterSize != nil, isPack {
            Terminal.error("gifpack: --poster needs an index.json, not a pack file")
            throw ExitCode(2)
        }
        let bytes: [UInt8]
        do {
            if let posterSize {
                bytes = try posterThroughIndex(size: posterSize, trust: trust)
            } else {
                bytes = try isPack ? PackFileScan(path: source).gif(forExercise: id) : gifThroughIndex(trust: trust)
            }
        } catch {
            Terminal.error("gifpack: \(error)")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// Through an index: from the lazy GIF cache (a URL) or read in place (a local path).
    private func lazyGIF(index: String) async throws {
        let client = try CurlTransport.client(for: index, maxConnections: 2)
        defer { client?.shutdown() }
        let cache = LazyGIFCache(
            directory: self.cache ?? Self.defaultCacheDirectory(), indexURL: index, byteLimit: cacheLimit,
            client: client, timeouts: network.timeouts, trust: try trust.load(), preferredPixelSize: resolution,
            formats: format.formats)
        let result: LazyGIF
        do { result = try await cache.gif(forExercise: id) } catch {
            Terminal.error("gifpack: \(error)")
            // A --cache directory that is not gifpack's is a bad argument: nothing was read or written.
            if case .cacheNotManaged = error { throw ExitCode(2) }
            throw ExitCode(1)
        }
        guard case .gif(let bytes, _) = result else {
            Terminal.error("gifpack: \(PackClientError.noGIF(exercise: id))")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data(bytes))
    }

    static func defaultCacheDirectory() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return "\(base)/gifpack/gifs" }
        return "\(environment["HOME"] ?? NSTemporaryDirectory())/.cache/gifpack/gifs"
    }

    /// True when the file starts with the zstd magic number. Only a regular file is opened for
    /// reading, never through a symbolic link (``RegularFile``): a FIFO, device or directory is refused at once.
    static func startsWithZstdMagic(_ path: String) throws(PackClientError) -> Bool {
        let fd: Int32
        do { fd = try RegularFile.open(path, .readOnly) } catch {
            switch error {
            case .io(_, _, let code): throw .unreadable(location: path, detail: String(cString: strerror(code)))
            case .notRegularFile(_, let kind): throw .unreadable(location: path, detail: "not a regular file (\(kind))")
            }
        }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        let got = magic.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 4, 0) }
        return got == 4 && magic == [0x28, 0xB5, 0x2F, 0xFD]
    }

    /// The exercise's poster from its pack's posters pack.
    private func posterThroughIndex(size: Int, trust: IndexTrust?) throws(PackClientError) -> [UInt8] {
        let (pack, gif) = try packListingExercise(trust: trust)
        guard let hash = gif else { throw .noGIF(exercise: id) }
        guard let posters = pack.posters else {
            throw .unreadable(location: source, detail: "pack \(pack.name) has no posters pack (format 1.0, or output.posters is empty)")
        }
        guard case .file(let path) = try PackIndexSource(location: .file(source)).packLocation(for: posters) else {
            throw .unreadable(location: source, detail: "not a local index")
        }
        return try PosterPackReader(path: path, posters: posters).poster(size: size, gifSHA256: hash)
    }

    /// The index is read by the same loader as every other command (64 MiB cap, regular files only,
    /// validated); with trusted keys, its signature beside it must verify first.
    private func gifThroughIndex(trust: IndexTrust?) throws(PackClientError) -> [UInt8] {
        let (pack, gif) = try packListingExercise(trust: trust, formats: format.formats)
        guard gif != nil else { throw .noGIF(exercise: id) }
        guard case .file(let path) = try PackIndexSource(location: .file(source)).packLocation(for: pack) else {
            throw .unreadable(location: source, detail: "not a local index")
        }
        return try PackEntryReader(path: path, pack: pack).gif(forExercise: id)
    }

    /// The pack of the index at `source` that gives the exercise its GIF (the first of packs[] that
    /// lists it, or with --resolution the rendition ``RenditionChoice`` picks) and that GIF's hash.
    /// The index is read by the same loader as every other command (64 MiB cap, regular files only,
    /// validated); with trusted keys, its signature beside it must verify first.
    /// With `formats` preferring WebP (format 1.4), that pack's WebP pack, when it lists the exercise.
    private func packListingExercise(trust: IndexTrust?, formats: [ImageFormat] = [.gif]) throws(PackClientError) -> (PackDescription, String?) {
        let index = if let trust { try trust.verifyFile(source) } else { try PackIndexSource.loadFile(source) }
        guard let found = FormatChoice.pack(forExercise: id, in: index, pixels: resolution, formats: formats) else {
            throw .unknownExercise(id)
        }
        return found
    }
}

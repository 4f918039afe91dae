import Foundation
import GifPack
import GifPackClient
import GifPackHTTP
import GifPackSystem
import GifPackIndexReader

/// One side of `gifpack review` (an output folder, an index file or an index URL), read through the
/// client's own index reader and its verified pack readers.
struct ReviewSide: Sendable {
    let source: PackIndexSource
    /// The decoded index; its bytes are let go once the signer is known (18 MB at 100,000 exercises).
    let index: PackIndex
    /// Who signed it, as the page shows it.
    let signer: String

    /// A folder means its `index.json`.
    static func resolve(_ argument: String) -> String {
        if case .file(let path) = PackIndexSource(argument).location, FileSystem.isDirectory(path) {
            return path.hasSuffix("/") ? path + "index.json" : path + "/index.json"
        }
        return argument
    }

    /// Reads the index (and with `trust` verifies it) and names its signer.
    static func load(_ argument: String, trust: IndexTrust?, client: HTTPClient?) async throws -> ReviewSide {
        let source = PackIndexSource(resolve(argument))
        if trust == nil, case .file(let path) = source.location {
            // Read as it is decoded, never whole (``PackIndexSource/streamFile(_:limits:)``); its
            // signature, if any, is found by the hash of exactly those bytes.
            let (index, sha256) = try await BlockingWork.run("gifpack.index") { () throws(PackClientError) in
                try PackIndexSource.streamFile(path, limits: localLimits)
            }
            let signer =
                try await source.loadSignature(forSHA256: sha256, client: client)
                .map { "key \(try Self.keyID($0)) (not verified: no --trusted-key)" } ?? "unsigned"
            return ReviewSide(source: source, index: index, signer: signer)
        }
        let limits = if case .file = source.location { localLimits } else { PackLimits.standard }
        guard case .modified(let fetched) = try await source.load(ifChangedFrom: nil, trust: trust, client: client, limits: limits) else {
            throw PackClientError.unreadable(location: source.description, detail: "the server answered 304 to a plain request")
        }
        var signer = "unsigned"
        if let trust, let signature = fetched.signature {
            signer = "key \(try Self.keyID(signature)) (verified with \(trust.keys.count) trusted key(s))"
        } else if let signature = try await source.loadSignature(for: fetched.bytes, client: client) {
            signer = "key \(try Self.keyID(signature)) (not verified: no --trusted-key)"
        }
        return ReviewSide(source: source, index: fetched.index, signer: signer)
    }

    private static func keyID(_ signature: Data) throws -> String {
        Minisign.keyIDText(try MinisignSignature(text: String(decoding: signature, as: UTF8.self)).keyID)
    }

    /// The limits for a side on this machine's disk: an output the operator built. A catalog is
    /// read one exercise at a time (``PackEntryReader/streamCatalog(_:)``), so its size costs time,
    /// not memory: the client's 64 MiB catalog cap (a one-pack output of 100,000 exercises has a
    /// 109 MB catalog) is lifted to the largest pack, for the index's rules as for the reader; the
    /// other caps stay. A remote side (an index
    /// URL: untrusted) keeps the client's limits, as an app's install would.
    static let localLimits: PackLimits = {
        var limits = PackLimits.standard
        limits.maxCatalogBytes = limits.maxPackBytes
        return limits
    }()

    /// The side as the page reads it: local pack files opened where they are, remote packs
    /// downloaded (verified) into `downloads` first. A posters pack is read only from a local side.
    func release(downloads: String, client: HTTPClient?) async -> ReviewRelease {
        var packs: [String: Result<PackEntryReader, PackClientError>] = [:]
        var posters: [String: Result<PosterPackReader, PackClientError>] = [:]
        let downloader = PackDownloader(directory: downloads, client: client)
        for pack in index.packs {
            do throws(PackClientError) {
                switch try source.packLocation(for: pack) {
                case .file(let local):
                    packs[pack.name] = .success(try PackEntryReader(path: local, pack: pack, limits: Self.localLimits))
                case .url:
                    packs[pack.name] = .success(try PackEntryReader(path: try await downloader.fetch(pack, from: source).path, pack: pack))
                }
            } catch {
                packs[pack.name] = .failure(error)
            }
            // Posters are read from local folders only (a remote side's tiles show the GIF itself).
            if let description = pack.posters, case .file(let path)? = try? source.packLocation(for: description) {
                do throws(PackClientError) {
                    posters[pack.name] = .success(try PosterPackReader(path: path, posters: description))
                } catch {
                    posters[pack.name] = .failure(error)
                }
            }
        }
        // The WebP renditions (format 1.4) of a local side, shown beside their GIFs.
        for pack in index.formatPacks ?? [] where pack.format == .webp {
            guard case .file(let local)? = try? source.packLocation(for: pack) else { continue }
            do throws(PackClientError) {
                packs[pack.name] = .success(try PackEntryReader(path: local, pack: pack, limits: Self.localLimits))
            } catch {
                packs[pack.name] = .failure(error)
            }
        }
        // A local output's report.json says why exercises have no GIF.
        var reasons: [String: String] = [:]
        if case .file(let path) = source.location { reasons = ReviewRelease.missingReasons(reportAt: PathText.parent(path) + "/report.json") }
        return ReviewRelease(
            index: index, location: source.description, signer: signer,
            content: ReaderContent(packs: packs, posters: posters), missingReasons: reasons)
    }
}

/// ``ReleaseContent`` over the client's verified readers.
struct ReaderContent: ReleaseContent {
    let packs: [String: Result<PackEntryReader, PackClientError>]
    let posters: [String: Result<PosterPackReader, PackClientError>]

    private func reader(_ pack: PackDescription) throws -> PackEntryReader {
        guard let reader = packs[pack.name] else { throw PackClientError.unreadable(location: pack.file, detail: "not opened") }
        return try reader.get()
    }

    func catalogExercises(of pack: PackDescription, _ body: (PackExercise) throws -> Void) throws {
        try reader(pack).streamCatalog(body)
    }

    func gif(sha256: String, in pack: PackDescription) throws -> [UInt8] { try reader(pack).gif(sha256: sha256) }

    func poster(size: Int, gifSHA256: String, in pack: PackDescription) throws -> [UInt8]? {
        guard let reader = posters[pack.name] else { return nil }
        return try reader.get().poster(size: size, gifSHA256: gifSHA256)
    }
}

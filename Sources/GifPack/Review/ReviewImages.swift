import Crypto
import Foundation
import GifPackSystem

/// The images a review page shows, written once each under `<dir>/img/` and named by their
/// SHA-256 (`img/<sha256>.gif`): GIFs (their index hash, checked by the reader), posters and
/// decoded BlurHashes (the hash of their bytes). Nothing from the API becomes a path. What cannot
/// be read is remembered (the tile says so) and never stops the page.
///
/// Memory: a set of the names written and two small maps (GIF hash → poster and BlurHash names),
/// a few hundred bytes per GIF; each image's bytes are held only while it is written.
final class ReviewImages {
    let directory: String
    private var written: Set<String> = []
    private var posterNames: [String: String?] = [:]
    private var blurNames: [String: String?] = [:]
    private(set) var unreadable: [String] = []

    init(directory: String) throws(FileSystemError) {
        self.directory = directory
        try FileSystem.createDirectory("\(directory)/img")
    }

    /// The page-relative path of the exercise's GIF, written from its pack; nil when unreadable.
    func gif(_ exercise: ReviewExercise, of release: ReviewRelease) -> String? {
        guard let hash = exercise.gifSHA256, let pack = release.index.pack(named: exercise.pack), Self.isHash(hash) else { return nil }
        if written.contains(hash) { return Self.path(hash) }
        do {
            try store(try release.content.gif(sha256: hash, in: pack), named: hash)
            return Self.path(hash)
        } catch {
            unreadable.append("GIF \(hash) of pack \(pack.name): \(error)")
            return nil
        }
    }

    /// The page-relative path of the exercise's WebP rendition (format 1.4: its pack's
    /// `formatPacks[]` entry of format webp, when the release has it at hand), written from that
    /// pack as `img/<sha256>.webp`; nil without one, or where the rendition lists the GIF itself.
    func webp(_ exercise: ReviewExercise, of release: ReviewRelease) -> String? {
        guard let pack = release.index.pack(named: exercise.pack), let webpPack = release.index.formatPack(.webp, for: pack),
            let hash = webpPack.exercises.first(where: { $0.id == exercise.id })?.gif, Self.isHash(hash),
            webpPack.gifs.first(where: { $0.sha256 == hash })?.format == .webp
        else { return nil }
        let path = Self.path(hash, extension: "webp")
        if written.contains(path) { return path }
        do {
            try store(try release.content.gif(sha256: hash, in: webpPack), named: hash, extension: "webp")
            return path
        } catch {
            unreadable.append("WebP \(hash) of pack \(webpPack.name): \(error)")
            return nil
        }
    }

    /// The GIF's smallest poster (format 1.2), written under its own hash; nil without one.
    func poster(_ exercise: ReviewExercise, of release: ReviewRelease) -> String? {
        guard let hash = exercise.gifSHA256, let pack = release.index.pack(named: exercise.pack),
            let size = pack.posters?.sizes.min()
        else { return nil }
        let key = "\(release.location)\u{0}\(hash)"
        if let known = posterNames[key] { return known.map(Self.path) }
        var name: String?
        do {
            if let bytes = try release.content.poster(size: size, gifSHA256: hash, in: pack) { name = try store(bytes) }
        } catch {
            unreadable.append("poster of GIF \(hash) in pack \(pack.name): \(error)")
        }
        posterNames[key] = name
        return name.map(Self.path)
    }

    /// The exercise's BlurHash decoded as an app draws it (32 px on the longer side, scaled up by
    /// the page), as a small GIF; nil without a hash or when it does not decode.
    func blurHash(_ gif: GIFMetadata?) -> String? {
        guard let gif, let hash = gif.blurHash else { return nil }
        let key = "\(hash)\u{0}\(gif.width)x\(gif.height)"
        if let known = blurNames[key] { return known.map(Self.path) }
        var name: String?
        do {
            let size = BlurHashDecoder.size(width: gif.width, height: gif.height)
            let image = try BlurHashDecoder.decode(hash, width: size.width, height: size.height)
            name = try store(try PosterEncoder.encode(image))
        } catch {
            unreadable.append("BlurHash of GIF \(gif.sha256): \(error)")
        }
        blurNames[key] = name
        return name.map(Self.path)
    }

    /// Stores bytes under the hash of their content; returns the name.
    @discardableResult
    func store(_ bytes: [UInt8]) throws -> String {
        let name = Hex.lowercase(SHA256.hash(data: bytes))
        try store(bytes, named: name)
        return name
    }

    private func store(_ bytes: [UInt8], named name: String, extension suffix: String = "gif") throws {
        guard written.insert(suffix == "gif" ? name : Self.path(name, extension: suffix)).inserted else { return }
        let path = "\(directory)/img/\(name).\(suffix)"
        if FileSystem.regularFileSize(path) == Int64(bytes.count) { return }
        // A page is a report, not a publication: no fsync per image; the rename keeps a half
        // written image from ever having the final name.
        let temporary = FileSystem.temporaryPath(beside: path)
        do {
            let file = try NewFile(path: temporary, exclusive: true)
            try file.append(bytes)
            try file.finish(sync: false)
            try FileSystem.move(temporary, to: path)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }

    static func path(_ name: String) -> String { path(name, extension: "gif") }

    static func path(_ name: String, extension suffix: String) -> String { "img/\(name).\(suffix)" }

    /// 64 lowercase hex digits: the only names an image gets.
    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

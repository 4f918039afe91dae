import Foundation

/// A build's output directory, checked before anything is uploaded: `index.json` decodes, every
/// pack file it names (packs and their posters packs) sits under `packs/` with the size and SHA-256
/// the index gives; its `index.json.zst` is used when it decodes to the index, else one is made.
struct PublishSource: Sendable {
    let directory: String
    let index: PackIndex
    let indexBytes: [UInt8]
    /// `index.json.minisig`, when the build signed the index.
    let signature: [UInt8]?
    /// `report.json`, when present (uploaded only with `--with-report`).
    let report: [UInt8]?
    /// `index.json.zst`: the build's copy when it decodes to ``indexBytes``, else made anew.
    let compressedIndex: [UInt8]
    /// True when `--from` had no copy that matches its index (a build killed before writing it, or
    /// an older gifpack's output) and ``compressedIndex`` was made here.
    let compressedIndexMade: Bool

    static func load(_ directory: String) async throws(PublishError) -> PublishSource {
        let indexPath = "\(directory)/index.json"
        guard let bytes = try await readBounded(indexPath, maxBytes: PublishFileReader.maxIndexBytes) else {
            throw .badSource("\(directory) is not a gifpack output directory: \(FileSystem.exists(directory) ? "it has no index.json" : "it does not exist"); nothing was uploaded")
        }
        let index: PackIndex
        do { index = try BuilderIndexReader.decode(bytes) } catch {
            throw .badSource("\(indexPath): \(error); nothing was uploaded")
        }
        for pack in index.packFiles {
            guard isPackKey(pack.file) else {
                throw .badSource("\(indexPath) names pack file \"\(TerminalText.escaped(pack.file, maxScalars: 120))\", which is not packs/<name>; nothing was uploaded")
            }
            let path = "\(directory)/\(pack.file)"
            guard let size = FileSystem.fileSize(path) else {
                throw .badSource("\(path) is missing (index.json names it); nothing was uploaded")
            }
            guard size == pack.bytes else {
                throw .badSource("\(path) has \(size) bytes, index.json says \(pack.bytes); nothing was uploaded")
            }
            let hash: String?
            do { hash = try await BlockingWork.run { try StreamingSHA256.file(at: path).sha256 } } catch { hash = nil }
            guard hash == pack.sha256 else {
                throw .badSource("\(path) does not match index.json (SHA-256 \(hash ?? "unreadable") instead of \(pack.sha256)); nothing was uploaded")
            }
        }
        let signature = try await readBounded(SignatureLocation.beside(indexPath), maxBytes: PublishFileReader.maxSignatureBytes)
        let report = try await readBounded("\(directory)/report.json", maxBytes: PublishFileReader.maxReportBytes)
        if let signature, (try? MinisignSignature(text: String(decoding: signature, as: UTF8.self))) == nil {
            throw .badSource("\(SignatureLocation.beside(indexPath)) is not a minisign signature; nothing was uploaded")
        }
        let copy = try await readBounded(CompressedIndex.beside(indexPath), maxBytes: PublishFileReader.maxIndexBytes)
        let compressed: [UInt8]
        let made: Bool
        if IndexCompression.matches(copy, index: bytes), let copy {
            (compressed, made) = (copy, false)
        } else {
            do {
                compressed = try await BlockingWork.run("gifpack.publish-compress") { () throws(IndexCompression.Failure) in
                    try IndexCompression.compress(bytes)
                }
            } catch { throw .badSource("cannot compress \(indexPath): \(error); nothing was uploaded") }
            made = true
        }
        return PublishSource(
            directory: directory, index: index, indexBytes: bytes, signature: signature,
            report: report, compressedIndex: compressed, compressedIndexMade: made)
    }

    /// A `--from` file (``PublishFileReader``, on a thread of its own), nil when it does not exist;
    /// a refusal is a bad source (exit 2) naming the file and why.
    static func readBounded(_ path: String, maxBytes: Int64) async throws(PublishError) -> [UInt8]? {
        do {
            return try await BlockingWork.run("gifpack.publish-read") { () throws(PublishFileReader.Refusal) in
                try PublishFileReader.read(path, maxBytes: maxBytes)
            }
        } catch { throw .badSource("\(error); nothing was uploaded") }
    }

    /// `packs/<file name>` with a plain file name.
    static func isPackKey(_ key: String) -> Bool {
        guard key.hasPrefix("packs/") else { return false }
        let name = key.dropFirst("packs/".count)
        return !name.isEmpty && !name.hasPrefix(".") && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
    }
}

import Foundation
import GifPackHTTP
import GifPackIndexReader

/// The live index a build continues from (`--previous-index`): its versions and sequence count as
/// written, and when it is signed and still current its bytes are kept.
///
/// ```swift
/// let previous = try await PreviousIndex.load("https://cdn.example.com/gifpack/index.json", client: client)
/// print(previous.index.sequence ?? 0)
/// ```
struct PreviousIndex: Sendable {
    var index: PackIndex
    var bytes: [UInt8]
    /// Its signature (`signatures/<sha256>.minisig`, else `index.json.minisig`), when there is one.
    var signature: [UInt8]?

    /// Reads a path or fetches an http(s) URL with the client's reader (``PackIndexSource``: over
    /// HTTP `index.json.zst` first, redirects followed, the format's rules checked), with its
    /// signature found as clients find it. Anything but a readable, decodable index is an error: a
    /// build must not lose track of what is live.
    static func load(_ location: String, client: HTTPClient) async throws(IndexWriterError) -> PreviousIndex {
        let source = PackIndexSource(location)
        do {
            let fetched = try await source.loadFetched(
                trust: nil, installedSequence: nil, client: client,
                limits: BuilderIndexReader.limits)
            let signature = try await source.loadSignature(for: fetched.bytes, client: client)
            return PreviousIndex(index: fetched.index, bytes: [UInt8](fetched.bytes), signature: signature.map { [UInt8]($0) })
        } catch {
            if case .unreadable(let at, let detail) = error { throw .previousIndex(location: at, detail: detail) }
            throw .previousIndex(location: location, detail: error.description)
        }
    }
}

/// Why the index could not be written.
enum IndexWriterError: Error, CustomStringConvertible {
    case previousIndex(location: String, detail: String)
    case signing(String)

    var description: String {
        switch self {
        case .previousIndex(let location, let detail):
            "cannot read the previous index \(location): \(detail); index.json was not written (versions continue from it, so the build does not guess)"
        case .signing(let detail): "cannot sign the index: \(detail)"
        }
    }
}

/// Writes `index.json`, for a signed build `index.json.minisig`, then `index.json.zst`.
///
/// Unsigned: the index is replaced (atomically) only when its bytes change, and a signature left
/// by an earlier signed build is removed. Signed: the index carries `sequence` and `expires`. An
/// index that lists the same packs as the current one — the output directory's, else the previous
/// index's — is kept byte for byte with its signature while that signature verifies with this key
/// and at least half of `expires_after` remains; otherwise it is signed anew with the next sequence
/// (the highest of the state's, the output directory's and the previous index's, plus one) and an
/// expiry `expires_after` from now. The index is renamed into place first, then its signature.
///
/// ```swift
/// let summary = try IndexWriter(outputDirectory: "dist").write(index, localIndex: nil, signing: manifest.signing,
///                                                              previous: nil, state: state, now: Date())
/// ```
struct IndexWriter: Sendable {
    let outputDirectory: String

    var indexPath: String { "\(outputDirectory)/index.json" }
    var signaturePath: String { SignatureLocation.beside(indexPath) }

    /// `localIndex`: the output directory's index as the build read it (under its lock), nil when
    /// absent or unreadable. Then `index.json.zst` beside the index is made to match it
    /// (``IndexCompression/ensureCopy(beside:maxIndexBytes:)``): last, so a build killed before it
    /// leaves a stale copy that the next build (or publish) replaces.
    func write(
        _ unsigned: PackIndex, localIndex: PackIndex?, signing: SigningSettings?, previous: PreviousIndex?,
        state: BuildState, now: Date
    ) throws -> BuildReport.IndexSummary {
        let summary = try writeIndex(unsigned, localIndex: localIndex, signing: signing, previous: previous, state: state, now: now)
        try IndexCompression.ensureCopy(beside: indexPath)
        return summary
    }

    private func writeIndex(
        _ unsigned: PackIndex, localIndex: PackIndex?, signing: SigningSettings?, previous: PreviousIndex?,
        state: BuildState, now: Date
    ) throws -> BuildReport.IndexSummary {
        guard let signing else {
            // Neither the new index nor the file on disk is held whole (an index of 100,000
            // exercises is about 14 MB): the new one is hashed as it is encoded, the old one as it
            // is read, and the new one is encoded again, into the file, only when they differ.
            var digest = StreamingSHA256()
            var size: Int64 = 0
            unsigned.encode { piece in
                digest.update(piece)
                size += Int64(piece.count)
            }
            let local: (size: Int64, sha256: String)? = FileSystem.exists(indexPath) ? try StreamingSHA256.file(at: indexPath) : nil
            let written = local.map { $0.size != size || $0.sha256 != digest.hex } ?? true
            if written {
                try FileSystem.writeAtomically(to: indexPath, beforeRename: { CrashPoint.reach(.beforeIndexRename) }) { file throws(FileSystemError) in
                    var failure: FileSystemError?
                    unsigned.encode { piece in
                        guard failure == nil else { return }
                        do throws(FileSystemError) { try file.append(piece) } catch { failure = error }
                    }
                    if let failure { throw failure }
                }
            }
            if FileSystem.exists(signaturePath) {
                FileSystem.remove(signaturePath)
                try FileSystem.fsyncDirectory(outputDirectory)
            }
            return .init(written: written, signed: false)
        }

        let localBytes = try FileSystem.readAll(indexPath)
        let localSignature = try FileSystem.readAll(signaturePath)
        let local = localBytes.map { (bytes: $0, signature: localSignature, index: localIndex, isLocal: true) }
        let live = previous.map { (bytes: $0.bytes, signature: $0.signature, index: Optional($0.index), isLocal: false) }
        let halfLife = Double(signing.expiresAfter.components.seconds) / 2
        for candidate in [local, live].compactMap({ $0 }) {
            guard let signatureBytes = candidate.signature, let index = candidate.index,
                let sequence = index.sequence, let expiry = index.expiryDate, let expires = index.expires,
                candidate.isLocal
                    ? Self.sameBytes(candidate.bytes, unsigned, sequence: sequence, expires: expires)
                    : Self.sameContent(index, unsigned),
                expiry.timeIntervalSince(now) >= halfLife,
                let signature = try? MinisignSignature(text: String(decoding: signatureBytes, as: UTF8.self)),
                (try? signing.secretKey.publicKey.verify(signature, of: candidate.bytes)) != nil
            else { continue }
            if !candidate.isLocal {
                try FileSystem.writeAtomically(candidate.bytes, to: indexPath) { CrashPoint.reach(.beforeIndexRename) }
                try FileSystem.writeAtomically(signatureBytes, to: signaturePath)
            }
            try state.recordSignedIndex(sequence: sequence, sha256: try StreamingSHA256.file(at: indexPath).sha256, expires: expires, at: now)
            return .init(
                written: !candidate.isLocal, signed: true, keyID: signing.secretKey.publicKey.keyIDText,
                sequence: sequence, expires: expires)
        }

        let highest = [try state.highestIndexSequence(), localIndex?.sequence, previous?.index.sequence].compactMap { $0 }.max() ?? 0
        var signed = unsigned
        signed.sequence = highest + 1
        signed.expires = IndexTimestamp.format(now.addingTimeInterval(Double(signing.expiresAfter.components.seconds)))
        let bytes = signed.encodedBytes()
        let signature: MinisignSignature
        do {
            signature = try signing.secretKey.sign(bytes, trustedComment: "timestamp:\(Int64(now.timeIntervalSince1970))\tfile:index.json\thashed")
        } catch {
            throw IndexWriterError.signing("\(error)")
        }
        try FileSystem.writeAtomically(bytes, to: indexPath) { CrashPoint.reach(.beforeIndexRename) }
        try FileSystem.writeAtomically(Array(signature.fileText.utf8), to: signaturePath)
        try state.recordSignedIndex(
            sequence: signed.sequence!, sha256: try StreamingSHA256.file(at: indexPath).sha256,
            expires: signed.expires!, at: now)
        return .init(
            written: true, signed: true, keyID: signing.secretKey.publicKey.keyIDText, sequence: signed.sequence,
            expires: signed.expires)
    }

    /// True when `bytes` are those `unsigned` encodes to once given `sequence` and `expires`: the
    /// check for the output directory's own index, which the build reads without its exercise
    /// lists (both are written by ``IndexJSONWriter``, so equal content means equal bytes).
    static func sameBytes(_ bytes: [UInt8], _ unsigned: PackIndex, sequence: Int, expires: String) -> Bool {
        var signed = unsigned
        (signed.sequence, signed.expires) = (sequence, expires)
        let encoded = signed.encodedBytes()
        return encoded.count == bytes.count && encoded == bytes
    }

    /// Equal but for `sequence` and `expires`.
    static func sameContent(_ a: PackIndex, _ b: PackIndex) -> Bool {
        var a = a
        var b = b
        (a.sequence, a.expires, b.sequence, b.expires) = (nil, nil, nil, nil)
        return a == b
    }
}

import Crypto
import Foundation
import GifPackFormat
import GifPackSystem
import GifPackTransport

/// Why an index was refused by a client that checks signatures. ``reason`` is a stable code.
///
/// ```swift
/// catch .untrusted(let refusal) { print(refusal.reason.rawValue) }   // "expired"
/// ```
package struct IndexRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Reason: String, Sendable, CaseIterable {
        /// No `index.json.minisig` beside the index, or the signed index lacks `sequence`/`expires`.
        case unsigned = "unsigned"
        /// The signature file is not a minisign Ed25519 signature.
        case malformedSignature = "malformed-signature"
        /// Signed by a key that is not trusted.
        case unknownKey = "unknown-key"
        /// The signature does not match the index (changed after signing) or its trusted comment.
        case badSignature = "bad-signature"
        /// The index's `sequence` is lower than that of the installed generation.
        case rollback = "rollback"
        /// The index's `expires` has passed.
        case expired = "expired"
    }

    package var reason: Reason
    /// Where the index came from.
    package var index: String
    package var detail: String

    package init(_ reason: Reason, index: String, detail: String) {
        self.reason = reason
        self.index = index
        self.detail = detail
    }

    /// One line, without any URL's credentials (``URLCredentials``).
    package var description: String { URLCredentials.redacted("index \(index): \(reason.rawValue): \(detail)") }
}

/// The public keys a client trusts to sign `index.json`, and the clock expiry is judged by.
///
/// With an ``IndexTrust``, ``PackInstaller``, ``PackVerifier`` and the `gifpack` commands accept an
/// index only when `index.json.minisig` beside it is a valid minisign signature by one of `keys`
/// (several keys allow a rotation), the index carries `sequence` and `expires`, `expires` has not
/// passed, and (when installing) `sequence` is not below the one the installed generation came
/// from. The pack hashes are inside the signed bytes, so a pack changed after signing fails its
/// SHA-256 check as before.
///
/// ```swift
/// let trust = try IndexTrust(keyFiles: [Bundle.main.path(forResource: "gifpack", ofType: "pub")!])
/// var installer = PackInstaller(cacheDirectory: cacheDir)
/// installer.trust = trust
/// ```
package struct IndexTrust: Sendable {
    package var keys: [MinisignPublicKey]
    /// The time expiry is judged by; nil: the clock.
    package var now: Date?

    package init(keys: [MinisignPublicKey], now: Date? = nil) {
        self.keys = keys
        self.now = now
    }

    /// Reads minisign public key files. A key file is named by the app or the operator, so a
    /// symbolic link there (a Kubernetes secret mount is a chain of them) is resolved first; what
    /// it leads to must be a regular file, as everywhere (a FIFO or device is refused at once).
    package init(keyFiles: [String], now: Date? = nil) throws(PackClientError) {
        var keys: [MinisignPublicKey] = []
        for path in keyFiles {
            let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let data: Data
            do { data = try PackIndexSource.readFile(resolved, maxBytes: 4096) } catch {
                guard case .unreadable(_, let detail) = error else { throw error }
                throw .unreadable(location: path, detail: detail)
            }
            do { keys.append(try MinisignPublicKey(text: String(decoding: data, as: UTF8.self))) } catch {
                throw .unreadable(location: path, detail: "not a trusted key: \(error)")
            }
        }
        self.init(keys: keys, now: now)
    }

    /// Checks `signature` over `indexBytes` and decodes the index; `installedSequence` is the
    /// sequence of what is installed (nil: nothing, or installed without a signature).
    /// The verified bytes are then decoded and checked like any index (``PackIndexSource``'s rules).
    package func verify(
        indexBytes: Data, signature: Data?, location: String, installedSequence: Int? = nil,
        limits: PackLimits = .standard
    ) throws(PackClientError) -> PackIndex {
        try verify(
            indexBytes: indexBytes, signature: signature, location: location, installedSequence: installedSequence,
            limits: limits, checkRules: true)
    }

    /// Reads a local index and its signature (regular files, capped) and verifies them: the signature
    /// published under the index's hash (`signatures/<sha256>.minisig`) first, `index.json.minisig`
    /// beside it when there is none, as every other reader does.
    package func verifyFile(
        _ indexPath: String, installedSequence: Int? = nil,
        limits: PackLimits = .standard
    ) throws(PackClientError) -> PackIndex {
        try verifyFile(indexPath, installedSequence: installedSequence, limits: limits, checkRules: true)
    }

    package func verifyFile(
        _ indexPath: String, installedSequence: Int?, limits: PackLimits,
        checkRules: Bool
    ) throws(PackClientError) -> PackIndex {
        let bytes = try PackIndexSource.readFile(indexPath, maxBytes: limits.maxIndexBytes)
        let candidates = SignatureLocation.lookupOrder(indexPath, indexSHA256: Hex.lowercase(SHA256.hash(data: bytes)))
        let signature = try candidates.first { FileManager.default.fileExists(atPath: $0) }
            .map { (path: String) throws(PackClientError) -> Data in try PackIndexSource.readFile(path, maxBytes: PackIndexSource.maxSignatureBytes) }
        return try verify(
            indexBytes: bytes, signature: signature, location: indexPath, installedSequence: installedSequence,
            limits: limits, checkRules: checkRules)
    }

    /// `checkRules` false: decode only, for ``PackVerifier``, which lists every problem of the index itself.
    package func verify(
        indexBytes: Data, signature: Data?, location: String, installedSequence: Int?, limits: PackLimits,
        checkRules: Bool
    ) throws(PackClientError) -> PackIndex {
        let index = try verifySignature(
            indexBytes: indexBytes, signature: signature, location: location, limits: limits,
            checkRules: checkRules)
        try accept(index, location: location, installedSequence: installedSequence)
        return index
    }

    /// The first half of ``verify(indexBytes:signature:location:installedSequence:limits:)``: the
    /// signature over the bytes by a trusted key, then the decoding. Its result does not change with
    /// time, so it may be remembered; ``accept(_:location:installedSequence:)`` must still follow.
    package func verifySignature(
        indexBytes: Data, signature: Data?, location: String, limits: PackLimits,
        checkRules: Bool = true
    ) throws(PackClientError) -> PackIndex {
        guard let signature else {
            let remote = location.lowercased().hasPrefix("http://") || location.lowercased().hasPrefix("https://")
            throw Self.refuse(
                .unsigned, location,
                "no signature of it is published: neither signatures/<its sha256>.minisig nor "
                    + "\(PathText.lastComponent(SignatureLocation.beside(location))) is there beside it"
                    + (remote ? " (HTTP 404, 410, or 403 from a store that hides missing keys)" : "") + ", and trusted keys were given")
        }
        let parsed: MinisignSignature
        do { parsed = try MinisignSignature(text: String(decoding: signature, as: UTF8.self)) } catch {
            throw Self.refuse(.malformedSignature, location, error.description)
        }
        do { _ = try MinisignPublicKey.verify(parsed, of: indexBytes, trusting: keys) } catch {
            switch error {
            case .unknownKey: throw Self.refuse(.unknownKey, location, "\(error.description) (trusted: \(keys.map(\.keyIDText).joined(separator: ", ")))")
            case .malformed: throw Self.refuse(.malformedSignature, location, error.description)
            case .badSignature: throw Self.refuse(.badSignature, location, error.description)
            }
        }
        if checkRules { return try PackIndexSource.decode(indexBytes, limits: limits) }
        do { return try PackIndexStream.decode(indexBytes) } catch { throw .index(error) }
    }

    /// The second half: the signed index carries `sequence` and `expires`, has not expired by
    /// ``now``, and its sequence is not below `installedSequence` (whose holder `holder` names in
    /// the refusal).
    package func accept(
        _ index: PackIndex, location: String, installedSequence: Int?,
        holder: String = "the installed generation's"
    ) throws(PackClientError) {
        guard let sequence = index.sequence, let expiry = index.expiryDate else {
            throw Self.refuse(.unsigned, location, "the signed index has no sequence or expires field")
        }
        let now = self.now ?? Date()
        guard expiry > now else {
            throw Self.refuse(.expired, location, "it expired at \(index.expires!) (now \(IndexTimestamp.format(now))); the publisher has not re-signed it — a stale or frozen mirror?")
        }
        if let installedSequence, sequence < installedSequence {
            throw Self.refuse(.rollback, location, "its sequence \(sequence) is lower than \(holder) \(installedSequence)")
        }
    }

    /// The key id (``MinisignPublicKey/keyIDText``) a signature file names, nil when it is not a signature.
    package static func signerKeyID(of signature: Data?) -> String? {
        guard let signature, let parsed = try? MinisignSignature(text: String(decoding: signature, as: UTF8.self)) else { return nil }
        return Minisign.keyIDText(parsed.keyID)
    }

    /// True when a key with this id is trusted.
    package func trusts(keyID: String) -> Bool { keys.contains { $0.keyIDText == keyID } }

    package static func refuse(_ reason: IndexRefusal.Reason, _ location: String, _ detail: String) -> PackClientError {
        .untrusted(IndexRefusal(reason, index: location, detail: detail))
    }
}

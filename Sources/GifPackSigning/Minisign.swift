import Crypto
import Foundation

/// minisign's file formats for Ed25519 keys and signatures, so stock `minisign -V` verifies what
/// gifpack signs and gifpack verifies what minisign signs.
///
/// - Public key (``MinisignPublicKey``): `untrusted comment: …` then base64 of
///   `"Ed" ‖ key id (8 bytes) ‖ Ed25519 public key (32)`.
/// - Secret key (``MinisignSecretKey``): minisign's secret key file with the key *not* encrypted
///   (what `minisign -G -W` writes: KDF algorithm `"\0\0"`).
/// - Signature (``MinisignSignature``): four lines — untrusted comment, base64 of
///   `"ED" ‖ key id ‖ Ed25519(BLAKE2b-512(file))` (or legacy `"Ed"`: the file signed as is),
///   `trusted comment: …`, and base64 of Ed25519(signature ‖ trusted comment).
///
/// ```swift
/// let secret = MinisignSecretKey.generate()
/// let signature = try secret.sign(indexBytes, trustedComment: "timestamp:1700000000\tfile:index.json\thashed")
/// try secret.publicKey.verify(signature, of: indexBytes)
/// ```
package enum Minisign {
    /// Length of a key id.
    package static let keyIDLength = 8

    /// The key id as minisign prints it: the 8 bytes read as a little-endian integer, in upper-case hex.
    package static func keyIDText(_ keyID: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for byte in keyID.reversed() { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// The base64 payload of a minisign text file: the line after `untrusted comment:` (or the
    /// only line when the text holds just the base64 string). Lines end with LF, CRLF or CR.
    static func payloadLine(_ text: String) -> String? {
        // Split on Unicode scalars: a Swift `Character` joins CR LF into one grapheme, which is
        // neither "\n" nor "\r".
        let lines = text.unicodeScalars.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { String(String.UnicodeScalarView($0)).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let payload = lines.filter { !$0.hasPrefix("untrusted comment:") }
        return payload.count == 1 ? payload[0] : nil
    }

    /// The lines of a signature file as minisign reads them (`fgets`, then its `trim`): split at
    /// LF, each line without its trailing CRs, so LF and CRLF files read alike, with or without a
    /// final line ending. A CR alone does not end a line (minisign refuses such files too).
    static func signatureLines(_ text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = line
            while line.last == "\r" { line = line.dropLast() }
            return String(String.UnicodeScalarView(line))
        }
    }
}

/// Why a minisign key or signature was refused. Never holds key material.
package enum MinisignError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a key or signature of the expected kind; the text says what was found instead.
    case malformed(String)
    /// The signature was made by a key not among the trusted ones (its key id).
    case unknownKey(keyID: String)
    /// The signature or the trusted-comment signature does not verify.
    case badSignature(String)

    package var description: String {
        switch self {
        case .malformed(let detail): detail
        case .unknownKey(let keyID): "signed by key \(keyID), which is not a trusted key"
        case .badSignature(let detail): detail
        }
    }
}

/// An Ed25519 public key in minisign's format (`minisign.pub`).
///
/// ```swift
/// let key = try MinisignPublicKey(text: String(contentsOfFile: "gifpack.pub", encoding: .utf8))
/// print(key.keyIDText)   // F04F51FA031D372D
/// ```
package struct MinisignPublicKey: Sendable, Equatable {
    package let keyID: [UInt8]
    package let rawKey: [UInt8]

    package init(keyID: [UInt8], rawKey: [UInt8]) {
        self.keyID = keyID
        self.rawKey = rawKey
    }

    /// Parses a public key file (or its base64 line alone).
    package init(text: String) throws(MinisignError) {
        guard let line = Minisign.payloadLine(text), let bytes = Data(base64Encoded: line).map(Array.init) else {
            throw .malformed("not a minisign public key (expected an \"untrusted comment:\" line and one base64 line)")
        }
        if bytes.count == MinisignSecretKey.encodedLength {
            throw .malformed("this is a secret key, not a public key")
        }
        guard bytes.count == 42, bytes[0] == 0x45, bytes[1] == 0x64 else {
            throw .malformed("not a minisign Ed25519 public key (\(bytes.count) bytes, expected 42 starting with \"Ed\")")
        }
        keyID = Array(bytes[2..<10])
        rawKey = Array(bytes[10..<42])
    }

    package var keyIDText: String { Minisign.keyIDText(keyID) }

    /// The public key file's text.
    package var fileText: String {
        "untrusted comment: minisign public key \(keyIDText)\n" + Data([0x45, 0x64] + keyID + rawKey).base64EncodedString() + "\n"
    }

    /// Checks `signature` over `message`: the key id, the signature (prehashed `ED` or legacy `Ed`)
    /// and the trusted comment's signature.
    package func verify(_ signature: MinisignSignature, of message: some DataProtocol) throws(MinisignError) {
        guard signature.keyID == keyID else { throw .unknownKey(keyID: Minisign.keyIDText(signature.keyID)) }
        let key: Curve25519.Signing.PublicKey
        do { key = try Curve25519.Signing.PublicKey(rawRepresentation: rawKey) } catch {
            throw .malformed("the public key \(keyIDText) is not a valid Ed25519 key")
        }
        let signed: [UInt8] = signature.isPrehashed ? BLAKE2b.hash(message) : Array(message)
        guard key.isValidSignature(signature.signature, for: signed) else {
            throw .badSignature("the signature does not match the signed file (it was changed after signing, or signed by another key with the same id)")
        }
        guard key.isValidSignature(signature.globalSignature, for: signature.signature + Array(signature.trustedComment.utf8)) else {
            throw .badSignature("the trusted comment's signature does not verify (the comment was changed)")
        }
    }

    /// Verifies with the keys of `keys` that have the signature's key id, and returns the first
    /// that verifies. A key id is only 8 bytes that anyone can choose, so two trusted keys may
    /// share one: each is tried, and the verdict does not depend on their order. When none
    /// verifies, the error is the first key's that is about the signature (`badSignature`), else
    /// the first key's.
    package static func verify(
        _ signature: MinisignSignature, of message: some DataProtocol,
        trusting keys: [MinisignPublicKey]
    ) throws(MinisignError) -> MinisignPublicKey {
        let candidates = keys.filter { $0.keyID == signature.keyID }
        guard !candidates.isEmpty else { throw .unknownKey(keyID: Minisign.keyIDText(signature.keyID)) }
        var failures: [MinisignError] = []
        for key in candidates {
            do throws(MinisignError) {
                try key.verify(signature, of: message)
                return key
            } catch {
                failures.append(error)
            }
        }
        throw failures.first { if case .badSignature = $0 { true } else { false } } ?? failures[0]
    }
}

/// An Ed25519 secret key in minisign's secret key file format, unencrypted (KDF `"\0\0"`, as
/// `minisign -G -W` writes it), so `minisign -S -s FILE` can use it too. Protect the file as you
/// would any credential. Its description never shows key material.
///
/// ```swift
/// let secret = MinisignSecretKey.generate()
/// try secret.fileText.write(toFile: "gifpack.key", atomically: true, encoding: .utf8)
/// ```
package struct MinisignSecretKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    static let encodedLength = 158

    package let keyID: [UInt8]
    private let seed: [UInt8]
    package let publicKey: MinisignPublicKey

    /// A new random key pair with a random key id.
    package static func generate() -> MinisignSecretKey {
        let key = Curve25519.Signing.PrivateKey()
        var id = SystemRandomNumberGenerator()
        let keyID = (0..<Minisign.keyIDLength).map { _ in UInt8.random(in: 0...255, using: &id) }
        return MinisignSecretKey(keyID: keyID, seed: Array(key.rawRepresentation), publicKey: Array(key.publicKey.rawRepresentation))
    }

    private init(keyID: [UInt8], seed: [UInt8], publicKey: [UInt8]) {
        self.keyID = keyID
        self.seed = seed
        self.publicKey = MinisignPublicKey(keyID: keyID, rawKey: publicKey)
    }

    /// Parses a secret key file (or its base64 line alone). An encrypted key (made by `minisign -G`
    /// without `-W`) is refused: remove its password with `minisign -C -W`… or make one with `gifpack keygen`.
    package init(text: String) throws(MinisignError) {
        guard let line = Minisign.payloadLine(text), let bytes = Data(base64Encoded: line).map(Array.init) else {
            throw .malformed("not a minisign secret key (expected an \"untrusted comment:\" line and one base64 line)")
        }
        if bytes.count == 42 { throw .malformed("this is a public key, not a secret key") }
        guard bytes.count == Self.encodedLength, bytes[0] == 0x45, bytes[1] == 0x64, bytes[4] == 0x42, bytes[5] == 0x32 else {
            throw .malformed("not a minisign Ed25519 secret key (\(bytes.count) bytes, expected \(Self.encodedLength) starting with \"Ed\")")
        }
        guard bytes[2] == 0, bytes[3] == 0 else {
            throw .malformed("the secret key is password-protected; gifpack needs an unencrypted key (gifpack keygen, or minisign -G -W)")
        }
        let keyID = Array(bytes[54..<62])
        let secret = Array(bytes[62..<126])
        let checksum = Array(bytes[126..<158])
        // minisign -W leaves the checksum zero; gifpack keygen writes it. Either way the seed must
        // give the stored public key.
        if checksum != [UInt8](repeating: 0, count: 32), checksum != Self.checksum(keyID: keyID, secret: secret) {
            throw .malformed("the secret key's checksum does not match (the file is damaged)")
        }
        let seed = Array(secret[0..<32])
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed),
            Array(key.publicKey.rawRepresentation) == Array(secret[32..<64])
        else {
            throw .malformed("the secret key is damaged (its two halves do not belong together)")
        }
        self.init(keyID: keyID, seed: seed, publicKey: Array(secret[32..<64]))
    }

    private static func checksum(keyID: [UInt8], secret: [UInt8]) -> [UInt8] {
        BLAKE2b.hash([0x45, 0x64] + keyID + secret, outputLength: 32)
    }

    /// The secret key file's text (unencrypted).
    package var fileText: String {
        let secret = seed + publicKey.rawKey
        var bytes: [UInt8] = [0x45, 0x64, 0x00, 0x00, 0x42, 0x32]
        bytes += [UInt8](repeating: 0, count: 32 + 8 + 8)  // no KDF: salt, opslimit, memlimit unused
        bytes += keyID + secret + Self.checksum(keyID: keyID, secret: secret)
        return "untrusted comment: minisign secret key (unencrypted, written by gifpack keygen)\n"
            + Data(bytes).base64EncodedString() + "\n"
    }

    /// Signs `message` the way `minisign -S` does by default: Ed25519 over its BLAKE2b-512 hash,
    /// then over the signature and the trusted comment.
    package func sign(
        _ message: some DataProtocol, trustedComment: String,
        untrustedComment: String = "signature from gifpack secret key"
    ) throws -> MinisignSignature {
        guard !trustedComment.contains(where: \.isNewline), !untrustedComment.contains(where: \.isNewline) else {
            throw MinisignError.malformed("a minisign comment must be one line")
        }
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let signature = Array(try key.signature(for: BLAKE2b.hash(message)))
        let global = Array(try key.signature(for: signature + Array(trustedComment.utf8)))
        return MinisignSignature(
            isPrehashed: true, keyID: keyID, signature: signature, untrustedComment: untrustedComment,
            trustedComment: trustedComment, globalSignature: global)
    }

    package var description: String { "<secret key \(publicKey.keyIDText)>" }
    package var debugDescription: String { description }
}

/// A `.minisig` signature file.
///
/// ```swift
/// let signature = try MinisignSignature(text: String(contentsOfFile: "index.json.minisig", encoding: .utf8))
/// try MinisignPublicKey.verify(signature, of: indexBytes, trusting: keys)
/// ```
package struct MinisignSignature: Sendable, Equatable {
    /// `ED` (BLAKE2b-512 of the file was signed) rather than legacy `Ed` (the file itself).
    package var isPrehashed: Bool
    package var keyID: [UInt8]
    package var signature: [UInt8]
    package var untrustedComment: String
    package var trustedComment: String
    package var globalSignature: [UInt8]

    package init(
        isPrehashed: Bool, keyID: [UInt8], signature: [UInt8], untrustedComment: String, trustedComment: String,
        globalSignature: [UInt8]
    ) {
        self.isPrehashed = isPrehashed
        self.keyID = keyID
        self.signature = signature
        self.untrustedComment = untrustedComment
        self.trustedComment = trustedComment
        self.globalSignature = globalSignature
    }

    package init(text: String) throws(MinisignError) {
        let lines = Minisign.signatureLines(text)
        guard lines.count >= 4, lines[0].hasPrefix("untrusted comment: "), lines[2].hasPrefix("trusted comment: "),
            lines.dropFirst(4).allSatisfy(\.isEmpty)
        else {
            throw .malformed("not a minisign signature (expected untrusted comment, signature, trusted comment, comment signature)")
        }
        guard let bytes = Data(base64Encoded: lines[1]).map(Array.init), bytes.count == 74,
            bytes[0] == 0x45, bytes[1] == 0x44 || bytes[1] == 0x64
        else {
            throw .malformed("the signature line is not a minisign Ed25519 signature")
        }
        guard let global = Data(base64Encoded: lines[3]).map(Array.init), global.count == 64 else {
            throw .malformed("the trusted comment's signature is not 64 bytes of base64")
        }
        isPrehashed = bytes[1] == 0x44
        keyID = Array(bytes[2..<10])
        signature = Array(bytes[10..<74])
        untrustedComment = String(lines[0].dropFirst("untrusted comment: ".count))
        trustedComment = String(lines[2].dropFirst("trusted comment: ".count))
        globalSignature = global
    }

    package var fileText: String {
        "untrusted comment: \(untrustedComment)\n"
            + Data([0x45, isPrehashed ? 0x44 : 0x64] + keyID + signature).base64EncodedString() + "\n"
            + "trusted comment: \(trustedComment)\n"
            + Data(globalSignature).base64EncodedString() + "\n"
    }
}

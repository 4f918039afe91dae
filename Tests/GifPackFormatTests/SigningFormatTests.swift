import Foundation
import GifPackFormat
import GifPackSigning
import Testing
@testable import GifPackTestSupport

@Suite("Signing: BLAKE2b and minisign formats", .timeLimit(.minutes(3)))
struct SigningFormatTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(.computes) func blake2bMatchesRFC7693AndReferenceVectors() {
        #expect(Self.hex(BLAKE2b.hash([UInt8]())) == "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce")
        // RFC 7693 appendix A.
        #expect(Self.hex(BLAKE2b.hash(Array("abc".utf8))) == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        // Block boundaries and a shorter output (Python's hashlib.blake2b).
        let bytes = (0..<1000).map { UInt8($0 % 256) }
        #expect(Self.hex(BLAKE2b.hash(bytes[..<128])) == "2319e3789c47e2daa5fe807f61bec2a1a6537fa03f19ff32e87eecbfd64b7e0e8ccff439ac333b040f19b0c4ddd11a61e24ac1fe0f10a039806c5dcc0da3d115")
        #expect(Self.hex(BLAKE2b.hash(bytes[..<129])) == "f59711d44a031d5f97a9413c065d1e614c417ede998590325f49bad2fd444d3e4418be19aec4e11449ac1a57207898bc57d76a1bcf3566292c20c683a5c4648f")
        #expect(Self.hex(BLAKE2b.hash(bytes)) == "9fe687126e6566313081b43167cbfa0b4f721b45a5afd4076af327765d63a616478ffbd1cd5fbe4033e8638b8bcf8de6b3978b54a30f1d9d8d68fbe66c2b74cf")
        #expect(Self.hex(BLAKE2b.hash(bytes, outputLength: 32)) == "c636324d47d89f2b2434dc2c994100663fbbaea880ff020fc5de89dd0f77a1ec")
        // Streaming in uneven pieces gives the same digest.
        var hasher = BLAKE2b()
        for piece in stride(from: 0, to: 1000, by: 37) { hasher.update(bytes[piece..<min(piece + 37, 1000)]) }
        #expect(Self.hex(hasher.finalize()) == Self.hex(BLAKE2b.hash(bytes)))
    }

    @Test func stockMinisignVerifiesOurSignatureAndSignsWithOurKey() async throws {
        let workspace = try TemporaryDirectory()
        let secret = MinisignSecretKey.generate()
        let keyPath = try workspace.write(secret.fileText, to: "gifpack.key")
        let publicPath = try workspace.write(secret.publicKey.fileText, to: "gifpack.pub")
        let message = Array("{\"packs\":[]}\n".utf8) + (0..<5000).map { UInt8($0 % 251) }
        try Data(message).write(to: URL(fileURLWithPath: workspace.file("index.json")))

        // Ours, checked by stock minisign.
        let signature = try secret.sign(message, trustedComment: "timestamp:1700000000\tfile:index.json\thashed")
        _ = try workspace.write(signature.fileText, to: "index.json.minisig")
        let verified = try await run("/usr/bin/minisign", ["-Vm", workspace.file("index.json"), "-p", publicPath])
        #expect(verified.status == 0, "\(verified.output)\(verified.error)")
        #expect(verified.output.contains("timestamp:1700000000\tfile:index.json\thashed"))

        // Stock minisign signs with our (unencrypted) secret key file, prehashed and legacy; we verify both.
        for legacy in [false, true] {
            let signed = try await run(
                "/usr/bin/minisign",
                ["-S", "-s", keyPath, "-m", workspace.file("index.json"), "-t", "made by minisign"]
                    + (legacy ? ["-l"] : []))
            #expect(signed.status == 0, "\(signed.error)")
            let text = try String(contentsOfFile: workspace.file("index.json.minisig"), encoding: .utf8)
            let theirs = try MinisignSignature(text: text)
            #expect(theirs.isPrehashed == !legacy)
            #expect(theirs.trustedComment == "made by minisign")
            try secret.publicKey.verify(theirs, of: message)
            // One changed byte, or a changed trusted comment, fails.
            var changed = message
            changed[3] ^= 1
            #expect(throws: MinisignError.self) { try secret.publicKey.verify(theirs, of: changed) }
            var forged = theirs
            forged.trustedComment = "made by someone else"
            #expect(throws: MinisignError.self) { try secret.publicKey.verify(forged, of: message) }
        }
        // A key with another id is unknown.
        let other = MinisignSecretKey.generate().publicKey
        #expect(throws: MinisignError.unknownKey(keyID: secret.publicKey.keyIDText)) {
            _ = try MinisignPublicKey.verify(signature, of: message, trusting: [other])
        }
    }

    @Test(.computes) func keyFilesRoundTripAndRefuseTheWrongKind() throws {
        let secret = MinisignSecretKey.generate()
        let parsed = try MinisignSecretKey(text: secret.fileText)
        #expect(parsed.publicKey == secret.publicKey)
        #expect(try MinisignPublicKey(text: secret.publicKey.fileText) == secret.publicKey)
        #expect(secret.publicKey.fileText.hasPrefix("untrusted comment: minisign public key \(secret.publicKey.keyIDText)\n"))
        // The description never shows key material.
        let base64 = secret.fileText.split(separator: "\n")[1]
        #expect(!"\(secret)".contains(base64) && "\(secret)".contains(secret.publicKey.keyIDText))

        #expect { try MinisignSecretKey(text: secret.publicKey.fileText) } throws: { error in
            "\(error)".contains("this is a public key, not a secret key")
        }
        #expect { try MinisignPublicKey(text: secret.fileText) } throws: { error in
            "\(error)".contains("this is a secret key, not a public key")
        }
        #expect(throws: MinisignError.self) { try MinisignSecretKey(text: "untrusted comment: x\nnot base64!\n") }
        // A damaged key (one flipped byte of the seed) is refused by its checksum.
        var bytes = Array(Data(base64Encoded: String(base64))!)
        bytes[70] ^= 0xFF
        #expect { try MinisignSecretKey(text: "untrusted comment: x\n" + Data(bytes).base64EncodedString()) } throws: { error in
            "\(error)".contains("checksum")
        }
    }
}

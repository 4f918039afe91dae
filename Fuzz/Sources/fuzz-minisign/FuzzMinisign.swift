import Foundation
import FuzzSupport
@testable import GifPackSigning

/// minisign signature, public key and secret key files, and verification of a parsed signature
/// against a key of the same id. A signature that parses must write back (`fileText`) to text that
/// parses to the same signature.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinisign(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = Minisign.payloadLine(text)
    if let signature = try? MinisignSignature(text: text) {
        let again = try? MinisignSignature(text: signature.fileText)
        Fuzz.require(again == signature, "a signature's fileText does not parse back to it")
        let key = MinisignPublicKey(keyID: signature.keyID, rawKey: Keys.shared.publicKey.rawKey)
        do { try key.verify(signature, of: bytes) } catch { _ = error.description }
        do { _ = try MinisignPublicKey.verify(signature, of: Data(bytes), trusting: [Keys.shared.publicKey, key]) } catch {
            _ = error.description
        }
        let bogus = MinisignPublicKey(keyID: signature.keyID, rawKey: Array(bytes.prefix(32)))
        do { try bogus.verify(signature, of: bytes) } catch { _ = error.description }
    }
    do {
        let key = try MinisignPublicKey(text: text)
        Fuzz.require((try? MinisignPublicKey(text: key.fileText)) == key, "a public key's fileText does not parse back to it")
    } catch {
        _ = error.description
    }
    do {
        let secret = try MinisignSecretKey(text: text)
        _ = secret.description
        if let signature = try? secret.sign(bytes, trustedComment: "fuzz") {
            Fuzz.require((try? secret.publicKey.verify(signature, of: bytes)) != nil, "a parsed secret key signs what its public key refuses")
        }
    } catch {
        _ = error.description
    }
    return 0
}

private enum Keys {
    static let shared = MinisignSecretKey.generate()
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzMinisign) }
}

import GifPackSigning

/// A publisher's public key: with trusted keys, a ``GIFLoader`` accepts only an index signed by one
/// of them (a minisign signature, `index.json.minisig`), not older than the one it installed and
/// not expired, before it downloads anything the index names.
///
/// The key is the text of the publisher's `minisign.pub` (its two lines, or the base64 line alone),
/// bundled with the app; `gifpack keygen` writes it beside the secret key.
///
/// ```swift
/// let key = try TrustedKey(text: "untrusted comment: minisign public key 1A2B3C4D5E6F7081\nRWQ…")
/// let loader = try GIFLoader(indexURL: indexURL, cacheFolder: folder, trustedKeys: [key])
/// ```
public struct TrustedKey: Sendable, Equatable {
    /// The minisign key the loader's trust checks verify with.
    package let minisign: MinisignPublicKey

    /// Reads a minisign public key file's text (or its base64 line alone); throws a
    /// ``GIFLoaderError`` of kind ``GIFLoadFailure/other`` saying what is wrong with it.
    public init(text: String) throws(GIFLoaderError) {
        do {
            minisign = try MinisignPublicKey(text: text)
        } catch {
            throw GIFLoaderError(kind: .other, description: "not a trusted key: \(error)", underlying: error)
        }
    }

    package init(_ key: MinisignPublicKey) { minisign = key }

    /// The key's id, 16 uppercase hex digits as minisign prints it: the one a signature names.
    public var keyID: String { minisign.keyIDText }
}

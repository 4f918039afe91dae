// The client's API speaks in the format's types (PackIndex, PackDescription, PackCatalog,
// PackReadError, ...) and the signing module's (MinisignPublicKey, MinisignSignature): an app
// imports GifPackClient alone.
@_exported import GifPackFormat
@_exported import GifPackSigning

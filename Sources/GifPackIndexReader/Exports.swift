// The index reader's API speaks in the format's types (PackIndex, PackDescription, IndexError, ...),
// the signing module's (MinisignPublicKey) and the transport's (HTTPTransport, HTTPTimeouts,
// HTTPError, ...): an importer of this module has them without a second import.
@_exported import GifPackFormat
@_exported import GifPackSigning
@_exported import GifPackTransport

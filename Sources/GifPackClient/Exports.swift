// The client's API speaks in the format's types (PackIndex, PackDescription, PackCatalog,
// PackReadError, ...), the signing module's (MinisignPublicKey, MinisignSignature) and the
// transport's (HTTPTransport, URLSessionTransport, HTTPTimeouts, TimeSpan, HTTPError, ...): an app
// imports GifPackClient alone.
@_exported import GifPackFormat
@_exported import GifPackSigning
@_exported import GifPackTransport
// The index and trust steps (PackIndexSource, IndexTrust, PackLimits, PackClientError,
// PackRejection, ...) live in GifPackIndexReader, which the builder links without the client; an
// app sees them here under the same names.
@_exported import GifPackIndexReader

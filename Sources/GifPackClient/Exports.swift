// The client's public API speaks the transport's types (HTTPTransport, URLSessionTransport,
// HTTPTimeouts, TimeSpan, HTTPRequest, HTTPError, ...): an app imports GifPackClient alone, and can
// pass its own transport. Nothing else is re-exported: the format, the index reader and the
// signing module are the package's own (their declarations are `package`), so an app's
// `import GifPackClient` sees the loader and the values it answers (docs/ARCHITECTURE.md, "Public API").
@_exported import GifPackTransport

@_exported import GifPackFormat
@_exported import GifPackGIF
// The manifest's signing key and the index signatures are GifPackSigning's types.
@_exported import GifPackSigning
// The builder's API speaks FileSystemError (the store, a catalog's spool) and its files use the
// package's system helpers throughout.
@_exported import GifPackSystem

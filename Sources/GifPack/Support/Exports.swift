@_exported import GifPackFormat
@_exported import GifPackGIF
// The manifest's signing key and the published signatures are GifPackSigning's types.
@_exported import GifPackSigning

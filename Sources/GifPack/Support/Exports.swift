@_exported import GifPackFormat
@_exported import GifPackGIF

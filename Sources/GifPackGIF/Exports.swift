// GIFInfo, GIFLimits, GIFRejection and the LZW pixel counter live in GifPackGIFCore (pure Swift, what
// the client links); the builder keeps using them through this module.
@_exported import GifPackGIFCore

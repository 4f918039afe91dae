// The client's API speaks in the format's types (PackIndex, PackDescription, PackCatalog,
// PackReadError, ...): an app imports GifPackClient alone.
@_exported import GifPackFormat

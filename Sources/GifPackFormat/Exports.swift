// PathText and FileSystemError are part of the format's and builder's API; the package-level
// helpers of GifPackSystem (hex, POSIX loops, blocking work, locks, files) come along for the
// modules of this package only.
@_exported import GifPackSystem
// The format's API speaks GifPackJSON's types (JSONLimits for every decode, JSONValue for a
// catalog's records), so an importer of the format has them without a second import.
@_exported import GifPackJSON

// The format's API speaks GifPackJSON's types (JSONLimits for every decode, JSONValue for a
// catalog's records), so an importer of the format has them without a second import. It speaks
// none of GifPackSystem's (the package's own helpers): a module that uses them imports GifPackSystem.
@_exported import GifPackJSON

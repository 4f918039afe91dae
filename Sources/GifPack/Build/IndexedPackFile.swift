import Foundation

/// One file an index names under `packs/`: a pack or a pack's posters pack (format 1.2), with the
/// size and SHA-256 the index gives for it.
///
/// ```swift
/// for file in index.packFiles { print(file.file, file.bytes) }   // packs, each followed by its posters pack
/// ```
struct IndexedPackFile: Sendable, Equatable {
    var file: String
    var bytes: Int64
    var sha256: String
}

extension PackIndex {
    /// Every file the index names, each pack followed by its posters pack when it has one.
    var packFiles: [IndexedPackFile] {
        allPacks.flatMap { pack in
            [IndexedPackFile(file: pack.file, bytes: pack.bytes, sha256: pack.sha256)]
                + (pack.posters.map { [IndexedPackFile(file: $0.file, bytes: $0.bytes, sha256: $0.sha256)] } ?? [])
        }
    }
}

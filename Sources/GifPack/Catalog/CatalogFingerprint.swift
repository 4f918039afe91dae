import Crypto

/// A stable fingerprint of each exercise record (its canonical JSON and image URL, see
/// ``Exercise/fingerprint``), used to tell which exercises changed between two catalogs.
enum CatalogFingerprint {
    /// Each exercise's id and fingerprint (lowercase hex), in the catalog's order, made one at a
    /// time as the state consumes them.
    static func fingerprints(of catalog: Catalog) -> BuildState.Fingerprints {
        { each in try catalog.exercises.forEach { try each((id: $0.id, fingerprint: $0.fingerprint.hex)) } }
    }

    /// SHA-256 (lowercase hex) of every id and fingerprint in the catalog's order: equal digests,
    /// equal catalogs for ``BuildState/replaceCatalog(_:digest:)``, which then has nothing to compare.
    static func digest(of catalog: Catalog) throws(SpoolReadError) -> String {
        var hasher = SHA256()
        try catalog.exercises.forEachIDAndFingerprint { id, fingerprint in
            withUnsafeBytes(of: UInt16(id.count).littleEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(bufferPointer: id)
            withUnsafeBytes(of: fingerprint) { hasher.update(bufferPointer: $0) }
        }
        return Hex.lowercase(Array(hasher.finalize()))
    }
}

/// A stable fingerprint of each exercise record (its canonical JSON and image URL, see
/// ``Exercise/fingerprint``), used to tell which exercises changed between two catalogs.
enum CatalogFingerprint {
    /// Each exercise's id and fingerprint (lowercase hex), in the catalog's order, made one at a
    /// time as the state consumes them.
    static func fingerprints(of catalog: Catalog) -> some Sequence<(id: String, fingerprint: String)> {
        catalog.exercises.lazy.map { (id: $0.id, fingerprint: $0.fingerprint.hex) }
    }
}

import Crypto
import Foundation

/// A stable fingerprint of each exercise record (its canonical JSON and image URL), used to tell
/// which exercises changed between two catalogs.
enum CatalogFingerprint {
    static func fingerprints(of catalog: Catalog) -> [String: String] {
        var result: [String: String] = [:]
        for exercise in catalog.exercises {
            var hasher = SHA256()
            hasher.update(data: exercise.record.canonicalJSON)
            hasher.update(data: Array(exercise.imageURL.utf8))
            result[exercise.id] = Hex.lowercase(hasher.finalize())
        }
        return result
    }
}

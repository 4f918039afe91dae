import Crypto
import Foundation

/// A stable fingerprint of each exercise record (its canonical JSON and image URL), used to tell
/// which exercises changed between two catalogs.
enum CatalogFingerprint {
    static func fingerprints(of catalog: Catalog) -> [String: String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var result: [String: String] = [:]
        for exercise in catalog.exercises {
            var bytes = (try? encoder.encode(exercise.raw)) ?? Data()
            bytes.append(contentsOf: Array(exercise.imageURL.utf8))
            result[exercise.id] = SHA256.hash(data: bytes).hexString
        }
        return result
    }
}

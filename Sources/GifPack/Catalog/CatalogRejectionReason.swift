import Foundation

/// Why one catalog record was refused.
struct CatalogRejectionReason: Error {
    var displayID: String?
    var reason: CatalogRejectionCode

    /// Shows an untrusted id safely: printable ASCII only, at most 80 characters.
    static func display(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let escaped = raw.unicodeScalars.prefix(80).map { scalar in
            (0x20..<0x7F).contains(scalar.value) ? String(scalar) : String(format: "\\u{%X}", scalar.value)
        }.joined()
        return escaped
    }

    static func invalidID(_ raw: String?) -> CatalogRejectionReason {
        CatalogRejectionReason(displayID: display(raw), reason: raw == nil ? .missingID : .invalidID)
    }
}

/// Exercise ids come from the API and are untrusted: only ids matching `^[A-Za-z0-9_-]{1,64}$` are
/// ever used, which makes them safe as file names (`<cache>/<id>.gif`).
///
/// ```swift
/// ExerciseID.isValid("0001")      // true
/// ExerciseID.isValid("../etc")    // false
/// ```
package enum ExerciseID {
    package static func isValid(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 64 else { return false }
        return id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D
        }
    }
}

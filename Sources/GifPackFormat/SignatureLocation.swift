/// Where a signature sits: `index.json.minisig` beside `index.json` (for a URL, before any query).
///
/// ```swift
/// SignatureLocation.beside("https://cdn.example.com/index.json?v=2")   // ".../index.json.minisig?v=2"
/// ```
public enum SignatureLocation {
    public static let suffix = ".minisig"

    public static func beside(_ location: String) -> String {
        if let query = location.firstIndex(where: { $0 == "?" || $0 == "#" }),
           location.lowercased().hasPrefix("http") {
            return String(location[..<query]) + suffix + String(location[query...])
        }
        return location + suffix
    }
}


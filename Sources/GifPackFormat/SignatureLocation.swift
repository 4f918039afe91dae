/// Where a signature sits.
///
/// Publishing (docs/FORMAT.md, "Signatures") stores each index's signature under the name of the
/// index's bytes, `signatures/<sha256-hex>.minisig` beside `index.json`, before the index itself,
/// and `index.json.minisig` beside the index after it (for stock `minisign -V`; it may lag the
/// index). Clients look for the hash-named signature first and fall back to `index.json.minisig`
/// (targets published by older versions have only that).
///
/// ```swift
/// SignatureLocation.beside("https://cdn.example.com/index.json?v=2")   // ".../index.json.minisig?v=2"
/// SignatureLocation.hashNamed("https://cdn.example.com/g/index.json", indexSHA256: hex)
/// // "https://cdn.example.com/g/signatures/<hex>.minisig"
/// ```
package enum SignatureLocation {
    package static let suffix = ".minisig"
    /// The folder of hash-named signatures, beside `index.json`.
    package static let directory = "signatures"

    package static func beside(_ location: String) -> String {
        if let query = location.firstIndex(where: { $0 == "?" || $0 == "#" }),
            location.lowercased().hasPrefix("http")
        {
            return String(location[..<query]) + suffix + String(location[query...])
        }
        return location + suffix
    }

    /// `signatures/<sha256-hex>.minisig`: the key (relative to the index's directory) of the
    /// signature of the index whose bytes have this SHA-256 (lowercase hex).
    package static func key(forIndexSHA256 sha256: String) -> String { "\(directory)/\(sha256)\(suffix)" }

    /// True for exactly `signatures/` + 64 lowercase hex digits + `.minisig`.
    package static func isKey(_ key: String) -> Bool {
        let utf8 = Array(key.utf8)
        let head = Array("\(directory)/".utf8), tail = Array(suffix.utf8)
        guard utf8.count == head.count + 64 + tail.count, utf8.starts(with: head), utf8.suffix(tail.count).elementsEqual(tail) else {
            return false
        }
        return utf8[head.count..<(head.count + 64)].allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }

    /// The hash-named signature of an index at `location` (a path or an http(s) URL): the key
    /// resolved against the index's directory, as pack files are (a URL's query and fragment dropped).
    package static func hashNamed(_ location: String, indexSHA256 sha256: String) -> String {
        var base = Substring(location)
        if location.lowercased().hasPrefix("http"), let query = base.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            base = base[..<query]
        }
        guard let slash = base.lastIndex(of: "/") else { return key(forIndexSHA256: sha256) }
        return String(base[...slash]) + key(forIndexSHA256: sha256)
    }

    /// Where every reader looks for the signature of the index at `location`, in order: the one
    /// published under the index's hash (always that index's), then `index.json.minisig` beside it
    /// (which may lag the index, and is all a target of an older gifpack has).
    package static func lookupOrder(_ location: String, indexSHA256 sha256: String) -> [String] {
        [hashNamed(location, indexSHA256: sha256), beside(location)]
    }
}

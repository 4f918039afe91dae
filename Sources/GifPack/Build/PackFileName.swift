import Foundation

/// Pack file names: `packs/<name>-v<N>-<sha8>.tar.zst`, where `<sha8>` is the first 8 hex digits
/// of the file's SHA-256 (what every release wrote).
///
/// ```swift
/// PackFileName.file(pack: "all", version: 3, sha256: "1a2b3c4d…")   // "packs/all-v3-1a2b3c4d.tar.zst"
/// PackFileName.version(of: "all-v3-1a2b3c4d.tar.zst", pack: "all")   // 3
/// ```
enum PackFileName {
    static func file(pack: String, version: Int, sha256: String) -> String {
        "packs/\(pack)-v\(version)-\(sha256.prefix(8)).tar.zst"
    }

    /// The version of a file name of `pack`, nil for any other name.
    static func version(of name: String, pack: String) -> Int? {
        guard name.hasPrefix("\(pack)-v"), name.hasSuffix(".tar.zst") else { return nil }
        let rest = name.dropFirst(pack.count + 2).dropLast(".tar.zst".count)
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), let version = Int(parts[0]), version > 0,
            parts[1].count == 8, parts[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase })
        else { return nil }
        return version
    }

    /// The files of one pack in `packs/`, listed once: their versions, and which of them hold given
    /// bytes. An unreadable directory is an error (``FileSystemError``, naming the directory and the
    /// system's reason), never taken for an empty one: a version present there but unseen could be
    /// numbered again.
    ///
    /// ```swift
    /// let files = try PackFileName.Listing(of: "all", in: "dist/packs")
    /// files.highestVersion                      // 3
    /// try files.present(sha256: summary.sha256) // [WrittenPack(version: 2, …)] when v2 has these bytes
    /// ```
    struct Listing {
        let directory: String
        /// File names of the pack, with their versions.
        let files: [(name: String, version: Int)]

        init(of pack: String, in directory: String) throws(FileSystemError) {
            self.directory = directory
            files = try FileSystem.list(directory).compactMap { name in
                PackFileName.version(of: name, pack: pack).map { (name, $0) }
            }
        }

        /// The highest version among the files, 0 when there is none.
        var highestVersion: Int { files.map(\.version).max() ?? 0 }

        /// The files whose name carries the first 8 digits of `sha256` and whose bytes hash to it; a
        /// file that cannot be read is an error (one removed meanwhile is skipped).
        func present(sha256: String) throws(FileSystemError) -> [WrittenPack] {
            var found: [WrittenPack] = []
            for file in files where file.name.hasSuffix("-\(sha256.prefix(8)).tar.zst") {
                let digest: String
                do { digest = try StreamingSHA256.file(at: "\(directory)/\(file.name)").sha256 } catch {
                    if error.errno == Errno.noSuchFileOrDirectory.code { continue }
                    throw error
                }
                if digest == sha256 { found.append(WrittenPack(version: file.version, file: "packs/\(file.name)", sha256: sha256)) }
            }
            return found
        }
    }

    /// A `packs/…` path made of plain characters, safe to join to the output directory.
    static func isPlain(_ file: String) -> Bool {
        file.hasPrefix("packs/") && !file.dropFirst(6).contains("/") && !file.hasPrefix("packs/.")
            && file.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-/".contains($0)) }
    }
}

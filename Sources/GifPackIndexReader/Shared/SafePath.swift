import GifPackFormat
import GifPackSystem

/// Checks for names and relative paths that come from an index or a tar header.
///
/// Nothing from a pack is trusted to be a safe file name: a path is refused when it is absolute,
/// has an empty, `.` or `..` component, or holds anything but printable ASCII without backslashes;
/// hashes must be 64 lowercase hex digits; pack names follow the exercise-id alphabet.
///
/// ```swift
/// SafePath.problem(in: "packs/all-v3.tar.zst")   // nil
/// SafePath.problem(in: "../../etc/passwd")?.0    // .parentDirectory
/// ```
package enum SafePath {
    /// The reason and an explanation when `path` is not a safe relative path, else nil.
    package static func problem(in path: String) -> (PackRejection.Reason, String)? {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty else { return (.unsafeName, "empty path") }
        if bytes.first == UInt8(ascii: "/") { return (.absolutePath, "\"\(printable(path))\" is an absolute path") }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }) else {
            return (.unsafeName, "\"\(printable(path))\" holds characters other than printable ASCII")
        }
        // Printable ASCII from here on: components compared byte by byte.
        let components = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let dot = UInt8(ascii: ".")
        if components.contains(where: { $0.isEmpty || $0.elementsEqual([dot]) || $0.elementsEqual([dot, dot]) }) {
            return (.parentDirectory, "\"\(path)\" has an empty, \".\" or \"..\" component")
        }
        return nil
    }

    /// True for 64 lowercase hexadecimal digits.
    package static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// `text` with control and non-ASCII characters escaped, for messages (at most 200 characters).
    package static func printable(_ text: String) -> String {
        TerminalText.escaped(text, asciiOnly: true, maxScalars: 200)
    }
}

import Foundation
import GifPackFormat
import GifPackHTTP
import GifPackSystem

/// Writes to standard output and standard error.
///
/// Every line passes `TerminalText.escaped` (newlines kept), so no message — whatever id, name or
/// path from an index, pack or API it quotes — can put a raw control character, C1 control or bidi
/// override on the terminal. Commands escape untrusted fields themselves as well (tables are
/// measured after escaping); this is the backstop. Likewise no URL printed keeps its user name
/// and password (``URLCredentials``), whichever message quotes it.
enum Terminal {
    static func error(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((safe(line) + "\n").utf8))
    }

    static func output(_ line: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data((safe(line) + "\n").utf8))
    }

    /// `text` escaped line by line, without URL credentials.
    static func safe(_ text: String) -> String {
        URLCredentials.redacted(text).split(separator: "\n", omittingEmptySubsequences: false)
            .map { TerminalText.escaped(String($0)) }.joined(separator: "\n")
    }
}

import Foundation
import GifPackSystem
import Glibc

/// Standard error, shared by log lines and the live progress line.
///
/// A status line (only ever set on a terminal) sits on the last row without a newline. Writing a
/// log line first erases it (`\r` + `ESC[K`), writes the log line, then draws the status again
/// below it, so logs scroll up while the progress stays at the bottom. Everything goes out under one
/// lock, in one `write(2)` per call. Without a status line nothing but the log lines themselves is
/// written: no control characters.
///
/// ```swift
/// let console = Console()
/// console.showStatus("fetch 10/200 (5%)")
/// console.writeLine("warning: GIF 0007 refused")
/// console.clearStatus()
/// ```
final class Console: @unchecked Sendable {  // @unchecked: `status` is read and written under `lock`, and every write to the terminal happens under it.
    private static let eraseLine = "\r\u{1B}[K"
    private let lock = NSLock()
    private var status: String?

    func writeLine(_ line: String) {
        lock.withLock {
            var text = status == nil ? "" : Console.eraseLine
            text += line + "\n"
            if let status { text += status }
            Console.writeAll(text)
        }
    }

    /// Draws `line` in place of the current status line.
    func showStatus(_ line: String) {
        lock.withLock {
            status = line
            Console.writeAll(Console.eraseLine + line)
        }
    }

    /// Erases the status line, leaving the cursor at the start of an empty row.
    func clearStatus() {
        lock.withLock {
            guard status != nil else { return }
            status = nil
            Console.writeAll(Console.eraseLine)
        }
    }

    /// Writes all of `text` to standard error; a closed or broken stderr has nobody left to tell.
    private static func writeAll(_ text: String) {
        try? POSIXIO.writeAll(STDERR_FILENO, Array(text.utf8))
    }
}

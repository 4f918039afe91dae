import Foundation
import GifPackSystem
import Glibc
import Synchronization

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
final class Console: Sendable {
    private static let eraseLine = "\r\u{1B}[K"
    /// The status line drawn, if any; every write to the terminal happens under its lock.
    private let status = Mutex<String?>(nil)

    func writeLine(_ line: String) {
        status.withLock { status in
            var text = status == nil ? "" : Console.eraseLine
            text += line + "\n"
            if let status { text += status }
            Console.writeAll(text)
        }
    }

    /// Draws `line` in place of the current status line.
    func showStatus(_ line: String) {
        status.withLock { status in
            status = line
            Console.writeAll(Console.eraseLine + line)
        }
    }

    /// Erases the status line, leaving the cursor at the start of an empty row.
    func clearStatus() {
        status.withLock { status in
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

import Foundation
import Glibc

/// What the process knows about standard error as a display: whether it is a terminal, how wide
/// it is, and whether colour is welcome.
///
/// Width: the terminal's own size (`ioctl(TIOCGWINSZ)`), else `COLUMNS`, else 80. Colour: only on
/// a terminal, never when `NO_COLOR` is set to anything non-empty (no-color.org) or `TERM=dumb`.
///
/// ```swift
/// let info = TerminalInfo(environment: ProcessInfo.processInfo.environment)
/// if info.isTerminal { print(info.width) }
/// ```
struct TerminalInfo: Sendable {
    let isTerminal: Bool
    let environment: [String: String]

    init(environment: [String: String], descriptor: Int32 = STDERR_FILENO) {
        self.environment = environment
        isTerminal = isatty(descriptor) == 1
    }

    /// A terminal that can redraw a line in place: `TERM=dumb` cannot.
    var canRedraw: Bool { isTerminal && environment["TERM"] != "dumb" }

    var allowsColor: Bool { canRedraw && (environment["NO_COLOR"] ?? "").isEmpty }

    /// Columns, read anew on each call so a resized window is followed.
    var width: Int {
        var size = winsize()
        if isTerminal, ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
        return 80
    }
}

import GifPack
import Logging

/// Installs ``GifpackLogHandler`` as the process's swift-log back end, once, and hands out the
/// command line's logger.
///
/// ```swift
/// let logger = LogSetup.bootstrap(format: .text, level: .info, color: true, console: console, redactor: redactor)
/// logger.notice("build finished")
/// ```
enum LogSetup {
    static func bootstrap(
        format: GifpackLogHandler.Format, level: Logger.Level, color: Bool, console: Console,
        redactor: SecretRedactor
    ) -> Logger {
        LoggingSystem.bootstrap { label in
            GifpackLogHandler(label: label, format: format, color: color, console: console, redactor: redactor, logLevel: level)
        }
        return Logger(label: "gifpack")
    }
}

extension Logger {
    /// True when an entry of `level` would be logged.
    func allows(_ level: LogSeverity) -> Bool {
        guard let swiftLevel = Logger.Level(rawValue: level.rawValue) else { return false }
        return logLevel <= swiftLevel
    }

    /// Logs a library log entry (a ``BuildEventLog`` entry or a progress line) with its typed fields.
    func log(_ level: LogSeverity, _ message: String, fields: [String: LogField]) {
        guard allows(level), let swiftLevel = Logger.Level(rawValue: level.rawValue) else { return }
        log(level: swiftLevel, "\(message)", metadata: fields.mapValues(GifpackLogHandler.metadataValue))
    }
}

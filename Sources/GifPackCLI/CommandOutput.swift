import Foundation
import GifPack

/// Where a command's own lines go — its action lines and last line, and a failure — in the two
/// shapes the command line has: text (lines on standard output, a failure on standard error;
/// `quiet` leaves only the failure) or JSON (`--log-format json`: every line one JSON object on
/// standard error, nothing on standard output, so `journalctl -o cat | jq` reads one stream).
///
/// ```swift
/// let output = CommandOutput(format: .text, quiet: false, redactor: SecretRedactor(secrets: []))
/// output.line("upload: packs/all-v2-1a2b3c4d.tar.zst", event: "publish")
/// output.failure("publish to /var/www/gifpack failed: …", event: "publish", fields: ["exit_status": .int(1)])
/// ```
struct CommandOutput: Sendable {
    enum Format: Sendable { case text, json }

    var format: Format
    var quiet: Bool
    var redactor: SecretRedactor

    /// An action line (`upload: …`): dropped with `quiet`.
    func line(_ text: String, event: String, fields: [String: LogField] = [:]) {
        guard !quiet else { return }
        emit(text, level: .info, event: event, fields: fields, toStandardError: false)
    }

    /// The last line of a success: dropped with `quiet`.
    func success(_ text: String, event: String, fields: [String: LogField] = [:]) {
        guard !quiet else { return }
        emit(text, level: .notice, event: event, fields: fields, toStandardError: false)
    }

    /// The one line of a failure: always written, on standard error.
    func failure(_ text: String, event: String, fields: [String: LogField] = [:]) {
        emit(text, level: .error, event: event, fields: fields, toStandardError: true)
    }

    func emit(_ text: String, level: LogSeverity, event: String, fields: [String: LogField], toStandardError: Bool) {
        switch format {
        case .text:
            let line = redactor.redact(text)
            if toStandardError { Terminal.error(line) } else { Terminal.output(line) }
        case .json:
            var all = fields
            all["event"] = .string(event)
            let record = LogRecord(timestamp: Date(), level: level, label: "gifpack", message: text, fields: all)
            Terminal.error(record.jsonLine(redactor: redactor))
        }
    }
}

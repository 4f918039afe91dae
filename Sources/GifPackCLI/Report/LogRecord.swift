import Foundation
import GifPack

/// The severity of a log record; the raw values are swift-log's `Logger.Level` names.
enum LogSeverity: String, Sendable, Codable, CaseIterable, Comparable {
    case trace, debug, info, notice, warning, error, critical

    static func < (lhs: LogSeverity, rhs: LogSeverity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A typed value attached to a log record, so JSON logs keep numbers as numbers.
enum LogField: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
}

/// One log line before formatting, and its two written forms.
///
/// `jsonLine` is one JSON object on one line: `timestamp`, `level`, `label`, `message`, then the
/// fields (sorted by name; a field named like one of the four is written with a leading `_`).
/// `textLine` is for people: `<timestamp> <level> <message> key=value …` with the fields in a
/// fixed, readable order. Both escape every control character, so a line never holds a raw escape
/// sequence, carriage return or newline, and both pass every string through the redactor first.
///
/// ```swift
/// let record = LogRecord(timestamp: Date(), level: .info, label: "gifpack", message: "attempt",
///                        fields: ["exercise_id": .string("0001"), "status": .int(200)])
/// record.jsonLine(redactor: redactor)
/// // {"timestamp":"2026-05-01T04:00:00.000Z","level":"info","label":"gifpack","message":"attempt","exercise_id":"0001","status":200}
/// record.textLine(color: false, redactor: redactor)
/// // 2026-05-01T04:00:00.000Z info    attempt exercise_id=0001 status=200
/// ```
struct LogRecord: Sendable, Equatable {
    var timestamp: Date
    var level: LogSeverity
    var label: String
    var message: String
    var fields: [String: LogField]

    init(timestamp: Date, level: LogSeverity, label: String, message: String, fields: [String: LogField] = [:]) {
        self.timestamp = timestamp
        self.level = level
        self.label = label
        self.message = message
        self.fields = fields
    }

    /// The keys every JSON line starts with.
    static let reservedKeys = ["timestamp", "level", "label", "message"]

    /// Fields that lead a text line, in this order; the others follow sorted by name.
    static let textOrder = [
        "event", "stage", "exercise_id", "attempt", "outcome", "status", "reason", "duration_ms",
        "bytes", "retry_in_ms", "url"
    ]

    func jsonLine(redactor: SecretRedactor) -> String {
        var members = [
            ("timestamp", LogJSONText.string(BuildReport.timestamp(timestamp))),
            ("level", LogJSONText.string(level.rawValue)),
            ("label", LogJSONText.string(redactor.redact(label))),
            ("message", LogJSONText.string(redactor.redact(message)))
        ]
        for key in fields.keys.sorted() {
            let name = LogRecord.reservedKeys.contains(key) ? "_" + key : key
            members.append((name, LogJSONText.value(fields[key]!, redactor: redactor)))
        }
        return "{" + members.map { LogJSONText.string(redactor.redact($0.0)) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    func textLine(color: Bool, redactor: SecretRedactor) -> String {
        let levelText = level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        var line =
            BuildReport.timestamp(timestamp) + " "
            + (color ? "\u{1B}[\(LogRecord.colorCode(level))m\(levelText)\u{1B}[0m" : levelText)
            + " " + PlainText.escaped(redactor.redact(message))
        let ordered =
            LogRecord.textOrder.filter { fields[$0] != nil }
            + fields.keys.filter { !LogRecord.textOrder.contains($0) }.sorted()
        for key in ordered {
            line += " " + PlainText.escaped(redactor.redact(key)) + "=" + PlainText.fieldValue(fields[key]!, redactor: redactor)
        }
        return line
    }

    private static func colorCode(_ level: LogSeverity) -> String {
        switch level {
        case .trace, .debug: "2"
        case .info: "36"
        case .notice: "1;36"
        case .warning: "33"
        case .error, .critical: "1;31"
        }
    }
}

/// JSON text for log lines: strings with every control character escaped.
enum LogJSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where PlainText.isControl(scalar) || scalar == "\u{2028}" || scalar == "\u{2029}":
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func value(_ field: LogField, redactor: SecretRedactor) -> String {
        switch field {
        case .string(let text): string(redactor.redact(text))
        case .int(let number): String(number)
        case .double(let number): number.isFinite ? PlainText.number(number) : "null"
        case .bool(let flag): flag ? "true" : "false"
        }
    }
}

/// Plain text for human log lines: control characters shown as escapes, values quoted when needed.
enum PlainText {
    /// The characters no log line may carry raw: `TerminalText`'s set (C0, DEL, C1, bidi controls,
    /// line and paragraph separators), shared with every client command.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        TerminalText.isUnsafe(scalar)
    }

    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar): out += String(format: "\\x%02x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func fieldValue(_ field: LogField, redactor: SecretRedactor) -> String {
        switch field {
        case .string(let text):
            let clean = escaped(redactor.redact(text))
            let needsQuotes = clean.isEmpty || clean.contains { $0 == " " || $0 == "\"" || $0 == "=" }
            return needsQuotes ? "\"" + clean.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : clean
        case .int(let value): return String(value)
        case .double(let value): return value.isFinite ? number(value) : "NaN"
        case .bool(let flag): return flag ? "true" : "false"
        }
    }

    /// A double without a needless `.0` and rounded to microseconds.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String((value * 1e6).rounded() / 1e6)
    }
}

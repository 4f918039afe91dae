import Foundation
import GifPack
import Logging

/// The swift-log handler of the command line: each record becomes one line on standard error,
/// human-readable (`text`) or one JSON object (`json`), through the shared ``Console`` so it never
/// tears the live progress line. Every string passes the ``SecretRedactor`` holding the API key.
///
/// Typed metadata stays typed in JSON: `.stringConvertible` integers, doubles and booleans are
/// written as JSON numbers and booleans, everything else as strings.
///
/// ```swift
/// LoggingSystem.bootstrap { label in
///     GifpackLogHandler(label: label, format: .json, color: false, console: console, redactor: redactor, logLevel: .info)
/// }
/// Logger(label: "gifpack").info("hello", metadata: ["event": "demo"])
/// ```
struct GifpackLogHandler: LogHandler {
    enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    let label: String
    let format: Format
    let color: Bool
    let console: Console
    let redactor: SecretRedactor
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(label: String, format: Format, color: Bool, console: Console, redactor: SecretRedactor, logLevel: Logger.Level) {
        self.label = label
        self.format = format
        self.color = color
        self.console = console
        self.redactor = redactor
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: LogField] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = Self.field(value)
        }
        if let error = event.error { fields["error"] = .string(String(describing: error)) }
        let record = LogRecord(
            timestamp: Date(), level: LogSeverity(rawValue: event.level.rawValue) ?? .info,
            label: label, message: event.message.description, fields: fields)
        switch format {
        case .text: console.writeLine(record.textLine(color: color, redactor: redactor))
        case .json: console.writeLine(record.jsonLine(redactor: redactor))
        }
    }

    static func field(_ value: Logger.MetadataValue) -> LogField {
        switch value {
        case .string(let text): return .string(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: return .int(Int64(number))
            case let number as Int64: return .int(number)
            case let number as Double: return .double(number)
            case let flag as Bool: return .bool(flag)
            default: return .string(convertible.description)
            }
        case .dictionary, .array: return .string(value.description)
        }
    }

    /// The swift-log value for a library ``LogField``.
    static func metadataValue(_ field: LogField) -> Logger.MetadataValue {
        switch field {
        case .string(let text): .string(text)
        case .int(let number): .stringConvertible(number)
        case .double(let number): .stringConvertible(number)
        case .bool(let flag): .stringConvertible(flag)
        }
    }
}

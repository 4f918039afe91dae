/// Why ``GIFInspector`` refused a file.
///
/// Each case maps to a stable machine-readable ``reason`` code (for logs, reports and JSON) and
/// a human ``detail``:
///
/// | case        | reason       | meaning                                                      |
/// |-------------|--------------|--------------------------------------------------------------|
/// | notAGIF     | "not-a-gif"  | the first six bytes are not GIF87a/GIF89a (e.g. an HTML page) |
/// | truncated   | "truncated"  | the data ended before the trailer record (0x3B)               |
/// | badFrame    | "bad-frame"  | a frame is empty, outside the logical screen or undecodable   |
/// | tooLarge    | "too-large"  | a ``GIFLimits`` bound was exceeded                            |
/// | corrupt     | "corrupt"    | any other structural error reported by giflib or the OS       |
///
/// ```swift
/// do { _ = try GIFInspector.inspect(bytes: Array("<html>".utf8)) }
/// catch { print(error.reason) }   // "not-a-gif"
/// ```
package enum GIFRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case notAGIF
    case truncated
    case badFrame(String)
    case tooLarge(String)
    case corrupt(String)

    /// Stable code: "not-a-gif", "truncated", "bad-frame", "too-large" or "corrupt".
    package var reason: String {
        switch self {
        case .notAGIF: "not-a-gif"
        case .truncated: "truncated"
        case .badFrame: "bad-frame"
        case .tooLarge: "too-large"
        case .corrupt: "corrupt"
        }
    }

    /// Human-readable explanation.
    package var detail: String {
        switch self {
        case .notAGIF: "the data does not start with a GIF87a or GIF89a signature"
        case .truncated: "the data ends before the GIF trailer"
        case .badFrame(let message), .tooLarge(let message), .corrupt(let message): message
        }
    }

    package var description: String { "\(reason): \(detail)" }
}

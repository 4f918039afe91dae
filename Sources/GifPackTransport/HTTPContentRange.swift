/// A parsed `Content-Range` response field (RFC 9110 §14.4), in bytes.
///
/// `bytes 100-199/5000` is a satisfied range (``range`` 100...199, ``completeLength`` 5000);
/// `bytes */5000` comes with a `416` and names only the length; `*` for the length means the
/// server does not know it. Anything else — another unit, a last byte before the first, a range
/// past the length, stray characters — does not parse.
///
/// ```swift
/// var request = HTTPRequest(url: packURL)
/// request.byteRange = 1536...9999
/// let answer = try await client.data(request, maxBytes: 8464)
/// guard answer.head.status == 206,
///       let served = HTTPContentRange(answer.head.headers["content-range"] ?? ""),
///       served.range == request.byteRange else { … }
/// ```
package struct HTTPContentRange: Sendable, Equatable, CustomStringConvertible {
    /// The bytes the body holds; nil for an unsatisfied range (`bytes */N`).
    package var range: ClosedRange<Int64>?
    /// The representation's whole length; nil when the server sent `*`.
    package var completeLength: Int64?

    package init(range: ClosedRange<Int64>?, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses a field value; nil when it is not a well-formed byte range.
    package init?(_ field: String) {
        let text = field.trimmingASCIISpaces()
        guard text.lowercased().hasPrefix("bytes "), let slash = text.lastIndex(of: "/") else { return nil }
        let spec = text[text.index(text.startIndex, offsetBy: 6)..<slash].trimmingASCIISpaces()
        let length = text[text.index(after: slash)...]
        if length == "*" {
            completeLength = nil
        } else {
            guard let value = Self.number(length) else { return nil }
            completeLength = value
        }
        if spec == "*" {
            guard completeLength != nil else { return nil }
            range = nil
            return
        }
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
            first <= last
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        range = first...last
    }

    /// The field value this describes.
    package var description: String {
        let length = completeLength.map(String.init) ?? "*"
        guard let range else { return "bytes */\(length)" }
        return "bytes \(range.lowerBound)-\(range.upperBound)/\(length)"
    }

    private static func number<S: StringProtocol>(_ text: S) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}

extension StringProtocol {
    func trimmingASCIISpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

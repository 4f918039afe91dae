/// Builds the final response head from the header lines curl hands to `CURLOPT_HEADERFUNCTION`.
///
/// Each status line (`HTTP/1.1 100 Continue`, `HTTP/2 301`, …) starts a new head, dropping the
/// fields collected so far, so that only the last head — the one whose body is delivered —
/// remains. Lines after the body started (chunked trailers) are ignored.
struct ResponseHeadCollector {
    private(set) var httpVersion = ""
    private(set) var status = 0
    private(set) var headers = HTTPHeaders()
    /// The blank line closing the current head was seen.
    private(set) var headEnded = false
    var bodyStarted = false

    mutating func consume(_ raw: UnsafeRawBufferPointer) {
        guard !bodyStarted else { return }
        var bytes = raw[...]
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            startHead(statusLine: line)
        } else if line.isEmpty {
            headEnded = true
        } else if line.first == " " || line.first == "\t" {
            headers.extendLastValue(with: trimmed(Substring(line)))
        } else if let colon = line.firstIndex(of: ":") {
            headers.append(name: trimmed(line[..<colon]), value: trimmed(line[line.index(after: colon)...]))
        }
    }

    private mutating func startHead(statusLine: String) {
        headers = HTTPHeaders()
        headEnded = false
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        httpVersion = parts.first.map { String($0.dropFirst("HTTP/".count)) } ?? ""
        status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    }

    /// `text` without leading and trailing spaces and tabs (a byte scan: both are ASCII, so the
    /// ends stay on character boundaries).
    private func trimmed(_ text: Substring) -> String {
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        while start < end, blank(bytes[start]) { start = bytes.index(after: start) }
        while start < end, blank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(text[start..<end])
    }
}

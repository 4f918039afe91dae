/// Turns the bytes of a request head (request line and headers, up to and including the blank
/// line) into an ``HTTPRequest``.
///
/// ```swift
/// let request = try HTTPRequestParser.parse(head: bytes)
/// ```
enum HTTPRequestParser {
    /// Why a head could not be parsed; the server answers 400 and closes.
    enum Failure: Error, Equatable {
        case malformedRequestLine
        case unsupportedVersion
        case malformedHeader
    }

    static func parse(head: ArraySlice<UInt8>) throws(Failure) -> HTTPRequest {
        var lines = head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { line in line.last == UInt8(ascii: "\r") ? line.dropLast() : line }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw .malformedRequestLine }
        let parts = requestLine.split(separator: UInt8(ascii: " "))
        guard parts.count == 3 else { throw .malformedRequestLine }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { throw .unsupportedVersion }

        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformedHeader }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
            guard !name.isEmpty, !name.contains(" ") else { throw .malformedHeader }
            let value = trimmed(String(decoding: line[line.index(after: colon)...], as: UTF8.self))
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }

        let target = parts[1]
        let questionMark = target.firstIndex(of: UInt8(ascii: "?"))
        let rawPath = target[target.startIndex..<(questionMark ?? target.endIndex)]
        var query: [String: String] = [:]
        if let questionMark {
            for pair in target[target.index(after: questionMark)...].split(separator: UInt8(ascii: "&")) {
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
                let name = percentDecoded(pair[pair.startIndex..<equals], plusIsSpace: true)
                let value =
                    equals == pair.endIndex
                    ? "" : percentDecoded(pair[pair.index(after: equals)...], plusIsSpace: true)
                if query[name] == nil { query[name] = value }
            }
        }
        return HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self),
            path: percentDecoded(rawPath, plusIsSpace: false),
            query: query,
            minorVersion: version == "HTTP/1.1" ? 1 : 0,
            headers: headers)
    }

    private static func trimmed(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// `%XX` escapes decoded as UTF-8; malformed escapes are kept literally.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), bytes.distance(from: index, to: bytes.endIndex) >= 3,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
                continue
            }
            output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

import Foundation

/// One parsed HTTP/1.x request head (the fixture reads and discards request bodies).
///
/// Header names are lowercased; repeated headers are joined with ", ". Query values are
/// percent-decoded, `+` meaning space.
///
/// ```swift
/// let head = Array("GET /image?exerciseId=0001 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
/// let request = try HTTPRequestParser.parse(head: head[...])
/// request.query["exerciseId"]   // "0001"
/// ```
struct HTTPRequest: Sendable, Equatable {
    var method: String
    /// Percent-decoded path without the query.
    var path: String
    var query: [String: String]
    /// Minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    var minorVersion: Int
    var headers: [String: String]

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Whether the client wants the connection kept open after the response.
    var wantsKeepAlive: Bool {
        let tokens = (header("connection") ?? "").lowercased().split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }

    /// Whether `Accept-Encoding` admits `coding` (a `q=0` parameter refuses it).
    func accepts(encoding coding: String) -> Bool {
        for entry in (header("accept-encoding") ?? "").split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == coding else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return quality.map { $0 > 0 } ?? true
        }
        return false
    }
}

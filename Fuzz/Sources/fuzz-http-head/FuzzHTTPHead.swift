import FuzzSupport
@testable import GifPackClient
@testable import GifPackIndexReader
@testable import GifPackFormat
@testable import GifPackHTTP
@testable import GifPackTransport

/// A response head as curl hands it over, line by line (status lines, fields, folded lines), the
/// header fields it yields, every field value as a Content-Range, and the client's judgement of a
/// range answer made of that head.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = Fuzz.bytes(data, size)
    var collector = ResponseHeadCollector()
    var start = 0
    while start < bytes.count {
        var end = start
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        end = min(bytes.count, end + 1)
        bytes[start..<end].withUnsafeBytes { collector.consume($0) }
        start = end
    }
    let head = HTTPResponseHead(status: collector.status, httpVersion: collector.httpVersion, headers: collector.headers)
    var headers = head.headers
    for (name, value) in head.headers {
        Fuzz.require(headers[name] != nil, "field \(name) not found by its own name")
        _ = headers.values(for: name.uppercased())
        if let range = HTTPContentRange(value) {
            Fuzz.require(HTTPContentRange(range.description) == range, "Content-Range \(range) does not parse back")
            if let bounds = range.range {
                Fuzz.require(bounds.lowerBound >= 0, "negative first byte")
                if let length = range.completeLength { Fuzz.require(bounds.upperBound < length, "range past the length") }
            }
        }
    }
    _ = head.headers.description
    var fields = head.headers.makeIterator()
    if let first = fields.next() { headers.remove(name: first.name) }
    _ = HTTPContentRange(String(decoding: bytes, as: UTF8.self))
    let pack = PackDescription(name: "p", version: 1, file: "packs/p-1.tar.zst", bytes: 5000, sha256: String(repeating: "0", count: 64),
                               entryCount: 1, uncompressedBytes: 1536, contentDigest: String(repeating: "0", count: 64),
                               catalog: EntryLocation(path: "catalog.json", size: 2, frameOffset: 0, frameLength: 10),
                               gifs: [], exercises: [])
    _ = RangeAnswer.judge(head, bodyBytes: 100, asked: 100...199, pack: pack, url: "http://127.0.0.1/p", etag: "\"e\"")
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzHTTPHead) }
}

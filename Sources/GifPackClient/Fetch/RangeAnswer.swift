import GifPackFormat
import GifPackTransport
import GifPackIndexReader

/// Judges the answer to one single-range request for bytes of a pack file.
///
/// A usable answer is a `206` whose `Content-Range` names exactly the bytes asked for, out of a
/// file of exactly the size the index gives, whose body is all there, and — when an earlier answer
/// for the same file carried an `ETag` — with that same `ETag`. A `200` means the server ignores
/// ranges (the caller may fall back to a whole download). Everything else is refused with a
/// reason a person can act on: a `416` or a different size means the pack is not the one the
/// index describes (the index changed after it was read); a `412` means the file changed between
/// two requests (`If-Match` failed).
///
/// ```swift
/// switch RangeAnswer.judge(download.head, bodyBytes: download.bytesWritten, asked: range, pack: pack,
///                          url: url, etag: firstETag) {
/// case .partial(let etag): …
/// case .rangeIgnored: …fall back
/// case .refused(let error): throw error
/// }
/// ```
enum RangeAnswer: Equatable {
    /// The bytes asked for; the answer's ETag if any.
    case partial(etag: String?)
    /// The server answered 200: it does not serve ranges.
    case rangeIgnored
    case refused(PackClientError)

    static func judge(
        _ head: HTTPResponseHead, bodyBytes: Int64, asked: ClosedRange<Int64>, pack: PackDescription,
        url: String, etag expectedETag: String?
    ) -> RangeAnswer {
        judge(head, bodyBytes: bodyBytes, asked: asked, fileBytes: pack.bytes, url: url, etag: expectedETag)
    }

    /// The same judgement for any file the index sizes (a pack or a posters pack): `fileBytes` is
    /// the size the index gives it.
    static func judge(
        _ head: HTTPResponseHead, bodyBytes: Int64, asked: ClosedRange<Int64>, fileBytes: Int64,
        url: String, etag expectedETag: String?
    ) -> RangeAnswer {
        let askedText = "bytes=\(asked.lowerBound)-\(asked.upperBound)"
        func refuse(_ detail: String) -> RangeAnswer { .refused(.unreadable(location: url, detail: detail)) }
        switch head.status {
        case 206:
            break
        case 200:
            return .rangeIgnored
        case 416:
            let length = head.headers["content-range"].flatMap { HTTPContentRange($0) }?.completeLength
            return refuse(
                "the server answers 416 Range Not Satisfiable to \(askedText)"
                    + (length.map { " (it holds \($0) bytes, the index says \(fileBytes))" } ?? "")
                    + ": the pack is not the one the index describes; the index changed after it was read — load it again")
        case 412:
            return refuse("the pack changed while it was being fetched (If-Match failed for \(askedText)); load the index again")
        default:
            return .refused(.status(head.status, of: url, context: " for \(askedText)"))
        }
        let field = head.headers["content-range"] ?? ""
        guard let served = HTTPContentRange(field) else {
            return refuse("the 206 answer to \(askedText) has no valid Content-Range (\"\(SafePath.printable(String(field.prefix(80))))\")")
        }
        guard served.range == asked else {
            return refuse("the server answered \(askedText) with Content-Range \(served): not the bytes asked for")
        }
        if let length = served.completeLength, length != fileBytes {
            return refuse("the file holds \(length) bytes, the index says \(fileBytes): the index changed after it was read — load it again")
        }
        guard bodyBytes == asked.upperBound - asked.lowerBound + 1 else {
            return refuse("the 206 answer to \(askedText) carried \(bodyBytes) bytes")
        }
        let etag = head.headers["etag"]
        if let expectedETag, let etag, etag != expectedETag {
            return refuse("the pack changed while it was being fetched (ETag \(SafePath.printable(expectedETag)) then \(SafePath.printable(etag))); load the index again")
        }
        return .partial(etag: etag)
    }

    /// `If-Match` for later requests of the same file: only a strong ETag can be matched.
    static func ifMatch(_ etag: String?) -> String? {
        guard let etag, etag.hasPrefix("\""), etag.count > 2 else { return nil }
        return etag
    }
}

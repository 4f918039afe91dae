import Foundation
import GifPackHTTP

/// The cheap checks made on a finished 200 response before the GIF is decoded: body sniffing,
/// content type, magic bytes. Returns the rejection reason and detail, or nil when the download may
/// go on to full validation.
enum ResponseChecks {
    static func problem(head: HTTPResponseHead, prefix: [UInt8], bytesWritten: Int64) -> (reason: RejectionReason, detail: String)? {
        if looksLikeHTML(prefix) {
            return (.htmlBody, "the body is an HTML page, not a GIF (content type \(head.contentType ?? "none"))")
        }
        guard let contentType = head.contentType else {
            return (.wrongContentType, "the response has no Content-Type; expected image/gif")
        }
        let mediaType =
            contentType.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
        guard mediaType == "image/gif" else {
            return (.wrongContentType, "Content-Type is \(contentType.prefix(100)); expected image/gif")
        }
        if bytesWritten == 0 {
            return (.truncated, "the body is empty")
        }
        let magic = prefix.prefix(6)
        guard magic.elementsEqual("GIF87a".utf8) || magic.elementsEqual("GIF89a".utf8) else {
            return (.notAGIF, "the body does not start with GIF87a or GIF89a")
        }
        return nil
    }

    /// True when the body starts (after whitespace or a UTF-8 BOM) with `<`, as HTML pages do.
    static func looksLikeHTML(_ prefix: [UInt8]) -> Bool {
        var bytes = prefix[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        return first == UInt8(ascii: "<")
    }

    /// True for the gateway's "monthly quota used up" 429 body.
    static func isMonthlyQuotaBody(_ prefix: [UInt8]) -> Bool {
        String(decoding: prefix, as: UTF8.self).lowercased().contains("monthly quota")
    }
}

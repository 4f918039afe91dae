import GifPackHTTP

/// The cheap checks made on a finished download before the GIF is decoded: status, body sniffing,
/// content type. Returns the rejection reason and detail, or nil when the download may go on to
/// full validation.
enum ResponseChecks {
    static func problem(with download: HTTPDownload) -> (reason: String, detail: String)? {
        let status = download.head.status
        if status != 200 {
            return ("http-\(status)", "the server answered HTTP \(status)")
        }
        if looksLikeHTML(download.prefix) {
            return ("html-body", "the body is an HTML page, not a GIF (content type \(download.head.contentType ?? "none"))")
        }
        guard let contentType = download.head.contentType else {
            return ("wrong-content-type", "the response has no Content-Type; expected image/gif")
        }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        } ?? ""
        guard mediaType == "image/gif" else {
            return ("wrong-content-type", "Content-Type is \(contentType.prefix(100)); expected image/gif")
        }
        if download.bytesWritten == 0 {
            return ("truncated", "the body is empty")
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
}

import Foundation

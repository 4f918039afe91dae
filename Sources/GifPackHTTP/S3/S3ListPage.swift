/// One page of a ListObjectsV2 answer, read from its XML with a small tolerant scanner: only the
/// `<Contents>` blocks' `<Key>` and `<Size>`, `<IsTruncated>` and `<NextContinuationToken>` are
/// looked at; anything else (namespaces, other elements, whitespace) is skipped.
///
/// ```swift
/// let page = S3ListPage(xml: "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a</Key><Size>3</Size></Contents></ListBucketResult>")
/// page.objects   // [S3Object(key: "a", size: 3)]
/// ```
package struct S3ListPage: Sendable, Equatable {
    package var objects: [S3Object]
    package var isTruncated: Bool
    package var nextContinuationToken: String?

    package init(xml: String) {
        objects = S3XML.blocks(named: "Contents", in: xml).compactMap { block in
            guard let key = S3XML.text(of: "Key", in: block) else { return nil }
            // A size that is not a whole number from 0 is unknown (nil), never a negative length.
            let size = S3XML.text(of: "Size", in: block).flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
            return S3Object(key: key, size: size)
        }
        isTruncated = S3XML.text(of: "IsTruncated", in: xml)?.lowercased() == "true"
        nextContinuationToken = S3XML.text(of: "NextContinuationToken", in: xml)
    }
}

/// An object named by a listing.
package struct S3Object: Sendable, Equatable {
    package var key: String
    package var size: Int64?

    package init(key: String, size: Int64?) {
        self.key = key
        self.size = size
    }
}

/// The `<Code>` and `<Message>` of an S3 error answer (empty when the body is not one).
///
/// ```swift
/// S3ErrorBody(xml: "<Error><Code>NoSuchBucket</Code></Error>").code   // "NoSuchBucket"
/// ```
package struct S3ErrorBody: Sendable, Equatable {
    package var code: String
    package var message: String

    package init(xml: String) {
        code = S3XML.text(of: "Code", in: xml) ?? ""
        message = S3XML.text(of: "Message", in: xml) ?? ""
    }
}

/// Just enough XML for S3's answers: element text by name (the first match), blocks by name,
/// entity decoding. Element names may carry a namespace prefix (`<s3:Key>`).
enum S3XML {
    static func blocks(named name: String, in xml: String) -> [Substring] {
        var result: [Substring] = []
        var rest = xml[...]
        while let open = openTag(name, in: rest) {
            guard let close = closeTag(name, in: rest[open.upperBound...]) else { break }
            result.append(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        return result
    }

    static func text(of name: String, in xml: some StringProtocol) -> String? {
        let xml = Substring(xml)
        guard let open = openTag(name, in: xml), let close = closeTag(name, in: xml[open.upperBound...]) else { return nil }
        return decodeEntities(String(xml[open.upperBound..<close.lowerBound])).trimmingWhitespace()
    }

    /// The range of `<name>` or `<prefix:name>` (attributes allowed), not of `<nameSuffix>`.
    private static func openTag(_ name: String, in xml: Substring) -> Range<Substring.Index>? {
        var searchFrom = xml.startIndex
        while let lt = xml[searchFrom...].firstIndex(of: "<") {
            guard let gt = xml[lt...].firstIndex(of: ">") else { return nil }
            let inside = xml[xml.index(after: lt)..<gt]
            let tagName = inside.prefix { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" && $0 != "/" }
            let local = tagName.split(separator: ":").last.map(String.init) ?? ""
            if !inside.hasPrefix("/"), !inside.hasPrefix("?"), !inside.hasPrefix("!"), local == name, !inside.hasSuffix("/") {
                return lt..<xml.index(after: gt)
            }
            searchFrom = xml.index(after: gt)
        }
        return nil
    }

    private static func closeTag(_ name: String, in xml: Substring) -> Range<Substring.Index>? {
        var searchFrom = xml.startIndex
        while let range = xml[searchFrom...].range(of: "</") {
            guard let gt = xml[range.upperBound...].firstIndex(of: ">") else { return nil }
            let tagName = xml[range.upperBound..<gt].trimmingWhitespace()
            if (tagName.split(separator: ":").last.map(String.init) ?? "") == name { return range.lowerBound..<xml.index(after: gt) }
            searchFrom = xml.index(after: gt)
        }
        return nil
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = rest[rest.index(after: amp)..<semi]
            let scalar: Unicode.Scalar? =
                switch entity {
                case "amp": "&"
                case "lt": "<"
                case "gt": ">"
                case "quot": "\""
                case "apos": "'"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                        UInt32(entity.dropFirst(2), radix: 16).flatMap { Unicode.Scalar($0) }
                    } else if entity.hasPrefix("#") {
                        UInt32(entity.dropFirst()).flatMap { Unicode.Scalar($0) }
                    } else {
                        nil
                    }
                }
            if let scalar { out.unicodeScalars.append(scalar) } else { out += rest[amp...semi] }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(String(self.drop(while: isSpace)).reversed().drop(while: isSpace).reversed())
    }
}

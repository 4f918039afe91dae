import FuzzSupport
@testable import GifPackHTTP

/// An S3 ListObjectsV2 answer and an S3 error body, as a bucket (or whatever answers in its place)
/// sends them: tags found by name, entities decoded.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzS3List(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let xml = String(decoding: Fuzz.bytes(data, size), as: UTF8.self)
    let page = S3ListPage(xml: xml)
    for object in page.objects { _ = object.key.utf8.count }
    _ = page.isTruncated
    _ = S3ErrorBody(xml: xml)
    _ = S3XML.decodeEntities(xml)
    for name in ["Contents", "Key", "Error"] { _ = S3XML.blocks(named: name, in: xml) }
    return 0
}

@main
enum FuzzMain {
    static func main() { Fuzz.run(fuzzS3List) }
}

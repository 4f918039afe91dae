import Foundation
@testable import GifPack
import GifPackHTTP
import Testing
@testable import GifPackTestSupport
@testable import GifPackTestServers

@Suite("S3: ListObjectsV2 and error bodies", .tags(.nginx), .timeLimit(.minutes(5)))
struct S3ListPageTests {
    @Test(.computes) func aSizeThatIsNotAWholeNumberFromZeroIsUnknown() {
        // Found by the s3-list fuzz target: a negative <Size> was taken as a length.
        let xml =
            "<ListBucketResult><Contents><Key>a</Key><Size>-5</Size></Contents><Contents><Key>b</Key><Size>1.5</Size></Contents>"
            + "<Contents><Key>c</Key><Size>99999999999999999999</Size></Contents><Contents><Key>d</Key><Size>0</Size></Contents></ListBucketResult>"
        #expect(
            S3ListPage(xml: xml).objects == [
                S3Object(key: "a", size: nil), S3Object(key: "b", size: nil),
                S3Object(key: "c", size: nil), S3Object(key: "d", size: 0)
            ])
    }

    @Test(.computes) func listingsAreReadWhateverTheNamespaceSpacingAndEntities() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Name>cdn</Name><Prefix>gifpack/packs/</Prefix><KeyCount>2</KeyCount>
              <IsTruncated>true</IsTruncated>
              <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=&amp;x</NextContinuationToken>
              <Contents>
                <Key>gifpack/packs/all-v1-1a2b3c4d.tar.zst</Key><LastModified>2026-11-23T10:00:00.000Z</LastModified>
                <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>107248349</Size><StorageClass>STANDARD</StorageClass>
              </Contents>
              <Contents><Key>gifpack/packs/a&amp;b &#x3C;c&#62;.txt</Key><Size>3</Size></Contents>
              <Contents><Size>4</Size></Contents>
            </ListBucketResult>
            """
        let page = S3ListPage(xml: xml)
        #expect(
            page.objects == [
                S3Object(key: "gifpack/packs/all-v1-1a2b3c4d.tar.zst", size: 107_248_349),
                S3Object(key: "gifpack/packs/a&b <c>.txt", size: 3)
            ])
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=&x")

        let prefixed = S3ListPage(xml: "<s3:ListBucketResult><s3:IsTruncated>false</s3:IsTruncated><s3:Contents><s3:Key>k</s3:Key></s3:Contents></s3:ListBucketResult>")
        #expect(prefixed.objects == [S3Object(key: "k", size: nil)] && !prefixed.isTruncated && prefixed.nextContinuationToken == nil)
        // Garbage and cut-off bodies give an empty page, never a crash.
        for broken in ["", "<Contents><Key>a", "not xml at all", "<Contents><Key>&#xFFFFFFFF;</Key></Contents>", "<<<>>>"] {
            #expect(S3ListPage(xml: broken).objects.count <= 1)
        }
        #expect(
            S3ErrorBody(xml: "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>")
                == S3ErrorBody(xml: "<Error>\n <Code>NoSuchBucket</Code>\n <Message>The specified bucket does not exist</Message></Error>"))
        #expect(S3ErrorBody(xml: "<Error><Code>SignatureDoesNotMatch</Code></Error>").code == "SignatureDoesNotMatch")
    }

    @Test(.computes) func keysArePercentEncodedAsSigV4WantsThem() {
        #expect(S3Bucket.encode("gifpack/packs/all-v1-1a2b3c4d.tar.zst", keepSlash: true) == "gifpack/packs/all-v1-1a2b3c4d.tar.zst")
        #expect(S3Bucket.encode("a b+c/é~", keepSlash: false) == "a%20b%2Bc%2F%C3%A9~")
    }

    /// A ListObjectsV2 page with these keys under `gifpack/packs/`.
    static func listing(_ count: Int, truncated: Bool = false, token: String? = nil, padding: Int = 0) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult><IsTruncated>\(truncated)</IsTruncated>"
        if let token { xml += "<NextContinuationToken>\(token)</NextContinuationToken>" }
        for number in 0..<count { xml += "<Contents><Key>gifpack/packs/all-v\(number + 1)-0123abcd.tar.zst</Key><Size>10</Size></Contents>" }
        return xml + String(repeating: " ", count: padding) + "</ListBucketResult>\n"
    }

    /// Real HTTP (nginx answering every path with `list.xml`): a page too large, with more keys than
    /// asked, or a listing that never ends is refused with the reason; a sound page is read.
    @Test func listPagesAreBoundedInBytesKeysAndPages() async throws {
        let workspace = try TemporaryDirectory()
        let nginx = try await NginxServer.start(.init(root: workspace.path, everyPathServes: "list.xml"))
        defer { nginx.stop() }
        let http = try GifPackHTTP.HTTPClient(maxConnections: 1)
        defer { http.shutdown() }
        let target = try S3Target(
            bucket: "cdn", prefix: "gifpack/", endpoint: nginx.baseURL,
            environment: ["AWS_ACCESS_KEY_ID": "AKIAGIFPACKTEST00001", "AWS_SECRET_ACCESS_KEY": "secret"], client: http)
        func serve(_ xml: String) throws { try xml.write(toFile: workspace.file("list.xml"), atomically: true, encoding: .utf8) }
        func refusal() async -> String {
            do {
                let keys = try await target.listPackKeys()
                return "listed \(keys.count) keys"
            } catch {
                return error.description
            }
        }

        try serve(Self.listing(3))
        #expect(try await target.listPackKeys() == (1...3).map { "packs/all-v\($0)-0123abcd.tar.zst" })
        let mark = try await nginx.mark()
        _ = try await target.listPackKeys()
        #expect(try await nginx.log(since: mark).first?.path.contains("max-keys=1000") == true, "the page size is asked for")

        try serve(Self.listing(1, padding: Int(S3Bucket.maxListPageBytes)))
        let tooLarge = await refusal()
        #expect(tooLarge.contains("larger than \(S3Bucket.maxListPageBytes) bytes") && tooLarge.contains("s3://cdn/gifpack/"), "\(tooLarge)")

        try serve(Self.listing(S3Bucket.maxListPageKeys + 1))
        let tooMany = await refusal()
        #expect(tooMany.contains("holds \(S3Bucket.maxListPageKeys + 1) keys"), "\(tooMany)")

        // Truncated with the same token every time: stopped at the second page, not looped forever.
        try serve(Self.listing(2, truncated: true, token: "again"))
        let endless = await refusal()
        #expect(endless.contains("same continuation token"), "\(endless)")
    }
}
